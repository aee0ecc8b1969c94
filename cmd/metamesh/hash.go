package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/ingest"
)

// hashLine is one line of "metamesh hash". JSON strings are UTF-8, so a
// file name that is not valid UTF-8 cannot travel in path unchanged (each
// invalid byte becomes U+FFFD); pathBytes then carries the exact name.
type hashLine struct {
	ingest.FileHashes
	PathBytes []byte `json:"pathBytes,omitempty"` // base64 (standard, padded)
}

func newHashCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "hash FILE|DIR...",
		Short: "Print the CIDs of files, one JSON line each (a directory's files, walked)",
		Long: `Print one JSON line per file: path, size, midhash256, sha2-256, ipfs (the
CID "ipfs add --cid-version=1" prints) and canonical (the one a node announces).

JSON text is UTF-8. When a file name is not valid UTF-8, path shows it with
each invalid byte replaced by U+FFFD, and pathBytes holds the exact name,
base64-encoded (standard alphabet, padded). pathBytes is absent whenever path
is exact.

A directory is walked as the node walks a library: every regular file
below it, in byte order of the paths, a symbolic link to a file as that
file, hidden names and partial downloads (.part, .crdownload, …) left out,
and neither symbolic links to directories nor anything but regular files
followed. Given by name, only regular files are hashed (symbolic links are
followed); FIFOs, devices and sockets are refused without being opened. Files that cannot be
read are reported on stderr and make the exit status 1. Ctrl-C (SIGINT) or
SIGTERM stops the hashing at once.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			enc := json.NewEncoder(cmd.OutOrStdout())
			failed := 0
			var paths []string
			for _, p := range args {
				if fi, err := os.Stat(p); err == nil && fi.IsDir() {
					files, err := walkFiles(p)
					if err != nil {
						fmt.Fprintln(cmd.ErrOrStderr(), "metamesh hash:", err)
						failed++
					}
					paths = append(paths, files...)
					continue
				}
				paths = append(paths, p)
			}
			for _, p := range paths {
				if ctx.Err() != nil {
					return context.Cause(ctx)
				}
				h, err := ingest.HashFile(ctx, p)
				if err != nil && ctx.Err() != nil {
					return fmt.Errorf("hash %s: %w", p, context.Cause(ctx))
				}
				if err != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "metamesh hash:", err)
					failed++
					continue
				}
				line := hashLine{FileHashes: h}
				if !utf8.ValidString(p) {
					line.PathBytes = []byte(p)
				}
				if err := enc.Encode(line); err != nil {
					return err
				}
			}
			if failed > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d of %d files could not be hashed", failed, len(paths))}
			}
			return nil
		},
	}
}

// walkFiles lists the files below dir the way the node ingests a library
// (ingest.Skipped names left out, symbolic links to files taken, to
// directories not descended), in byte order. An entry that cannot be read
// is an error; what was listed before it is still returned.
func walkFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && ingest.Skipped(p) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.Type().IsRegular():
			out = append(out, p)
		case d.Type()&fs.ModeSymlink != 0:
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				out = append(out, p)
			}
		}
		return nil
	})
	return out, err
}
