package node_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// strangerClient sends requests to a node's API handler as if from
// remote (host:port), with the bearer token when tok is set.
type strangerClient struct {
	t   *testing.T
	n   *node.Node
	tok string
}

// get answers GET target from remote: the status, the Retry-After header
// and the decoded body.
func (c strangerClient) get(remote, target string, withToken bool) (int, string, map[string]any) {
	c.t.Helper()
	r := httptest.NewRequest("GET", "http://nas.lan"+target, nil)
	r.RemoteAddr = remote
	if withToken {
		r.Header.Set("Authorization", "Bearer "+c.tok)
	}
	rec := httptest.NewRecorder()
	c.n.Handler().ServeHTTP(rec, r)
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		c.t.Fatalf("GET %s from %s: body is not JSON: %q", target, remote, rec.Body)
	}
	return rec.Code, rec.Header().Get("Retry-After"), m
}

// unknownCID is a valid canonical CID no node holds, one per i.
func unknownCID(t *testing.T, i int) string {
	t.Helper()
	h, err := multihash.Sum([]byte(fmt.Sprintf("nobody has this %d %s", i, t.Name())), multihash.SHA2_256, -1)
	if err != nil {
		t.Fatal(err)
	}
	return cid.NewCidV1(cid.Raw, h).String()
}

