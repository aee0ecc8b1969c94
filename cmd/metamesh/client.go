package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/spf13/cobra"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/node/p2p"
)

// Commands that talk to a running node over its HTTP API.

func newIDCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "id",
		Short: "Print the node's peer ID (12D3KooW…)",
		Long: `Print the peer ID of the node whose data directory is --data (by default the
one metamesh run and make run use). The Ed25519 identity lives in
DATA/identity.key (mode 0600). A data directory that holds no node is an
error; --create makes the identity there when missing, so a node's ID can be
known (and given to peers as --bootstrap) before it first runs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir := dataDir(cmd)
			if create, _ := cmd.Flags().GetBool("create"); !create {
				if err := node.CheckDataDir(dir); err != nil {
					return err
				}
			}
			k, err := p2p.LoadIdentity(dir)
			if err != nil {
				return err
			}
			id, err := peer.IDFromPrivateKey(k)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), id)
			return nil
		},
	}
	dataFlag(c)
	c.Flags().Bool("create", false, "create the identity when the data directory has none")
	return c
}

// dataFlag adds --data, the data directory every command shares.
func dataFlag(c *cobra.Command) {
	c.Flags().String("data", "", "data directory (default "+defaultDataText+"; env METAMESH_DATA)")
}

// defaultDataText is the default data directory (node.DefaultDataDir) as
// help shows it.
const defaultDataText = "$XDG_DATA_HOME/metamesh, else $HOME/.local/share/metamesh"

// dataDir is --data (or METAMESH_DATA), else the default.
func dataDir(cmd *cobra.Command) string {
	if d, _ := cmd.Flags().GetString("data"); d != "" {
		return d
	}
	return node.DefaultDataDir()
}

// dataGiven reports whether the data directory was chosen (--data or
// METAMESH_DATA) rather than defaulted.
func dataGiven(cmd *cobra.Command) bool {
	d, _ := cmd.Flags().GetString("data")
	return d != ""
}

// apiFlag adds --api (the node to talk to), --data, --api-token-file and
// --json.
func apiFlag(c *cobra.Command) {
	c.Flags().String("api-token-file", "", "file holding the node's API token, for a node that is not on loopback (default DATA/api-token when the address is DATA's; env METAMESH_API_TOKEN_FILE)")
	apiAddrFlag(c)
	c.Flags().Bool("json", false, "print the node's JSON answer as it is")
}

// apiAddrFlag adds --api and --data, by which a client command finds its
// node.
func apiAddrFlag(c *cobra.Command) {
	c.Flags().String("api", "", "the running node's API, URL or host:port (default: the address the node running on --data wrote to DATA/"+node.APIFile+", else http://"+node.DefaultAPIAddr+"; env METAMESH_API)")
	dataFlag(c)
}

// nodeAPI is where a client command finds its node: --api (or
// METAMESH_API) as given; else the URL the node running on the data
// directory wrote there (with that directory's API token, when it has
// one); else the default address. from says which, for error messages;
// a data directory given with --data that holds no node is an error.
func nodeAPI(cmd *cobra.Command) (base, tokenFile, from string, err error) {
	if base, _ = cmd.Flags().GetString("api"); base != "" {
		from = "--api"
	} else {
		dir := dataDir(cmd)
		switch u, rerr := node.ReadAPIURL(dir); {
		case rerr == nil:
			base, from = u, filepath.Join(dir, node.APIFile)
			if tf := filepath.Join(dir, node.APITokenFile); fileExists(tf) {
				tokenFile = tf
			}
		case dataGiven(cmd):
			if err := node.CheckDataDir(dir); err != nil {
				return "", "", "", err
			}
			return "", "", "", fmt.Errorf("no node has run on %s yet (no %s): start it with metamesh run --data %s, or give --api", dir, node.APIFile, dir)
		default:
			base, from = "http://"+node.DefaultAPIAddr, "the default address"
		}
	}
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	if tf, _ := cmd.Flags().GetString("api-token-file"); tf != "" {
		tokenFile = tf
	}
	return strings.TrimSuffix(base, "/"), tokenFile, from, nil
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// apiGet fetches path from the node and decodes its JSON answer; an error
// answer becomes an error saying the status and the node's message.
func apiGet(cmd *cobra.Command, path string, timeout time.Duration) (map[string]any, []byte, error) {
	base, tf, from, err := nodeAPI(cmd)
	if err != nil {
		return nil, nil, err
	}
	u, err := url.Parse(base + path)
	if err != nil {
		return nil, nil, fmt.Errorf("--api %q: %w", base, err)
	}
	req, err := http.NewRequestWithContext(cmd.Context(), http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, err
	}
	if tf != "" {
		tok, err := os.ReadFile(tf)
		if err != nil {
			return nil, nil, fmt.Errorf("--api-token-file: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	}
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot reach the node at %s (%s; is metamesh run going? --api): %w", base, from, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, nil, err
	}
	var m map[string]any
	if err := decodeJSON(raw, &m); err != nil {
		return nil, nil, fmt.Errorf("the node answered %s with something that is not JSON", resp.Status)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := m["error"].(string)
		code := 1
		if resp.StatusCode == http.StatusNotFound {
			code = 3
		} else if resp.StatusCode == http.StatusBadRequest {
			code = 2
		}
		if msg == "" {
			msg = resp.Status
		} else {
			msg = fmt.Sprintf("%s (HTTP %d)", msg, resp.StatusCode)
		}
		return m, raw, &exitError{code: code, err: errors.New(msg)}
	}
	return m, raw, nil
}

// jsonError prints the node's JSON error answer on stdout when --json is
// set (a script reads one format whatever happened), and returns err.
func jsonError(cmd *cobra.Command, raw []byte, err error) error {
	if j, _ := cmd.Flags().GetBool("json"); j && raw != nil {
		_ = printJSON(cmd, raw)
	}
	return err
}

// decodeJSON decodes raw into v keeping numbers as the node wrote them
// (json.Number): a size of 3000000 stays 3000000, not 3e+06.
func decodeJSON(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}

// printJSON prints the node's answer, indented, its numbers as written.
func printJSON(cmd *cobra.Command, raw []byte) error {
	var v any
	if err := decodeJSON(raw, &v); err != nil {
		return err
	}
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newLookupCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "lookup CID",
		Short: "Print the document of a file by any of its CIDs, from this node or its peers",
		Long: `Ask the running node for the file a CID names: its own files, then the
