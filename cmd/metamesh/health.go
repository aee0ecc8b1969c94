package main

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"
)

// newHealthCmd is the container health check: a scratch image has no curl,
// so the binary asks its own node's /ready and exits 0 or 1.
func newHealthCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "health",
		Short: "Exit 0 when the running node is ready (GET /ready answers 200), else 1",
		Long: `Ask a running node's GET /ready: exit 0 once Redis answers and the initial
scan is done, 1 otherwise (not ready, not reachable). Meant for a container
HEALTHCHECK; /ready needs no token, so no --api-token-file is needed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			base, _, from, err := nodeAPI(cmd)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			timeout, _ := cmd.Flags().GetDuration("timeout")
			resp, err := (&http.Client{Timeout: timeout}).Get(base + "/ready")
			if err != nil {
				return &exitError{code: 1, err: fmt.Errorf("cannot reach the node at %s (%s): %w", base, from, err)}
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
			if resp.StatusCode != http.StatusOK {
				return &exitError{code: 1, err: fmt.Errorf("%s: not ready (%s)", base, resp.Status)}
			}
			fmt.Fprintln(cmd.OutOrStdout(), "ready")
			return nil
		},
	}
	apiAddrFlag(c)
	c.Flags().Duration("timeout", 3*time.Second, "how long to wait for the answer")
	return c
}