// TestAPI_StrangerLimits: off loopback with --public-read, a client from
// another machine without the token (a stranger) may start only its burst
// of federated lookups and searches, then gets 429 with Retry-After, per
// IPv4 address or IPv6 /64; what the node holds (a local file, a file
// peers sent) it gets whatever its count; clients on loopback or with the
// token are never limited. The stranger's addresses are ones this machine
// cannot send from, so the requests go to the node's handler directly.
func TestAPI_StrangerLimits(t *testing.T) {
	t.Parallel()
	const burst = 3
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	local := filepath.Join(lib, "Local.Movie.2010.mkv")
	writeOld(t, local, []byte(strings.Repeat("l", 4000)))
	tokFile := filepath.Join(t.TempDir(), "tok")
	a := startNodeWith(t, lib, func(c *node.Config) {
		c.APIAddr, c.APITokenFile, c.PublicRead = "0.0.0.0:0", tokFile, true
		// No token comes back during the test: Retry-After is 1000 s.
		c.StrangerRate, c.StrangerBurst = 0.001, burst
		c.LookupTimeout = 3 * time.Second
	})
	peerLib, _ := filepath.EvalSymlinks(t.TempDir())
	remote := filepath.Join(peerLib, "Remote.Show.S01E02.mkv")
	writeOld(t, remote, []byte(strings.Repeat("r", 4000)))
	b := startNodeWith(t, peerLib, nil)
	if err := connect(a, b); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the peer's search index", func() bool {
		var res struct{ Hits []any }
		getJSON(t, b, "/api/search?q=show", &res)
		return len(res.Hits) == 1
	})
	waiting.For(t, "the node's search index", func() bool {
		var res struct{ Hits []any }
		getJSON(t, a, "/api/search?q=movie", &res)
		return len(res.Hits) == 1
	})
	tok, err := os.ReadFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	c := strangerClient{t: t, n: a, tok: strings.TrimSpace(string(tok))}
	localCID, remoteCID := canonicalOf(t, local), canonicalOf(t, remote)
	next := 0
	unknown := func() string { next++; return unknownCID(t, next) }
	spend := func(remote string) {
		t.Helper()
		for i := range burst {
			if code, _, m := c.get(remote, "/api/meta/"+unknown(), false); code != 404 {
				t.Fatalf("%s, lookup %d of %d: %d %v, want 404", remote, i+1, burst, code, m)
			}
		}
	}
	limited := func(remote, target string) map[string]any {
		t.Helper()
		code, after, m := c.get(remote, target, false)
		if code != 429 {
			t.Fatalf("%s: GET %s = %d %v, want 429", remote, target, code, m)
		}
		if n, err := strconv.Atoi(after); err != nil || n < 1 {
			t.Errorf("%s: Retry-After %q, want whole seconds, at least 1", remote, after)
		}
		return m
	}

	const stranger = "192.0.2.7:4000"
	spend(stranger)
	t.Run("past the burst", func(t *testing.T) {
		m := limited(stranger, "/api/meta/"+unknown())
		msg, _ := m["error"].(string)
		for _, want := range []string{"federated lookups", "192.0.2.7", "0.001 per second, 3 at once", "retry in 1000 s"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not say %q", msg, want)
			}
		}
	})
	t.Run("another port of the address is the same client", func(t *testing.T) {
		limited("192.0.2.7:4001", "/api/meta/"+unknown())
	})
	t.Run("a local file", func(t *testing.T) {
		code, _, m := c.get(stranger, "/api/meta/"+localCID, false)
		if code != 200 || m["source"] != "local" {
			t.Errorf("%d %v, want 200 from the local store", code, m)
		}
	})
	t.Run("a peer's file is not fetched for the stranger", func(t *testing.T) {
		limited(stranger, "/api/meta/"+remoteCID)
	})
	t.Run("loopback client", func(t *testing.T) {
		for i := range burst + 2 {
			if code, _, m := c.get("127.0.0.1:5000", "/api/meta/"+unknown(), false); code != 404 {
				t.Fatalf("lookup %d: %d %v, want 404", i+1, code, m)
			}
		}
		code, _, m := c.get("127.0.0.1:5000", "/api/meta/"+remoteCID, false)
		if code != 200 || m["source"] != b.PeerID() {
			t.Fatalf("peer's file: %d %v, want 200 from %s", code, m, b.PeerID())
		}
	})
	t.Run("a file peers sent, fresh", func(t *testing.T) {
		code, _, m := c.get(stranger, "/api/meta/"+remoteCID, false)
		if code != 200 || m["source"] != b.PeerID() {
			t.Errorf("%d %v, want 200 from the store (sent by %s)", code, m, b.PeerID())
		}
	})
	t.Run("a peer's file's bytes are not fetched for the stranger", func(t *testing.T) {
		for _, path := range []string{"/api/file/" + remoteCID, "/api/sources/" + remoteCID} {
			code, _, m := c.get(stranger, path, false)
			if msg, _ := m["error"].(string); code != 403 || !strings.Contains(msg, "Bearer") {
				t.Errorf("GET %s: %d %v, want 403 saying the token is needed", path, code, m)
			}
		}
		code, _, m := c.get(stranger, "/api/sources/"+localCID, false)
		if code != 200 || m["local"] != true {
			t.Errorf("sources of a local file: %d %v, want 200, local", code, m)
		}
	})
	t.Run("token", func(t *testing.T) {
		for i := range burst + 2 {
			if code, _, m := c.get(stranger, "/api/meta/"+unknown(), true); code != 404 {
				t.Fatalf("lookup %d: %d %v, want 404", i+1, code, m)
			}
		}
	})
	t.Run("another address has its own bucket", func(t *testing.T) {
		spend("192.0.2.8:4000")
		limited("192.0.2.8:4000", "/api/meta/"+unknown())
	})
	t.Run("IPv6: one /64 is one client", func(t *testing.T) {
		spend("[2001:db8:1:2::a]:4000")
		limited("[2001:db8:1:2::b]:4000", "/api/meta/"+unknown())
		limited("[2001:db8:1:2:ffff:ffff:ffff:ffff]:4000", "/api/meta/"+unknown())
		if code, _, m := c.get("[2001:db8:1:3::a]:4000", "/api/meta/"+unknown(), false); code != 404 {
			t.Errorf("another /64: %d %v, want 404", code, m)
		}
	})
	t.Run("search", func(t *testing.T) {
		m := limited(stranger, "/api/search?q=show&federated=1")
		if msg, _ := m["error"].(string); !strings.Contains(msg, "federated searches") || !strings.Contains(msg, "without federated=1") {
			t.Errorf("error %q", msg)
		}
		code, _, m := c.get(stranger, "/api/search?q=movie", false)
		if hits, _ := m["hits"].([]any); code != 200 || len(hits) != 1 {
			t.Errorf("local search: %d %v, want 200 with the local hit", code, m)
		}
		// A stranger within its burst gets the peers' hits.
		code, _, m = c.get("198.51.100.1:4000", "/api/search?q=show&federated=1", false)
		peers, _ := m["peers"].([]any)
		if code != 200 || !slices.Contains(peers, any(b.PeerID())) {
			t.Errorf("federated search within the burst: %d %v, want 200 with %s's answer", code, m, b.PeerID())
		}
	})
	t.Run("metrics", func(t *testing.T) {
		r := httptest.NewRequest("GET", "http://localhost/metrics?name[]=metamesh_api_rate_limited_total", nil)
		r.RemoteAddr = "127.0.0.1:5000"
		rec := httptest.NewRecorder()
		a.Handler().ServeHTTP(rec, r)
		// Refused: 2 past the burst, the peer's file, 192.0.2.8, two in
		// the /64; one search.
		for _, want := range []string{`metamesh_api_rate_limited_total{what="lookup"} 6`, `metamesh_api_rate_limited_total{what="search"} 1`} {
			if !strings.Contains(rec.Body.String(), want) {
				t.Errorf("metrics lack %q:\n%s", want, rec.Body)
			}
		}
	})
}

