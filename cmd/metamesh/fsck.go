package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/node"
	"github.com/metamesh/node/store"
)

func newFsckCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "fsck",
		Short: "Check every store invariant; exit 1 on a violation",
		Long: `Check every invariant of the Redis schema (aliases, key-sets, index, path
index, field index) and print each violation. Exit status 1 when there is one.
Uses --redis-url, or the managed redis-server of --data when no URL is given
(stop the node first: one managed server per data directory).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := logger(cmd, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			cfg := node.Config{Logger: log}
			cfg.RedisURL, _ = cmd.Flags().GetString("redis-url")
			cfg.DataDir, _ = cmd.Flags().GetString("data")
			v, err := node.Fsck(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				if v == nil {
					v = []store.Violation{} // an empty list, not null
				}
				if err := json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]any{"violations": v, "ok": len(v) == 0}); err != nil {
					return err
				}
			} else {
				for _, x := range v {
					fmt.Fprintln(cmd.OutOrStdout(), x)
				}
				if len(v) == 0 {
					fmt.Fprintln(cmd.OutOrStdout(), "ok: no violations")
				}
			}
			if len(v) > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d violations", len(v))}
			}
			return nil
		},
	}
	storeFlags(c)
	c.Flags().Bool("json", false, "print JSON")
	return c
}

// storeFlags adds --redis-url and --data.
func storeFlags(c *cobra.Command) {
	c.Flags().String("redis-url", "", "Redis URL; empty starts a managed redis-server under --data (env METAMESH_REDIS_URL)")
	c.Flags().String("data", "", "data directory (default $HOME/.local/share/metamesh; env METAMESH_DATA)")
}