federation (the DHT's providers, then its peers). Prints the document's CIDs,
source and metadata; --json prints the node's JSON as it is. --local skips
the federation. Exit status 3 when no one has the file, 2 for a malformed CID.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "/api/meta/" + url.PathEscape(args[0])
			if l, _ := cmd.Flags().GetBool("local"); l {
				path += "?local=1"
			}
			_, raw, err := apiGet(cmd, path, time.Minute)
			if err != nil {
				return jsonError(cmd, raw, err)
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			var doc api.Document
			if err := json.Unmarshal(raw, &doc); err != nil {
				return fmt.Errorf("the node's document: %w", err)
			}
			return printDocument(cmd.OutOrStdout(), doc)
		},
	}
	apiFlag(c)
	c.Flags().Bool("local", false, "answer from this node only")
	return c
}

// printDocument writes the readable output of metamesh lookup: the
// canonical CID, the source, the path, every CID (with the peers a
// learned one is known from), the providers, then the metadata as sorted
// "name/sub value" lines, with the exact bytes of paths that are not
// UTF-8 (base64, as the JSON has them). One column of names, as wide as
// the longest.
func printDocument(out io.Writer, doc api.Document) error {
	w := tabwriter.NewWriter(out, 10, 0, 1, ' ', 0)
	fmt.Fprintf(w, "canonical\t%s\nsource\t%s\n", doc.CanonicalCID, doc.Source)
	if doc.FilePath != "" {
		fmt.Fprintf(w, "filePath\t%s\n", validUTF8(doc.FilePath))
	}
	for _, c := range doc.CIDs {
		if ps := doc.Learned[c]; len(ps) > 0 {
			// Held only because peers' records carried it.
			fmt.Fprintf(w, "cid\t%s (learned from %s)\n", c, strings.Join(ps, ", "))
			continue
		}
		fmt.Fprintf(w, "cid\t%s\n", c)
	}
	for _, p := range doc.Providers {
		fmt.Fprintf(w, "provider\t%s\n", p)
	}
	lines := metaLines(nil, "", api.ObjectValue(doc.Meta))
	if len(doc.FilePathBytes) > 0 {
		lines = append(lines, "filePathBytes\t"+base64.StdEncoding.EncodeToString(doc.FilePathBytes))
	}
	for i, b := range doc.DuplicatesBytes {
		lines = append(lines, fmt.Sprintf("duplicatesBytes/%d\t%s", i, base64.StdEncoding.EncodeToString(b)))
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	return w.Flush()
}

// validUTF8 is s with every byte that is not UTF-8 as U+FFFD, as the
// node's JSON shows it (its exact bytes are printed as filePathBytes).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r) // utf8.RuneError for an invalid byte, n == 1
		i += n
	}
	return b.String()
}

