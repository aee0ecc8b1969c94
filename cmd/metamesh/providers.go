package main

import (
	"fmt"
	"net/url"
	"time"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/api"
)

func newProvidersCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "providers CID",
		Short: "List the peers the DHT returns as providers of a CID (announced CIDs only)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ans, raw, err := apiGetJSON[api.ProvidersAnswer](cmd, "/api/providers/"+url.PathEscape(args[0]), time.Minute)
			if err != nil {
				return jsonError(cmd, raw, err)
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			if len(ans.Providers) == 0 {
				why := ""
				// A node alone has no DHT to ask: say so, not just "none".
				if st, _, err := apiGetJSON[api.Status](cmd, "/api/status", 10*time.Second); err == nil && st.Peers == 0 {
					why = " (the node has no peers: the DHT has no one to ask yet)"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "no providers found for %s%s\n", args[0], why)
			}
			for _, p := range ans.Providers {
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			return nil
		},
	}
	apiFlag(c)
	return c
}
