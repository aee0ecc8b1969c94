package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/node"
)

// Commands that talk to a running node over its HTTP API share these:
// the flags that find the node, and the GET that reads its JSON answers.

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
	apiTokenFlag(c)
	apiAddrFlag(c)
	c.Flags().Bool("json", false, "print the node's JSON answer as it is")
}

// apiTokenFlag adds --api-token-file, for a node off loopback.
func apiTokenFlag(c *cobra.Command) {
	c.Flags().String("api-token-file", "", "file holding the node's API token, for a node that is not on loopback (default DATA/api-token when the address is DATA's; env METAMESH_API_TOKEN_FILE)")
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

// apiRequest is a request (method, GET unless told) of path on the node
// cmd talks to, with its token when there is one, under ctx; base and
// from say where the node was found, for the error when it does not
// answer (unreachable).
func apiRequest(ctx context.Context, cmd *cobra.Command, method, path string) (req *http.Request, base, from string, err error) {
	base, tf, from, err := nodeAPI(cmd)
	if err != nil {
		return nil, "", "", err
	}
	u, err := url.Parse(base + path)
	if err != nil {
		return nil, "", "", fmt.Errorf("--api %q: %w", base, err)
	}
	req, err = http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return nil, "", "", err
	}
	if tf != "" {
		tok, err := os.ReadFile(tf)
		if err != nil {
			return nil, "", "", fmt.Errorf("--api-token-file: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	}
	return req, base, from, nil
}

// unreachable is err, a request that got no answer from the node at
// base, said with where that address came from.
func unreachable(base, from string, err error) error {
	return fmt.Errorf("cannot reach the node at %s (%s; is metamesh run going? --api): %w", base, from, err)
}

// apiGet fetches path from the node and returns its JSON answer; an error
// answer becomes an error saying the status and the node's message (the
// answer is returned too, for --json).
func apiGet(cmd *cobra.Command, path string, timeout time.Duration) ([]byte, error) {
	return apiCall(cmd, http.MethodGet, path, timeout)
}

// apiCall is apiGet with another method (POST, DELETE); any 2xx is an
// answer.
func apiCall(cmd *cobra.Command, method, path string, timeout time.Duration) ([]byte, error) {
	return apiSend(cmd, method, path, nil, timeout)
}

// apiSend is apiCall with a JSON body (none when nil).
func apiSend(cmd *cobra.Command, method, path string, body []byte, timeout time.Duration) ([]byte, error) {
	req, base, from, err := apiRequest(cmd.Context(), cmd, method, path)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return nil, unreachable(base, from, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	var e struct {
		Error string `json:"error"`
	}
	if err := decodeJSON(raw, &e); err != nil {
		return nil, fmt.Errorf("the node answered %s with something that is not JSON", resp.Status)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return raw, answerError(resp, e.Error)
	}
	return raw, nil
}

// answerError is the node's refusal, resp, in its own words msg (its
// JSON {"error": ...}) with the status: exit status 3 for a 404 (no one
// has it), 2 for a 400 (a bad argument), else 1.
func answerError(resp *http.Response, msg string) error {
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
	return &exitError{code: code, err: errors.New(msg)}
}

// apiGetJSON fetches path from the node and decodes its answer into a T
// (the api package's type of that answer); raw is the answer as it came,
// for --json and for an error answer.
func apiGetJSON[T any](cmd *cobra.Command, path string, timeout time.Duration) (v T, raw []byte, err error) {
	return apiCallJSON[T](cmd, http.MethodGet, path, timeout)
}

// apiCallJSON is apiGetJSON with another method.
func apiCallJSON[T any](cmd *cobra.Command, method, path string, timeout time.Duration) (v T, raw []byte, err error) {
	raw, err = apiCall(cmd, method, path, timeout)
	if err != nil {
		return v, raw, err
	}
	if err := decodeJSON(raw, &v); err != nil {
		return v, raw, fmt.Errorf("the node's answer to %s: %w", path, err)
	}
	return v, raw, nil
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

// peerLabel names a peer for a person: the household name it claims
// followed by the end of its peer ID, "Alice's NAS (…YZ2fvJ)", or, when
// it sent no name, shortID. The end of the ID is always there: a name is
// the household's own claim, and two households may claim the same one
// (or one may take another's to pass for it); their IDs tell them apart.
func peerLabel(id, name string) string {
	if name == "" {
		return shortID(id)
	}
	return name + " (…" + id[max(len(id)-6, 0):] + ")"
}

// shortID abbreviates a peer ID for a table column: its first 8 and last
// 6 characters.
func shortID(id string) string {
	if len(id) > 16 {
		return id[:8] + "…" + id[len(id)-6:]
	}
	return id
}
