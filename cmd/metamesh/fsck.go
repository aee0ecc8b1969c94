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
index, field index, own digests) and print each violation. Exit status 1 when
there is one. With --repair, first rebuild the derived indexes from the keys
themselves: fields other programs wrote under file:<root>/ while no node ran
are listed, listed fields whose key is gone are dropped, file:<root>/cids/<cid>
keys join the key-set with their alias, every path is back in the path index,
and keys of roots that no longer exist are deleted. Uses --redis-url, or the
managed redis-server of --data when no URL is given: the one of the node
running on it (then a violation is reported only when a second check a second
later finds it too, and --repair is refused: stop the node first), else one it
starts. A data directory that holds no node is an error; nothing is created. Prints the store's layout version first; a
store of an older layout is upgraded in place before it is checked.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := logger(cmd, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			cfg := node.Config{Logger: log}
			cfg.RedisURL, _ = cmd.Flags().GetString("redis-url")
			cfg.DataDir, _ = cmd.Flags().GetString("data")
			repair, _ := cmd.Flags().GetBool("repair")
			res, err := node.Fsck(cmd.Context(), cfg, repair)
			if err != nil {
				return err
			}
			v, rep := res.Violations, res.Repaired
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				if v == nil {
					v = []store.Violation{} // an empty list, not null
				}
				out := map[string]any{"violations": v, "ok": len(v) == 0, "layout": res.Layout, "live": res.Live}
				if rep != nil {
					out["repaired"] = rep
				}
				if err := json.NewEncoder(cmd.OutOrStdout()).Encode(out); err != nil {
					return err
				}
			} else {
				if res.Live {
					fmt.Fprintf(cmd.OutOrStdout(), "checking the store of the node running on %s\n", dataDir(cmd))
				}
				fmt.Fprintf(cmd.OutOrStdout(), "store layout %d\n", res.Layout)
				if rep != nil {
					fmt.Fprintf(cmd.OutOrStdout(), "repaired: %d fields listed, %d unlisted, %d keys of deleted roots removed, %d paths re-indexed, %d invalid key-set members left\n",
						rep.Listed, rep.Unlisted, rep.Deleted, rep.Paths, rep.Invalid)
				}
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
	c.Flags().Bool("repair", false, "rebuild the derived indexes first (see above)")
	return c
}

// storeFlags adds --redis-url and --data.
func storeFlags(c *cobra.Command) {
	c.Flags().String("redis-url", "", "Redis URL; empty starts a managed redis-server under --data (env METAMESH_REDIS_URL)")
	dataFlag(c)
}
