package main

import (
	"context"
	"encoding/json"
	"fmt"
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
		Use:   "hash FILE...",
		Short: "Print the CIDs of files, one JSON line each",
		Long: `Print one JSON line per file: path, size, midhash256, sha2-256, ipfs (the
CID "ipfs add --cid-version=1" prints) and canonical (the one a node announces).

JSON text is UTF-8. When a file name is not valid UTF-8, path shows it with
each invalid byte replaced by U+FFFD, and pathBytes holds the exact name,
base64-encoded (standard alphabet, padded). pathBytes is absent whenever path
is exact.

Only regular files are hashed (symbolic links are followed); FIFOs, devices,
sockets and directories are refused without being opened. Files that cannot be
read are reported on stderr and make the exit status 1. Ctrl-C (SIGINT) or
SIGTERM stops the hashing at once.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			enc := json.NewEncoder(cmd.OutOrStdout())
			failed := 0
			for _, p := range args {
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
				return &exitError{code: 1, err: fmt.Errorf("%d of %d files could not be hashed", failed, len(args))}
			}
			return nil
		},
	}
}
