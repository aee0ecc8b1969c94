package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/protocol"
)

func newCIDCmd() *cobra.Command {
	c := &cobra.Command{Use: "cid", Short: "Inspect and rank CIDs"}
	inspect := &cobra.Command{
		Use:   "inspect CID|FILE",
		Short: "Print a CID's version, codec, multihash, digest length, tier, rank and other forms",
		Long: `Print a CID's version, codec, multihash, digest length, tier and rank,
and its other forms: the CIDv0 ("Qm…") where one exists, the CIDv1 in
base58btc ("z…") and base36 ("k…", what subdomain gateways take).
Any valid CID is accepted; "normalized" is its canonical form (CIDv1, base32).
Given a file instead, it hashes the file as metamesh hash does and inspects
its canonical CID, which it says on stderr ("hashed FILE: CID").
Rank is strict: only the canonical form ranks, so a CIDv0 text ranks 0 while
its normalized form may rank 40. A known hash whose digest has the wrong length
ranks 0, and "problem" says why.

Exit status 2 for an argument that is neither a CID nor a file, or a wrong
number of arguments. With --json the answer is one JSON object on
stdout, and an error is one JSON object {"error": "..."} on stderr, with nothing
on stdout.`,
		// The argument count is checked in RunE, so that --json also
		// reports it as JSON.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cobra.ExactArgs(1)(cmd, args); err != nil {
				if asJSON, _ := cmd.Flags().GetBool("json"); !asJSON {
					return usageError(cmd, err)
				}
				return cidFailure(cmd, 2, err)
			}
			c, err := cidOrFile(cmd, args[0])
			if err != nil {
				var ee *exitError
				if errors.As(err, &ee) {
					return cidFailure(cmd, ee.code, ee.err)
				}
				return cidFailure(cmd, 1, err)
			}
			info, err := protocol.Inspect(c)
			if err != nil {
				return cidFailure(cmd, 2, badCID(c, err))
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
			if info.Problem != "" {
				fmt.Fprintf(tw, "problem\t%s\n", info.Problem)
			}
			if info.V0 != "" {
				fmt.Fprintf(tw, "v0\t%s\n", info.V0)
			}
			fmt.Fprintf(tw, "base58btc\t%s\n", info.Base58btc)
			fmt.Fprintf(tw, "base36\t%s\n", info.Base36)
			return tw.Flush()
		},
	}
	inspect.Flags().Bool("json", false, `print JSON; errors too, as {"error": "..."} on stderr`)
	canonical := &cobra.Command{
		Use:   "canonical CID...",
		Short: "Print the canonical CID among the given ones (highest rank, ties to the smaller string)",
		Long: `Print the canonical CID among the given ones: the highest rank, ties to the
lexicographically smaller string. Any valid CID is accepted and competes in its
canonical form (CIDv1, base32 lower), which is also what is printed: a CIDv0
"Qm..." competes as the dag-pb CIDv1 it stands for.

Every argument that is not a CID is reported on stderr, naming it and saying
why, and the exit status is 2 with nothing on stdout.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			norm := make([]string, 0, len(args))
			bad := 0
			for i, a := range args {
				n, err := protocol.Normalize(a)
				if err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "metamesh cid canonical: argument %d: %v\n", i+1, badCID(a, err))
					bad++
					continue
				}
				norm = append(norm, n)
			}
			if bad > 0 {
				return &exitError{code: 2, err: fmt.Errorf("%d of %d arguments are not valid CIDs", bad, len(args))}
			}
			fmt.Fprintln(cmd.OutOrStdout(), protocol.Canonical(norm))
			return nil
		},
	}
	c.AddCommand(inspect, canonical)
	return c
}

// cidFailure makes err the command's failure with exit status code: printed
// as text by main, or, with --json, written here as {"error": "..."} on
// stderr.
func cidFailure(cmd *cobra.Command, code int, err error) error {
	if asJSON, _ := cmd.Flags().GetBool("json"); !asJSON {
		return &exitError{code: code, err: err}
	}
	if jerr := json.NewEncoder(cmd.ErrOrStderr()).Encode(map[string]string{"error": err.Error()}); jerr != nil {
		return &exitError{code: code, err: err}
	}
	return &exitError{code: code}
}

// badCID is err, protocol's refusal of the CID text s, said in words a
// user can act on: go-cid's own reasons name hex decoders and varints and
// repeat "invalid cid:".
func badCID(s string, err error) error {
	if !errors.Is(err, protocol.ErrInvalidCID) {
		return err // empty CID
	}
	return fmt.Errorf("invalid CID %q: %s", clip(s), protocol.WhyNotCID(strings.TrimSpace(s)))
}

// clip shortens a long argument quoted in an error.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
