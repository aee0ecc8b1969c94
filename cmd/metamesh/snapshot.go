package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/store"
)

func newExportCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "export FILE",
		Short: "Write the running node's metadata to FILE as a snapshot, to back it up or move it",
		Long: `Write the household's metadata, as the running node holds it, to FILE: a
snapshot (gzip'd JSON lines, docs/schema.md) of every file's fields, CIDs
and paths, and what peers said of them unless --local-only. The node's
identity key is never in it. FILE is written whole or not at all: the
snapshot goes to a temporary file beside it, is checked (its trailer's
count and SHA-256) and only then renamed to FILE.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			localOnly, _ := cmd.Flags().GetBool("local-only")
			p := "/api/snapshot"
			if localOnly {
				p += "?local_only=1"
			}
			roots, err := exportTo(cmd, p, args[0])
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d files\n", args[0], roots)
			return err
		},
	}
	c.Flags().Bool("local-only", false, "leave out what peers said: files known only from peers, their claims and CIDs")
	apiTokenFlag(c)
	apiAddrFlag(c)
	return c
}

// exportTo fetches the snapshot at path into file through a temporary
// file beside it, checked before it is renamed; returns its roots.
func exportTo(cmd *cobra.Command, path, file string) (int, error) {
	req, base, from, err := apiRequest(cmd.Context(), cmd, http.MethodGet, path)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, unreachable(base, from, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, errorAnswer(resp)
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return 0, err
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // fails once renamed
	_, err = io.Copy(tmp, resp.Body)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	roots, err := checkSnapshot(tmp.Name())
	if err != nil {
		return 0, fmt.Errorf("export: the node's snapshot did not check out (nothing written to %s): %w", file, err)
	}
	return roots, os.Rename(tmp.Name(), file)
}

// checkSnapshot reads a snapshot file whole and returns its roots.
func checkSnapshot(file string) (int, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sr, err := store.NewSnapshotReader(f)
	if err != nil {
		return 0, err
	}
	for {
		if _, err := sr.Next(); errors.Is(err, io.EOF) {
			return sr.Roots(), nil
		} else if err != nil {
			return 0, err
		}
	}
}

// errorAnswer is the node's error answer resp as an error.
func errorAnswer(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var e struct {
		Error string `json:"error"`
	}
	_ = decodeJSON(raw, &e)
	return answerError(resp, e.Error)
}

func newImportCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "import FILE",
		Short: "Read a snapshot (metamesh export) into the running node's store",
		Long: `Read the snapshot FILE into the running node's store. The whole file is
checked first (its header, every line, the trailer's count and SHA-256):
a truncated or altered file is refused, naming the line, and nothing is
written. Then it is applied file by file; an import that is stopped half
way is finished by running it again.

By default the snapshot is merged: files the store lacks are added, and
a file it has gains only what it lacks (fields without a value, CIDs,
paths, peers' claims): none of its values is overwritten. --replace makes
the store hold exactly the snapshot's files: others are removed.
--dry-run prints what would be added, changed and removed and writes
nothing. --map-path OLD=NEW (repeatable) moves the snapshot's paths under
OLD to NEW, for a library that lives elsewhere on this machine; the next
scan confirms the paths (a file that is not there leaves the store).`,
		Args: cobra.ExactArgs(1),
		RunE: runImport,
	}
	c.Flags().Bool("replace", false, "make the store hold exactly the snapshot's files (remove the others)")
	c.Flags().Bool("dry-run", false, "print what the import would do; write nothing")
	c.Flags().StringArray("map-path", nil, "OLD=NEW: move the snapshot's paths under OLD to NEW (repeatable)")
	apiFlag(c)
	return c
}

func runImport(cmd *cobra.Command, args []string) error {
	q := url.Values{}
	if r, _ := cmd.Flags().GetBool("replace"); r {
		q.Set("mode", "replace")
	}
	if d, _ := cmd.Flags().GetBool("dry-run"); d {
		q.Set("dry_run", "1")
	}
	maps, _ := cmd.Flags().GetStringArray("map-path")
	for _, m := range maps {
		if o, n, ok := strings.Cut(m, "="); !ok || !filepath.IsAbs(o) || !filepath.IsAbs(n) {
			return usageError(cmd, fmt.Errorf("--map-path %q: want OLD=NEW, both absolute paths", m))
		}
		q.Add("map_path", m)
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	p := "/api/snapshot"
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	req, base, from, err := apiRequest(cmd.Context(), cmd, http.MethodPost, p)
	if err != nil {
		return err
	}
	req.Body, req.ContentLength = f, -1
	if fi, err := f.Stat(); err == nil {
		req.ContentLength = fi.Size()
	}
	req.Header.Set("Content-Type", "application/gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return unreachable(base, from, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	var rep api.SnapshotReport
	var e struct {
		Error string `json:"error"`
	}
	if resp.StatusCode != http.StatusOK {
		_ = decodeJSON(raw, &e)
		return jsonError(cmd, raw, answerError(resp, e.Error))
	}
	if j, _ := cmd.Flags().GetBool("json"); j {
		return printJSON(cmd, raw)
	}
	if err := decodeJSON(raw, &rep); err != nil {
		return fmt.Errorf("the node's answer to the import: %w", err)
	}
	return printImport(cmd.OutOrStdout(), args[0], rep)
}

// printImport writes what an import did, or would do.
func printImport(w io.Writer, file string, r api.SnapshotReport) error {
	verb := "imported"
	if r.DryRun {
		verb = "dry run, nothing written: would import"
	}
	removed := ""
	if r.Mode == "replace" {
		removed = fmt.Sprintf(", %d removed", r.Removed)
	}
	_, err := fmt.Fprintf(w, "%s %s (%s, %d files): %d added, %d changed, %d unchanged%s\n",
		verb, file, r.Mode, r.Roots, r.Added, r.Changed, r.Unchanged, removed)
	return err
}
