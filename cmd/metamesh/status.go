package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/api"
)

func newStatusCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "status",
		Short: "Print the running node's status (peer ID, addresses, reachability, relays, peers, scan, Redis); --json for all of it",
		Long: `Print the running node's status: its peer ID and addresses; its
reachability as AutoNAT v2 found it (public, private or unknown) and the
addresses it confirmed others can dial; each relay the node may use, with
its reservation (until when, the node's /p2p-circuit addresses through it)
or the last error; whether the node runs the relay service for others;
then the libraries, files, peers, scan, announce queue and Redis. --json
prints the node's JSON as it is.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, raw, err := apiGetJSON[api.Status](cmd, "/api/status", 10*time.Second)
			if err != nil {
				return jsonError(cmd, raw, err)
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			return printStatus(cmd.OutOrStdout(), st)
		},
	}
	apiFlag(c)
	return c
}

// printStatus writes the readable output of metamesh status from the
// node's /api/status answer: one column of names, as wide as the longest.
func printStatus(out io.Writer, st api.Status) error {
	w := tabwriter.NewWriter(out, 11, 0, 1, ' ', 0)
	fmt.Fprintf(w, "version\t%s\npeer ID\t%s\n", orDash(st.Version), orDash(st.PeerID))
	for _, a := range st.Addrs {
		fmt.Fprintf(w, "address\t%s\n", a)
	}
	fmt.Fprintf(w, "reachability\t%s\n", orDash(st.Reachability))
	if st.ReachabilityBasis != "" {
		fmt.Fprintf(w, "because\t%s\n", st.ReachabilityBasis)
	}
	if len(st.ReachableAddrs) == 0 {
		fmt.Fprintf(w, "reachable\tnone confirmed\n")
	}
	for _, a := range st.ReachableAddrs {
		fmt.Fprintf(w, "reachable\t%s\n", a)
	}
	for _, a := range st.ObservedAddrs {
		fmt.Fprintf(w, "observed\t%s\n", a)
	}
	if len(st.Relays) == 0 {
		fmt.Fprintf(w, "relay\tnone\n")
	}
	for _, rl := range st.Relays {
		fmt.Fprintf(w, "relay\t%s %s\n", rl.ID, reservation(rl))
		for _, a := range rl.Addrs {
			fmt.Fprintf(w, "relay circuit\t%s\n", a)
		}
	}
	svc := "off"
	if st.RelayService {
		svc = "on (relays for other peers)"
	}
	fmt.Fprintf(w, "relay service\t%s\n", svc)
	for _, l := range st.Libraries {
		fmt.Fprintf(w, "library\t%s\n", l)
	}
	fmt.Fprintf(w, "files\t%d local, %d known from peers\n", st.Files.Local, st.Files.FromPeers)
	fmt.Fprintf(w, "peers\t%d\n", st.Peers)
	sc := st.Scan
	line := fmt.Sprintf("%s: %d/%d files, %d errors", orDash(sc.State), sc.FilesDone, sc.FilesTotal, sc.Errors)
	// The counts are the last full scan's; files the watcher took in
	// since are in hashed.
	if sc.Hashed != 0 {
		line += fmt.Sprintf(", %d hashed since it began", sc.Hashed)
	}
	fmt.Fprintf(w, "scan\t%s\n", line)
	fmt.Fprintf(w, "announce\t%d queued\n", st.ProvideQueue)
	if pr := st.Provide; pr != nil {
		// The sweeping provider's own statistics.
		line := fmt.Sprintf("%d keys in %d regions (prefix %s bits), %s", pr.Keys, pr.Regions, prefixBits(pr.AvgPrefixLength), orDash(pr.Connectivity))
		if pr.Resumed {
			line += ", resumed its cycle"
		}
		fmt.Fprintf(w, "provider\t%s\n", line)
		fmt.Fprintf(w, "keys\t%d file CIDs, %d search words\n", pr.CIDKeys, pr.TokenKeys)
		fmt.Fprintf(w, "provided\t%d keys, %d failed, %d DHT walks, %d messages\n", pr.Provided, pr.Failed, pr.Walks, pr.Messages)
		next, last := "-", "-"
		if !pr.NextReprovideAt.IsZero() {
			next = pr.NextReprovideAt.Format(time.RFC3339Nano)
		}
		if pr.LastCycle > 0 {
			last = pr.LastCycle.Round(time.Millisecond).String()
		}
		fmt.Fprintf(w, "reprovide\tnext %s, last cycle %s\n", next, last)
	}
	fmt.Fprintf(w, "redis\tok=%t %s\n", st.Redis.OK, orDash(st.Redis.Addr))
	return w.Flush()
}

// prefixBits prints a mean prefix length with one decimal; "-" while the
// provider has not measured it (offline).
func prefixBits(f float64) string {
	if f < 0 {
		return "-"
	}
	return strconv.FormatFloat(f, 'f', 1, 64)
}

// reservation says how the node stands with one relay of /api/status:
// "reserved until T" or "not reserved", and the last error if any.
func reservation(rl api.Relay) string {
	s := "not reserved"
	if rl.Reserved {
		s = "reserved"
		if rl.Expires != "" {
			s += " until " + rl.Expires
		}
	}
	if rl.Error != "" {
		s += " (last error: " + oneLine(rl.Error) + ")"
	}
	return s
}
