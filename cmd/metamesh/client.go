package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/spf13/cobra"

	"github.com/metamesh/node/node"
)

// Commands that talk to a running node over its HTTP API.

func newIDCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "id",
		Short: "Print the node's peer ID (12D3KooW…), creating its identity on first use",
		Long: `Print the peer ID of the node whose data directory is --data. The Ed25519
identity lives in DATA/identity.key (mode 0600); it is created when missing,
so a node's ID can be known (and given to peers as --bootstrap) before it runs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := node.Config{}
			cfg.DataDir, _ = cmd.Flags().GetString("data")
			cfg.SetDefaults()
			k, err := node.LoadIdentity(cfg.DataDir)
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
	c.Flags().String("data", "", "data directory (default $HOME/.local/share/metamesh; env METAMESH_DATA)")
	return c
}

// apiFlag adds --api (the node to talk to), --api-token-file and --json.
func apiFlag(c *cobra.Command) {
	c.Flags().String("api-token-file", "", "file holding the node's API token, for a node that is not on loopback (env METAMESH_API_TOKEN_FILE)")
	c.Flags().String("api", "http://"+node.DefaultAPIAddr, "the running node's API, URL or host:port (env METAMESH_API)")
	c.Flags().Bool("json", false, "print the node's JSON answer as it is")
}

// apiGet fetches path from the node and decodes its JSON answer; an error
// answer becomes an error saying the status and the node's message.
func apiGet(cmd *cobra.Command, path string, timeout time.Duration) (map[string]any, []byte, error) {
	base, _ := cmd.Flags().GetString("api")
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u, err := url.Parse(strings.TrimSuffix(base, "/") + path)
	if err != nil {
		return nil, nil, fmt.Errorf("--api %q: %w", base, err)
	}
	req, err := http.NewRequestWithContext(cmd.Context(), http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, err
	}
	if tf, _ := cmd.Flags().GetString("api-token-file"); tf != "" {
		tok, err := os.ReadFile(tf)
		if err != nil {
			return nil, nil, fmt.Errorf("--api-token-file: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	}
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot reach the node at %s (is metamesh run going? --api): %w", base, err)
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
		return m, raw, &exitError{code: code, err: fmt.Errorf("%s: %s", resp.Status, msg)}
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
			m, raw, err := apiGet(cmd, path, time.Minute)
			if err != nil {
				return jsonError(cmd, raw, err)
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			// One column of names, as wide as the longest.
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 10, 0, 1, ' ', 0)
			fmt.Fprintf(w, "canonical\t%s\nsource\t%s\n", text(m["canonical_cid"]), text(m["source"]))
			if fp, ok := m["filePath"]; ok {
				fmt.Fprintf(w, "filePath\t%s\n", text(fp))
			}
			for _, c := range list(m["cids"]) {
				fmt.Fprintf(w, "cid\t%s\n", c)
			}
			for _, p := range list(m["providers"]) {
				fmt.Fprintf(w, "provider\t%s\n", p)
			}
			skip := map[string]bool{"canonical_cid": true, "source": true, "filePath": true, "cids": true, "providers": true, "peers": true, "duplicates": true, "duplicateCount": true, "origin": true}
			for _, kv := range flat("", m, skip) {
				fmt.Fprintf(w, "%s\n", kv)
			}
			return w.Flush()
		},
	}
	apiFlag(c)
	c.Flags().Bool("local", false, "answer from this node only")
	return c
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
				fmt.Fprintf(cmd.OutOrStdout(), "no providers found for %s\n", args[0])
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
		Short: "List the running node's connected peers with their addresses and latency",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, raw, err := apiGet(cmd, "/api/peers", 10*time.Second)
			if err != nil {
				return jsonError(cmd, raw, err)
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			peers, _ := m["peers"].([]any)
			if len(peers) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no connected peers")
			}
			for _, p := range peers {
				pm, _ := p.(map[string]any)
				fmt.Fprintf(cmd.OutOrStdout(), "%s  %sms  %s\n", text(pm["id"]), text(pm["latencyMs"]), strings.Join(list(pm["addrs"]), " "))
			}
			return nil
		},
	}
	apiFlag(c)
	return c
}

func newStatusCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "status",
		Short: "Print the running node's status (peer ID, addresses, peers, scan, Redis); --json for all of it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, raw, err := apiGet(cmd, "/api/status", 10*time.Second)
			if err != nil {
				return jsonError(cmd, raw, err)
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "version    %s\npeer ID    %s\n", text(m["version"]), text(m["peerId"]))
			for _, a := range list(m["addrs"]) {
				fmt.Fprintf(w, "address    %s\n", a)
			}
			for _, l := range list(m["libraries"]) {
				fmt.Fprintf(w, "library    %s\n", l)
			}
			fmt.Fprintf(w, "files      %s roots\npeers      %s\n", text(m["roots"]), text(m["peers"]))
			if sc, ok := m["scan"].(map[string]any); ok {
				fmt.Fprintf(w, "scan       %s: %s/%s files, %s errors\n", text(sc["state"]), text(sc["filesDone"]), text(sc["filesTotal"]), text(sc["errors"]))
			}
			fmt.Fprintf(w, "announce   %s queued\n", text(m["provideQueue"]))
			if r, ok := m["redis"].(map[string]any); ok {
				fmt.Fprintf(w, "redis      ok=%s %s\n", text(r["ok"]), text(r["addr"]))
			}
			return nil
		},
	}
	apiFlag(c)
	return c
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

// integer is v as a whole number, if it is one.
func integer(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := n.Int64(); err == nil {
		return i, true
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

// flat lists a nested document as sorted "a/b\tvalue" lines.
func flat(prefix string, v any, skip map[string]bool) []string {
	var out []string
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if prefix == "" && skip[k] {
				continue
			}
			out = append(out, flat(join(prefix, k), x, nil)...)
		}
	case []any:
		for i, x := range t {
			out = append(out, flat(join(prefix, fmt.Sprint(i)), x, nil)...)
		}
	default:
		out = append(out, prefix+"\t"+text(t))
	}
	sort.Strings(out)
	return out
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "/" + b
}
