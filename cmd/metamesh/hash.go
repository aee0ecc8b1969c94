package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/ingest"
)

func newHashCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "hash FILE...",
		Short: "Print the CIDs of files, one JSON line each",
		Long: `Print one JSON line per file: path, size, midhash256, sha2-256, ipfs (the
CID "ipfs add --cid-version=1" prints) and canonical (the one a node announces).
Files that cannot be read are reported on stderr and make the exit status 1.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			enc := json.NewEncoder(cmd.OutOrStdout())
			failed := 0
			for _, p := range args {
				h, err := ingest.HashFile(cmd.Context(), p)
				if err != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "metamesh hash:", err)
					failed++
					continue
				}
				if err := enc.Encode(h); err != nil {
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
