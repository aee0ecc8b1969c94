package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/api"
)

func newPeersCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "peers",
		Short: "List the running node's connected peers: connection (direct or relayed), transport, latency, addresses",
		Long: `List the running node's connected peers, one line each under a header: the
household, by the name it claims and the end of its peer ID ("Alice's NAS
(…YZ2fvJ)"), or, when it sent no name, its abbreviated peer ID; the connection, direct or relayed via a circuit relay (named by
the start and end of its peer ID; its address, /…/p2p/<relay>/p2p-circuit,
is among the peer's); the transport (tcp, quic-v1, …; for a relayed
connection that of the hop to the relay); the latency; the addresses of
the connections. Below it, the households among them, one line each: the
household, whether it shows this one its list of films and shows
(shared, refused, or failed: it did not answer), and how many films and
shows the list holds (GET /api/households, which asks each household).
--json prints the node's JSON of the peers as it is, with the whole peer
IDs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, raw, err := apiGetJSON[api.PeersAnswer](cmd, "/api/peers", 10*time.Second)
			if err != nil {
				return jsonError(cmd, raw, err)
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			if err := printPeers(cmd.OutOrStdout(), res.Peers); err != nil || len(res.Peers) == 0 {
				return err
			}
			hs, _, err := apiGetJSON[api.HouseholdsAnswer](cmd, "/api/households", 10*time.Second)
			if err != nil {
				return nil // a node that lists no households: the peers are all there is
			}
			return printHouseholds(cmd.OutOrStdout(), hs.Households)
		},
	}
	apiFlag(c)
	return c
}

// printPeers writes the readable output of metamesh peers: a table of
// the peer (its household name, or its abbreviated ID), its connection (direct, or relayed via the relay), the
// transport, the latency and the addresses.
func printPeers(out io.Writer, peers []api.Peer) error {
	if len(peers) == 0 {
		_, err := fmt.Fprintln(out, "no connected peers")
		return err
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "PEER\tCONNECTION\tTRANSPORT\tLATENCY\tADDRESSES")
	for _, p := range peers {
		conn := orDash(p.Connection)
		if p.Relay != "" {
			conn += " via " + shortID(p.Relay)
		}
		lat := "-"
		if p.LatencyMs > 0 {
			lat = strconv.FormatFloat(p.LatencyMs, 'f', -1, 64) + " ms"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", orDash(peerLabel(p.ID, p.Name)), conn, orDash(p.Transport), lat, orDash(strings.Join(p.Addrs, " ")))
	}
	return w.Flush()
}

// printHouseholds writes, after a blank line, a table of the households
// among the peers: the household (its name, or its abbreviated ID),
// whether its list is shared with this one, and its films and shows ("-"
// when it is not). Nothing when there is none.
func printHouseholds(out io.Writer, hs []api.Household) error {
	if len(hs) == 0 {
		return nil
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "\nHOUSEHOLD\tLIBRARY\tFILMS\tSHOWS")
	for _, h := range hs {
		films, shows := "-", "-"
		if h.Library == api.LibraryShared {
			films, shows = strconv.Itoa(h.Films), strconv.Itoa(h.Shows)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", orDash(peerLabel(h.Peer, h.Name)), orDash(h.Library), films, shows)
	}
	return w.Flush()
}
