package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/fetch"
	"github.com/metamesh/node/ingest"
)

func newStatusCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "status",
		Short: "Print the running node's status (name, peer ID, addresses, reachability, relays, peers, scan, Redis); --json for all of it",
		Long: `Print the running node's status: the household's name (--name), its
peer ID and addresses; its
reachability as AutoNAT v2 found it (public, private or unknown) and the
addresses it confirmed others can dial; each relay the node may use, with
its reservation (until when, the node's /p2p-circuit addresses through it)
or the last error; whether the node runs the relay service for others;
whether peers may fetch the household's files (--share-files);
then the libraries, files, peers, scan (after it, the library's files as
they are), what the node announces to the network and whether the
households closest to what it announces hold its records (a check of
one sample every 30 minutes), Redis, the data
directory with its free space, and each problem that keeps the node from
being ready ("data directory full: …"). --json prints
the node's JSON as it is, the provider's figures (keys, regions, DHT walks, each
region's last provide and check) included.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, raw, err := apiGetJSON[api.Status](cmd, "/api/status", 10*time.Second)
			if err != nil {
				return jsonError(cmd, raw, err)
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			return printStatus(cmd.OutOrStdout(), st, time.Now())
		},
	}
	apiFlag(c)
	return c
}

// printStatus writes the readable output of metamesh status from the
// node's /api/status answer: one column of names, as wide as the longest.
// now is when the answer came, for how far off the next announcement is.
func printStatus(out io.Writer, st api.Status, now time.Time) error {
	w := tabwriter.NewWriter(out, 11, 0, 1, ' ', 0)
	fmt.Fprintf(w, "version\t%s\nname\t%s\npeer ID\t%s\n", orDash(st.Version), orDash(st.Name), orDash(st.PeerID))
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
	fmt.Fprintf(w, "sharing\t%s\n", sharingLine(st.Sharing))
	for _, l := range st.Libraries {
		fmt.Fprintf(w, "library\t%s\n", l)
	}
	fmt.Fprintf(w, "files\t%d local, %d known from peers\n", st.Files.Local, st.Files.FromPeers)
	fmt.Fprintf(w, "peers\t%d\n", st.Peers)
	fmt.Fprintf(w, "scan\t%s\n", scanLine(st))
	fmt.Fprintf(w, "network\t%s\n", announceLine(st, now))
	if st.Provide != nil {
		fmt.Fprintf(w, "findable\t%s\n", findableLine(*st.Provide, now))
	}
	fmt.Fprintf(w, "redis\tok=%t %s\n", st.Redis.OK, orDash(st.Redis.Addr))
	if d := st.DataDir; d.Path != "" {
		fmt.Fprintf(w, "data\t%s\n", dataDirLine(d))
	}
	for _, p := range st.Problems {
		fmt.Fprintf(w, "problem\t%s\n", oneLine(p))
	}
	return w.Flush()
}

// dataDirLine says where the data directory is and how much space is
// left there: "/srv/metamesh, 11.5 GiB free", or that it is full.
func dataDirLine(d api.DataDir) string {
	switch {
	case d.Error != "":
		return fmt.Sprintf("%s (free space unknown: %s)", d.Path, oneLine(d.Error))
	case d.Full:
		return fmt.Sprintf("%s, FULL: %s free, under the %s the node needs; new files wait until space is freed",
			d.Path, fetch.BytesText(int64(d.FreeBytes)), fetch.BytesText(int64(d.MinFreeBytes)))
	}
	return fmt.Sprintf("%s, %s free", d.Path, fetch.BytesText(int64(d.FreeBytes)))
}

// scanLine says where the scan stands: while a full scan runs, how far
// it got; after it, the library's files as they are now, however they
// came in (a library filled while the node watched it had none to scan).
func scanLine(st api.Status) string {
	sc := st.Scan
	var line string
	switch sc.State {
	case ingest.StateStarting, ingest.StateScanning, ingest.StateHashing:
		line = fmt.Sprintf("%s: %d/%d files, %s", sc.State, sc.FilesDone, sc.FilesTotal, plural(int(sc.Errors), "error"))
	default:
		line = fmt.Sprintf("%s: %s, %s", orDash(sc.State), plural(int(st.LibraryFiles), "file"), plural(int(sc.Errors), "error"))
	}
	if sc.Hashed != 0 {
		line += fmt.Sprintf(", %d hashed since the scan began", sc.Hashed)
	}
	return line
}

// announceLine says in a household's words what the node tells the
// network of its library: how many files and search words it announces
// and when it next announces them all again, or why it does not now.
// The provider's own figures (keys, regions, walks) are --json's.
func announceLine(st api.Status, now time.Time) string {
	pr := st.Provide
	if pr == nil {
		return fmt.Sprintf("%d to announce", st.ProvideQueue)
	}
	what := plural(pr.Announced, "file")
	if pr.TokenKeys > 0 {
		what += " and " + plural(pr.TokenKeys, "search word")
	}
	waiting := ""
	if pr.Announced > 0 || pr.TokenKeys > 0 {
		waiting = "; " + what + " wait"
	}
	switch pr.Connectivity {
	case "offline":
		return "not announcing: offline (no peers)" + waiting
	case "disconnected":
		return "not announcing: no peer answers now (it keeps trying)" + waiting
	}
	line := "announcing " + what + " to the network"
	if pr.Announced == 0 && pr.TokenKeys == 0 {
		line = "nothing to announce yet"
	}
	if pr.Queued > 0 {
		line += fmt.Sprintf(" (%d still to go out the first time)", pr.Queued)
	}
	if !pr.NextReprovideAt.IsZero() {
		line += "; next round " + inTime(pr.NextReprovideAt.Sub(now))
	}
	if pr.Failed > 0 {
		line += fmt.Sprintf("; %d failed since the start", pr.Failed)
	}
	return line
}

// findableLine says in a household's words whether the federation can
// find it: of the households closest to a sampled file (or search word)
// in each part of the network, how many hold its record, as the latest
// checks found; and how long ago everything was last announced. The
// figures per region are --json's.
func findableLine(pr api.ProvideStats, now time.Time) string {
	if len(pr.RegionsProvided) == 0 {
		return "nothing announced to check"
	}
	what := "file"
	if pr.TokenKeys > 0 {
		what = "file or search word"
	}
	f := pr.Findable
	var line string
	switch {
	case f.Regions == 0:
		line = "not checked yet: the first check comes a minute after the node is online"
	case f.Closest == 0:
		line = fmt.Sprintf("the last check found no household close to a sampled %s (%s)", what, ago(now.Sub(f.CheckedAt)))
	default:
		who := "the households"
		if n := f.Closest / f.Regions; n*f.Regions == f.Closest && sameClosest(pr.RegionsProvided) {
			who = "the " + plural(n, "household")
		}
		where := ""
		if f.Regions > 1 {
			where = fmt.Sprintf(" in each of %d parts of the network", f.Regions)
		}
		verb := "hold"
		if who == "the 1 household" && f.Regions == 1 {
			verb = "holds"
		}
		line = fmt.Sprintf("%s closest to a sampled %s%s %s %d of %s (last check %s)",
			who, what, where, verb, f.Holding, plural(f.Closest, "record"), ago(now.Sub(f.CheckedAt)))
	}
	switch at, _ := pr.OldestRegionProvided(); {
	case at.IsZero():
		line += "; some not announced yet since the start"
	default:
		line += "; all announced " + within(now.Sub(at))
	}
	return line
}

// sameClosest says whether every region checked found as many closest
// households.
func sameClosest(rs []api.ProvidedRegion) bool {
	n := -1
	for _, r := range rs {
		if r.CheckedAt.IsZero() {
			continue
		}
		if n >= 0 && r.Closest != n {
			return false
		}
		n = r.Closest
	}
	return true
}

// ago says how long ago something was, d before now: "under a minute
// ago", "4 min ago", "2 h ago", "3 days ago".
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "under a minute ago"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
}

// within says the span that ends now and began d ago: "in the last
// minute", "in the last 4 min", "in the last 2 h", "in the last 3 days".
func within(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "in the last minute"
	case d < time.Hour:
		return fmt.Sprintf("in the last %d min", int(d/time.Minute)+1)
	case d < 48*time.Hour:
		return fmt.Sprintf("in the last %d h", int(d/time.Hour)+1)
	}
	return fmt.Sprintf("in the last %d days", int(d/(24*time.Hour))+1)
}

// inTime says when something happens d from now: "in 21 h", "in 12
// min", "in under a minute", "now" once due.
func inTime(d time.Duration) string {
	switch {
	case d <= 0:
		return "now"
	case d < time.Minute:
		return "in under a minute"
	case d < time.Hour:
		return fmt.Sprintf("in %d min", int(d.Round(time.Minute)/time.Minute))
	}
	return fmt.Sprintf("in %d h", int(d.Round(time.Hour)/time.Hour))
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

// sharingLine says whether peers may fetch the household's files, and
// which folders are shared or private.
func sharingLine(s api.Sharing) string {
	var line string
	switch {
	case !s.Enabled && len(s.Folders) == 0:
		line = "off: peers may not fetch this household's files (--share-files)"
	case !s.Enabled:
		line = "folders: peers may fetch the files under " + strings.Join(s.Folders, ", ")
	default:
		line = "on: peers may fetch this household's files"
	}
	if (s.Enabled || len(s.Folders) > 0) && s.Rate > 0 {
		line += fmt.Sprintf(", at most %.3g MB/s", float64(s.Rate)/1e6)
	}
	if len(s.Private) > 0 {
		line += "; private (never announced, answered for or fetched): " + strings.Join(s.Private, ", ")
	}
	return line
}