// metaLines appends a metadata value as "a/b\tvalue" lines (list
// elements by index), in no particular order.
func metaLines(out []string, name string, v api.Value) []string {
	switch v.Kind {
	case api.KindObject:
		for k, x := range v.Object {
			out = metaLines(out, join(name, k), x)
		}
	case api.KindList:
		for i, x := range v.List {
			out = metaLines(out, join(name, strconv.Itoa(i)), x)
		}
	default:
		out = append(out, name+"\t"+valueText(v))
	}
	return out
}

// valueText is how a metadata value is printed: a number as the node's
// JSON writes it (a whole one as an integer, however it was written).
func valueText(v api.Value) string {
	switch v.Kind {
	case api.KindInt:
		return strconv.FormatInt(v.Int, 10)
	case api.KindFloat:
		if b, err := json.Marshal(v.Float); err == nil {
			return string(b)
		}
		return strconv.FormatFloat(v.Float, 'g', -1, 64)
	}
	return v.Str
}

func newProvidersCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "providers CID",
		Short: "List the peers the DHT returns as providers of a CID (announced CIDs only)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, raw, err := apiGet(cmd, "/api/providers/"+url.PathEscape(args[0]), time.Minute)
			if err != nil {
				return jsonError(cmd, raw, err)
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			ps := list(m["providers"])
			if len(ps) == 0 {
				why := ""
				// A node alone has no DHT to ask: say so, not just "none".
				if st, _, err := apiGet(cmd, "/api/status", 10*time.Second); err == nil && text(st["peers"]) == "0" {
					why = " (the node has no peers: the DHT has no one to ask yet)"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "no providers found for %s%s\n", args[0], why)
			}
			for _, p := range ps {
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			return nil
		},
	}
	apiFlag(c)
	return c
}

func newPeersCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "peers",
		Short: "List the running node's connected peers: connection (direct or relayed), transport, latency, addresses",
		Long: `List the running node's connected peers, one line each under a header: the
peer ID; the connection, direct or relayed via a circuit relay (named by
the start and end of its peer ID; its address, /…/p2p/<relay>/p2p-circuit,
is among the peer's); the transport (tcp, quic-v1, …; for a relayed
connection that of the hop to the relay); the latency; the addresses of
the connections. --json prints the node's JSON as it is.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, raw, err := apiGet(cmd, "/api/peers", 10*time.Second)
			if err != nil {
				return jsonError(cmd, raw, err)
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			var res struct {
				Peers []api.Peer `json:"peers"`
			}
			if err := json.Unmarshal(raw, &res); err != nil {
				return fmt.Errorf("the node's list of peers: %w", err)
			}
			return printPeers(cmd.OutOrStdout(), res.Peers)
		},
	}
	apiFlag(c)
	return c
}

// printPeers writes the readable output of metamesh peers: a table of
// the peer, its connection (direct, or relayed via the relay), the
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
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", orDash(p.ID), conn, orDash(p.Transport), lat, orDash(strings.Join(p.Addrs, " ")))
	}
	return w.Flush()
}

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
			m, raw, err := apiGet(cmd, "/api/status", 10*time.Second)
			if err != nil {
				return jsonError(cmd, raw, err)
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			return printStatus(cmd.OutOrStdout(), m)
		},
	}
	apiFlag(c)
	return c
}

// printStatus writes the readable output of metamesh status from the
// node's /api/status answer (decoded by decodeJSON): one column of
// names, as wide as the longest. The reachability lines are left out
// for a node that does not report it (an older version).
func printStatus(out io.Writer, m map[string]any) error {
	w := tabwriter.NewWriter(out, 11, 0, 1, ' ', 0)
	fmt.Fprintf(w, "version\t%s\npeer ID\t%s\n", text(m["version"]), text(m["peerId"]))
	for _, a := range list(m["addrs"]) {
		fmt.Fprintf(w, "address\t%s\n", a)
	}
	if r, ok := m["reachability"]; ok {
		fmt.Fprintf(w, "reachability\t%s\n", text(r))
		if b, _ := m["reachabilityBasis"].(string); b != "" {
			fmt.Fprintf(w, "because\t%s\n", b)
		}
		ra := list(m["reachableAddrs"])
		if len(ra) == 0 {
			fmt.Fprintf(w, "reachable\tnone confirmed\n")
		}
		for _, a := range ra {
			fmt.Fprintf(w, "reachable\t%s\n", a)
		}
		for _, a := range list(m["observedAddrs"]) {
			fmt.Fprintf(w, "observed\t%s\n", a)
		}
		relays, _ := m["relays"].([]any)
		if len(relays) == 0 {
			fmt.Fprintf(w, "relay\tnone\n")
		}
		for _, x := range relays {
			rl, _ := x.(map[string]any)
			fmt.Fprintf(w, "relay\t%s %s\n", text(rl["id"]), reservation(rl))
			for _, a := range list(rl["addrs"]) {
				fmt.Fprintf(w, "relay circuit\t%s\n", a)
			}
		}
		svc := "off"
		if on, _ := m["relayService"].(bool); on {
			svc = "on (relays for other peers)"
		}
		fmt.Fprintf(w, "relay service\t%s\n", svc)
	}
	for _, l := range list(m["libraries"]) {
		fmt.Fprintf(w, "library\t%s\n", l)
	}
	if f, ok := m["files"].(map[string]any); ok {
		fmt.Fprintf(w, "files\t%s local, %s known from peers\n", text(f["local"]), text(f["fromPeers"]))
	} else {
		fmt.Fprintf(w, "files\t%s roots\n", text(m["roots"]))
	}
	fmt.Fprintf(w, "peers\t%s\n", text(m["peers"]))
	if sc, ok := m["scan"].(map[string]any); ok {
		line := fmt.Sprintf("%s: %s/%s files, %s errors", text(sc["state"]), text(sc["filesDone"]), text(sc["filesTotal"]), text(sc["errors"]))
		// The counts are the last full scan's; files the watcher took in
		// since are in hashed.
		if h := text(sc["hashed"]); h != "-" && h != "0" {
			line += ", " + h + " hashed since it began"
		}
		fmt.Fprintf(w, "scan\t%s\n", line)
	}
	fmt.Fprintf(w, "announce\t%s queued\n", text(m["provideQueue"]))
	if pr, ok := m["provide"].(map[string]any); ok {
		// The sweeping provider's own statistics.
		line := fmt.Sprintf("%s keys in %s regions (prefix %s bits), %s", text(pr["keys"]), text(pr["regions"]),
			prefixBits(pr["avgPrefixLength"]), text(pr["connectivity"]))
		if r, _ := pr["resumed"].(bool); r {
			line += ", resumed its cycle"
		}
		fmt.Fprintf(w, "provider\t%s\n", line)
		fmt.Fprintf(w, "keys\t%s file CIDs, %s search words\n", text(pr["cidKeys"]), text(pr["tokenKeys"]))
		fmt.Fprintf(w, "provided\t%s keys, %s failed, %s DHT walks, %s messages\n", text(pr["provided"]), text(pr["failed"]), text(pr["walks"]), text(pr["messages"]))
		next, _ := pr["nextReprovideAt"].(string)
		if next == "" {
			next = "-"
		}
		last := "-"
		if ns, ok := pr["lastCycleNs"].(json.Number); ok {
			if v, err := ns.Int64(); err == nil && v > 0 {
				last = time.Duration(v).Round(time.Millisecond).String()
			}
		}
		fmt.Fprintf(w, "reprovide\tnext %s, last cycle %s\n", next, last)
	}
	if r, ok := m["redis"].(map[string]any); ok {
		fmt.Fprintf(w, "redis\tok=%s %s\n", text(r["ok"]), text(r["addr"]))
	}
	return w.Flush()
}

// prefixBits prints a mean prefix length with one decimal.
func prefixBits(v any) string {
	if n, ok := v.(json.Number); ok {
		if f, err := n.Float64(); err == nil {
			if f < 0 {
				return "-" // not measured yet (the provider is offline)
			}
			return strconv.FormatFloat(f, 'f', 1, 64)
		}
	}
	return text(v)
}

// reservation says how the node stands with one relay of /api/status:
// "reserved until T" or "not reserved", and the last error if any.
func reservation(rl map[string]any) string {
	s := "not reserved"
	if r, _ := rl["reserved"].(bool); r {
		s = "reserved"
		if e, _ := rl["expires"].(string); e != "" {
			s += " until " + e
		}
	}
	if e, _ := rl["error"].(string); e != "" {
		s += " (last error: " + oneLine(e) + ")"
	}
	return s
}

// oneLine is s with its line breaks and tabs as spaces, so that a
// message keeps to its line (and out of the tabwriter's columns).
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// orDash is s, or "-" when it is empty, like text for a missing value.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shortID abbreviates a peer ID for a table column: its first 8 and last
// 6 characters.
func shortID(id string) string {
	if len(id) > 16 {
		return id[:8] + "…" + id[len(id)-6:]
	}
	return id
}

func list(v any) []string {
	xs, _ := v.([]any)
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, text(x))
	}
	return out
}

// text is how a value of the node's JSON (decoded by decodeJSON) is
// printed: a whole number as an integer whatever way it was written, a
// missing or null value as "-".
func text(v any) string {
	switch t := v.(type) {
	case nil:
		return "-"
	case json.Number:
		if _, err := t.Int64(); err == nil {
			return t.String()
		}
		if f, err := t.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1e21 {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
		return t.String()
	}
	return fmt.Sprint(v)
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "/" + b
}
