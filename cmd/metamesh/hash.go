package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/protocol"
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

// cidOrFile is the CID a command's argument stands for: the argument
// itself when it is a CID; else, when it names a file, the file's
// canonical CID, hashed as metamesh hash hashes a file given by name (a
// user holding the file need not hash it first), said on stderr. An
// argument that is neither is refused in words that say so and point at
// metamesh hash, with exit status 2.
func cidOrFile(cmd *cobra.Command, arg string) (string, error) {
	_, cerr := protocol.Normalize(arg)
	if cerr == nil || arg == "" {
		return arg, nil // "" is the caller's to refuse, as an empty CID
	}
	fi, err := os.Stat(arg)
	switch {
	case err == nil && fi.IsDir():
		return "", &exitError{code: 2, err: fmt.Errorf("%s is a directory: give one file or a CID (metamesh hash %s prints the CIDs of its files)", arg, arg)}
	case err == nil:
		h, err := ingest.HashFile(cmd.Context(), arg)
		if ctx := cmd.Context(); err != nil && ctx.Err() != nil {
			return "", fmt.Errorf("hash %s: %w", arg, context.Cause(ctx))
		}
		if err != nil {
			return "", err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "hashed %s: %s\n", arg, h.Canonical)
		return h.Canonical, nil
	case pathLike(arg):
		// Meant as a file: what is wrong with it says more than why it
		// is not a CID.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = fmt.Errorf("%s: %w", pe.Path, pe.Err)
		}
		return "", &exitError{code: 2, err: fmt.Errorf("%w, and it is not a CID: give a file's path or a CID (metamesh hash FILE prints a file's CIDs)", err)}
	}
	return "", &exitError{code: 2, err: fmt.Errorf("%w; nor is it a file here (metamesh hash FILE prints a file's CIDs)", badCID(arg, cerr))}
}

// pathLike reports whether s reads as a file's path rather than a
// mistyped CID: it has a directory or an extension in it, or starts with
// a dot or a tilde.
func pathLike(s string) bool {
	return strings.ContainsRune(s, os.PathSeparator) || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "~") || filepath.Ext(s) != ""
}
