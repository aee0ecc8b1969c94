package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
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
	if err := json.Unmarshal(raw, &m); err != nil {
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

// printJSON prints the node's answer, indented.
func printJSON(cmd *cobra.Command, raw []byte) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
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
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "canonical  %v\nsource     %v\n", m["canonical_cid"], m["source"])
			if fp, ok := m["filePath"]; ok {
				fmt.Fprintf(w, "filePath   %v\n", fp)
			}
			for _, c := range list(m["cids"]) {
				fmt.Fprintf(w, "cid        %s\n", c)
			}
			for _, p := range list(m["providers"]) {
				fmt.Fprintf(w, "provider   %s\n", p)
			}
			skip := map[string]bool{"canonical_cid": true, "source": true, "filePath": true, "cids": true, "providers": true, "peers": true, "duplicates": true, "duplicateCount": true, "origin": true}
			for _, kv := range flat("", m, skip) {
				fmt.Fprintf(w, "%s\n", kv)
			}
			return nil
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
			for _, p := range list(m["providers"]) {
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
				return err
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			peers, _ := m["peers"].([]any)
			for _, p := range peers {
				pm, _ := p.(map[string]any)
				fmt.Fprintf(cmd.OutOrStdout(), "%v  %vms  %s\n", pm["id"], pm["latencyMs"], strings.Join(list(pm["addrs"]), " "))
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
			fmt.Fprintf(w, "version    %v\npeer ID    %v\n", m["version"], m["peerId"])
			for _, a := range list(m["addrs"]) {
				fmt.Fprintf(w, "address    %s\n", a)
			}
			for _, l := range list(m["libraries"]) {
				fmt.Fprintf(w, "library    %s\n", l)
			}
			fmt.Fprintf(w, "files      %v roots\npeers      %v\n", m["roots"], m["peers"])
			if sc, ok := m["scan"].(map[string]any); ok {
				fmt.Fprintf(w, "scan       %v: %v/%v files, %v errors\n", sc["state"], sc["filesDone"], sc["filesTotal"], sc["errors"])
			}
			fmt.Fprintf(w, "announce   %v queued\n", m["provideQueue"])
			if r, ok := m["redis"].(map[string]any); ok {
				fmt.Fprintf(w, "redis      ok=%v %v\n", r["ok"], r["addr"])
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
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// flat lists a nested document as sorted "a/b  value" lines.
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
		out = append(out, fmt.Sprintf("%-10s %v", prefix, t))
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
