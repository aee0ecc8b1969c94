package main

import (
	"fmt"
	"io"
	"math"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/store"
)

func newLookupCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "lookup CID|FILE",
		Short: "Print what a file is, by any of its CIDs or by the file itself, from this node or its peers",
		Long: `Ask the running node for the file a CID names: its own files, then the
federation (the DHT's providers, then its peers). Given a file instead of a
CID, it hashes the file as metamesh hash does (all of it: a large film takes
a while) and asks for its canonical CID, which it says on stderr ("hashed
FILE: CID").

Prints what the file is: its title (an episode as "Show · S01E02 ·
Episode"), year, runtime, size, first video and audio streams, its path (or
the peer it came from), its canonical CID, its providers and how many CIDs
it has. A peer is shown by the household name it claims and the end of its
peer ID ("Alice's NAS (…YZ2fvJ)"), or, when it sent no name, by its
abbreviated peer ID (--json has the whole IDs). --json prints the node's whole document as it is (every CID and
metadata field, the exact bytes of a path that is not UTF-8). --local skips
the federation. Exit status 3 when no one has the file, 2 for an argument
that is neither a CID nor a file.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := cidOrFile(cmd, args[0])
			if err != nil {
				return err
			}
			path := "/api/meta/" + url.PathEscape(c)
			if l, _ := cmd.Flags().GetBool("local"); l {
				path += "?local=1"
			}
			doc, raw, err := apiGetJSON[api.Document](cmd, path, time.Minute)
			if err != nil {
				return jsonError(cmd, raw, err)
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			return printDocument(cmd.OutOrStdout(), doc)
		},
	}
	apiFlag(c)
	c.Flags().Bool("local", false, "answer from this node only")
	return c
}

// printDocument writes the readable output of metamesh lookup: what a
// household asks of a file, one line each, in one column of names: its
// title (a show's episode as "Show · S01E02 · Episode"), year, runtime,
// size, first video and audio streams, where it is (its path, or the peer
// it came from), its canonical CID, its providers and how many CIDs it
// has. The title, year, episode and size follow the node's own rules
// (store.SummaryOfFields), read from the document's metadata flattened
// back into the store's fields; --json has all of it.
func printDocument(out io.Writer, doc api.Document) error {
	f := api.FlattenMeta(doc.Meta)
	if doc.FilePath != "" {
		f["filePath"] = doc.FilePath
	}
	sum := store.SummaryOfFields(f)
	w := tabwriter.NewWriter(out, 10, 0, 1, ' ', 0)
	if sum.Title != "" {
		fmt.Fprintf(w, "title\t%s\n", titleLine(sum))
	}
	if sum.Year > 0 {
		fmt.Fprintf(w, "year\t%d\n", sum.Year)
	}
	if d, err := strconv.ParseFloat(f["fileinfo/duration"], 64); err == nil && d > 0 {
		fmt.Fprintf(w, "runtime\t%s\n", runtimeText(d))
	}
	if sum.Size > 0 {
		fmt.Fprintf(w, "size\t%s\n", humanSize(sum.Size))
	}
	if v := videoLine(f); v != "" {
		fmt.Fprintf(w, "video\t%s\n", v)
	}
	if a := audioLine(f); a != "" {
		fmt.Fprintf(w, "audio\t%s\n", a)
	}
	switch {
	case f["filePath"] != "":
		fmt.Fprintf(w, "path\t%s\n", validUTF8(f["filePath"]))
	case doc.Source != "" && doc.Source != "local":
		fmt.Fprintf(w, "source\tpeer %s\n", peerLabel(doc.Source, doc.PeerNames[doc.Source]))
	}
	for _, d := range doc.Duplicates {
		fmt.Fprintf(w, "also at\t%s\n", validUTF8(d))
	}
	if more := doc.DuplicateCount - int64(len(doc.Duplicates)); more > 0 {
		fmt.Fprintf(w, "also at\t%d more paths\n", more)
	}
	fmt.Fprintf(w, "canonical\t%s\n", doc.CanonicalCID)
	for _, p := range doc.Providers {
		fmt.Fprintf(w, "provider\t%s\n", peerLabel(p, doc.PeerNames[p]))
	}
	if doc.Providers != nil && len(doc.Providers) == 0 {
		fmt.Fprintf(w, "provider\tnone known\n")
	}
	cids := strconv.Itoa(len(doc.CIDs))
	switch n := len(doc.Learned); {
	case n > 0 && n == len(doc.CIDs):
		cids += " (all learned from peers)"
	case n > 0:
		cids += fmt.Sprintf(" (%d learned from peers)", n)
	}
	fmt.Fprintf(w, "cids\t%s\n", cids)
	if len(doc.Edited) > 0 {
		fmt.Fprintf(w, "edited\t%s\n", strings.Join(doc.Edited, ", "))
	}
	return w.Flush()
}

// titleLine is a file's title as lookup shows it: an episode's as its
// show's title, its season and episode mark and its own title, apart.
func titleLine(s store.Summary) string {
	parts := []string{s.Title}
	switch {
	case s.Season != nil && s.Episode != nil:
		parts = append(parts, fmt.Sprintf("S%02dE%02d", *s.Season, *s.Episode))
	case s.Season != nil:
		parts = append(parts, fmt.Sprintf("S%02d", *s.Season))
	case s.Episode != nil:
		parts = append(parts, fmt.Sprintf("E%02d", *s.Episode))
	}
	if s.EpisodeTitle != "" {
		parts = append(parts, s.EpisodeTitle)
	}
	return strings.Join(parts, " · ")
}

// runtimeText writes a duration in seconds as a film's is written: "2 h 4
// min", "24 min", and a short clip's in seconds.
func runtimeText(sec float64) string {
	if sec < 59.5 {
		return fmt.Sprintf("%d s", max(int(math.Round(sec)), 1))
	}
	m := int(math.Round(sec / 60))
	switch h, m := m/60, m%60; {
	case h > 0 && m > 0:
		return fmt.Sprintf("%d h %d min", h, m)
	case h > 0:
		return fmt.Sprintf("%d h", h)
	default:
		return fmt.Sprintf("%d min", m)
	}
}

// videoLine is the first video stream's resolution and codec, as far as
// they are known; "" when neither is.
func videoLine(f map[string]string) string {
	const v = "fileinfo/streamdetails/video/0/"
	var parts []string
	if w, h := f[v+"width"], f[v+"height"]; w != "" && h != "" {
		parts = append(parts, w+"×"+h)
	}
	if c := f[v+"codec"]; c != "" {
		parts = append(parts, c)
	}
	return strings.Join(parts, ", ")
}

// audioLine is the first audio stream's language and channels, as far as
// they are known; "" when neither is.
func audioLine(f map[string]string) string {
	const a = "fileinfo/streamdetails/audio/0/"
	var parts []string
	if l := f[a+"language"]; l != "" {
		parts = append(parts, l)
	}
	if n, err := strconv.Atoi(f[a+"channels"]); err == nil && n > 0 {
		parts = append(parts, plural(n, "channel"))
	}
	return strings.Join(parts, ", ")
}

// validUTF8 is s with every byte that is not UTF-8 as U+FFFD, as the
// node's JSON shows it (--json has its exact bytes, filePathBytes).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r) // utf8.RuneError for an invalid byte, n == 1
		i += n
	}
	return b.String()
}
