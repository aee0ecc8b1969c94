package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/node"
)

func newRunCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "run --library DIR [--library DIR...]",
		Short: "Run a node: ingest and watch the libraries, serve the HTTP API",
		Long: `Run a node on one or more library directories. Without --redis-url it starts
and supervises its own redis-server with append-only persistence under
DATA/redis. Every flag also reads an environment variable (METAMESH_LIBRARY,
METAMESH_DATA, METAMESH_REDIS_URL, METAMESH_API, ...); list variables are
comma-separated.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := nodeConfig(cmd)
			if err != nil {
				return err
			}
			cfg.APIAddr, _ = cmd.Flags().GetString("api")
			return node.Run(cmd.Context(), cfg)
		},
	}
	libraryFlags(c)
	c.Flags().String("api", node.DefaultAPIAddr, "HTTP API listen address (env METAMESH_API)")
	return c
}

// libraryFlags adds the flags of commands that ingest.
func libraryFlags(c *cobra.Command) {
	c.Flags().StringArray("library", nil, "library directory to ingest; repeat for more (env METAMESH_LIBRARY, comma-separated)")
	storeFlags(c)
	c.Flags().Int("workers", 0, "concurrent hashing workers (default: number of CPUs; env METAMESH_WORKERS)")
	c.Flags().Duration("settle", 2*time.Second, "how long a file must be unchanged before it is hashed (env METAMESH_SETTLE)")
}

func nodeConfig(cmd *cobra.Command) (node.Config, error) {
	log, err := logger(cmd, os.Stderr)
	if err != nil {
		return node.Config{}, err
	}
	cfg := node.Config{Logger: log}
	cfg.Libraries, _ = cmd.Flags().GetStringArray("library")
	cfg.DataDir, _ = cmd.Flags().GetString("data")
	cfg.RedisURL, _ = cmd.Flags().GetString("redis-url")
	cfg.Workers, _ = cmd.Flags().GetInt("workers")
	cfg.Settle, _ = cmd.Flags().GetDuration("settle")
	return cfg, nil
}
