package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/protocol"
)

func newCIDCmd() *cobra.Command {
	c := &cobra.Command{Use: "cid", Short: "Inspect and rank CIDs"}
	inspect := &cobra.Command{
		Use:   "inspect CID",
		Short: "Print a CID's version, codec, multihash, digest length, tier and rank",
		Long: `Print a CID's version, codec, multihash, digest length, tier and rank.
Any valid CID is accepted; "normalized" is its canonical form (CIDv1, base32).
Rank is strict: only the canonical form ranks, so a CIDv0 text ranks 0 while
its normalized form may rank 40. Exit status 2 for an invalid CID.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			info, err := protocol.Inspect(args[0])
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(info)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "cid\t%s\n", info.Input)
			fmt.Fprintf(tw, "normalized\t%s\n", info.Normalized)
			fmt.Fprintf(tw, "version\t%d\n", info.Version)
			fmt.Fprintf(tw, "codec\t%s (0x%x)\n", info.Codec, info.CodecCode)
			fmt.Fprintf(tw, "multihash\t%s (0x%x)\n", info.Multihash, info.MultihashCode)
			fmt.Fprintf(tw, "digest length\t%d\n", info.DigestLength)
			fmt.Fprintf(tw, "tier\t%s\n", info.Tier)
			fmt.Fprintf(tw, "rank\t%d\n", info.Rank)
			if info.NormalizedRank != info.Rank {
				fmt.Fprintf(tw, "normalized rank\t%d\n", info.NormalizedRank)
			}
			return tw.Flush()
		},
	}
	inspect.Flags().Bool("json", false, "print JSON")
	canonical := &cobra.Command{
		Use:   "canonical CID...",
		Short: "Print the canonical CID among the given ones (highest rank, ties to the smaller string)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), protocol.Canonical(args))
			return nil
		},
	}
	c.AddCommand(inspect, canonical)
	return c
}