// TestAPI_StrangerStaleRecord: the refresh of a record peers sent, past
// --peer-record-ttl, asks the peers again and so costs a stranger a
// token; past its limit the stranger gets the record the node has.
func TestAPI_StrangerStaleRecord(t *testing.T) {
	t.Parallel()
	a := startNodeWith(t, t.TempDir(), func(c *node.Config) {
		c.APIAddr, c.APITokenFile, c.PublicRead = "0.0.0.0:0", filepath.Join(t.TempDir(), "tok"), true
		c.StrangerRate, c.StrangerBurst = 0.001, 1
		c.PeerRecordTTL = time.Nanosecond // every record from peers is stale at once
		c.LookupTimeout = 3 * time.Second
	})
	peerLib, _ := filepath.EvalSymlinks(t.TempDir())
	remote := filepath.Join(peerLib, "Remote.Show.S01E02.mkv")
	writeOld(t, remote, []byte(strings.Repeat("r", 4000)))
	b := startNodeWith(t, peerLib, nil)
	if err := connect(a, b); err != nil {
		t.Fatal(err)
	}
	c := strangerClient{t: t, n: a}
	target := "/api/meta/" + canonicalOf(t, remote)
	if code, _, m := c.get("127.0.0.1:5000", target, false); code != 200 || m["source"] != b.PeerID() {
		t.Fatalf("loopback lookup: %d %v, want 200 from %s", code, m, b.PeerID())
	}
	refused := func() string {
		r := httptest.NewRequest("GET", "http://localhost/metrics?name[]=metamesh_api_rate_limited_total", nil)
		r.RemoteAddr = "127.0.0.1:5000"
		rec := httptest.NewRecorder()
		a.Handler().ServeHTTP(rec, r)
		for _, l := range strings.Split(rec.Body.String(), "\n") {
			if v, ok := strings.CutPrefix(l, `metamesh_api_rate_limited_total{what="lookup"} `); ok {
				return v
			}
		}
		t.Fatalf("no lookup count in %s", rec.Body)
		return ""
	}
	// Within its burst the stranger's lookup refreshes the record: its
	// one token is gone after it.
	if code, _, m := c.get("192.0.2.7:4000", target, false); code != 200 || m["source"] != b.PeerID() {
		t.Fatalf("stranger, within the burst: %d %v, want 200 from %s", code, m, b.PeerID())
	}
	if got := refused(); got != "0" {
		t.Errorf("refused %s after a refresh within the burst, want 0", got)
	}
	// Past it the refresh is refused, and the stored record answers.
	if code, after, m := c.get("192.0.2.7:4000", target, false); code != 200 || after != "" || m["source"] != b.PeerID() {
		t.Fatalf("stranger, past the burst: %d (Retry-After %q) %v, want 200 from the store", code, after, m)
	}
	if got := refused(); got != "1" {
		t.Errorf("refused %s after a refresh past the burst, want 1", got)
	}
}
