package node_test

import (
	"github.com/metamesh/node/internal/waiting"

	"encoding/json"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAPI_Params: every endpoint refuses unknown query parameters with a
// JSON 400, /health, /ready and /metrics included.
func TestAPI_Params(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	n := startNodeWith(t, lib, nil)
	tests := []struct {
		path   string
		code   int
		errHas string
	}{
		{"/health", 200, ""},
		{"/health?x=1", 400, `unknown query parameter "x": this endpoint takes none`},
		{"/ready", 200, ""},
		{"/ready?x=1", 400, `unknown query parameter "x": this endpoint takes none`},
		{"/ready?", 200, ""},
		{"/metrics", 200, ""},
		{"/metrics?x=1", 400, `unknown query parameter "x": this endpoint takes name[]`},
		{"/metrics?name=go_goroutines", 400, `unknown query parameter "name": this endpoint takes name[]`},
		{"/api/peers?x", 400, `unknown query parameter "x": this endpoint takes none`},
		// A malformed CID: why, in the words the CLI uses too.
		{"/api/meta/nope", 400, `"n" is not a multibase prefix: a CIDv1 starts with one`},
		{"/api/file/Qm", 400, "a CIDv0 (Qm…) is 46 characters, this one 2"},
		{"/api/cid/bar", 400, "too short to be a CID"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, body := do(t, n, "GET", tt.path, nil)
			if resp.StatusCode != tt.code {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.code, body)
			}
			if tt.errHas == "" {
				return
			}
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("not a JSON error (%s): %q", resp.Header.Get("Content-Type"), body)
			}
			if msg, _ := m["error"].(string); !strings.Contains(msg, tt.errHas) {
				t.Errorf("error %q, want it to contain %q", msg, tt.errHas)
			}
		})
	}
	// name[] is the Prometheus handler's own: only the families named.
	t.Run("/metrics?name[]", func(t *testing.T) {
		resp, body := do(t, n, "GET", "/metrics?name[]=go_goroutines&name[]=metamesh_peers", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		var families []string
		for _, line := range strings.Split(string(body), "\n") {
			if f, ok := strings.CutPrefix(line, "# TYPE "); ok {
				families = append(families, strings.Fields(f)[0])
			}
		}
		if !slices.Equal(families, []string{"go_goroutines", "metamesh_peers"}) {
			t.Errorf("families %q, want go_goroutines and metamesh_peers only", families)
		}
	})
}

// TestAPI_SearchErrors: what /api/search refuses, it refuses in the
// user's terms: a query without a word like an empty one, a cursor it did
// not give for this query without the store's words.
func TestAPI_SearchErrors(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	for _, name := range []string{"alpha one.mkv", "alpha two.mkv", "alpha three.mkv", "beta four.mkv"} {
		writeOld(t, filepath.Join(lib, name), []byte(strings.Repeat(name, 500)))
	}
	n := startNodeWith(t, lib, nil)

	search := func(t *testing.T, query string) (int, map[string]any) {
		t.Helper()
		resp, body := do(t, n, "GET", "/api/search?"+query, nil)
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("GET /api/search?%s: not JSON: %q", query, body)
		}
		return resp.StatusCode, m
	}
	// The indexer follows the store on its own: wait until it has the
	// three alpha files (a page of one then has a next).
	var next string
	ctx := waiting.Context(t)
	for next == "" {
		if code, m := search(t, "q=alpha&limit=1"); code == 200 {
			next, _ = m["next"].(string)
		}
		if next == "" {
			select {
			case <-ctx.Done():
				t.Fatal("the search index never held the alpha files")
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	if code, m := search(t, "q=alpha&limit=1&cursor="+url.QueryEscape(next)); code != 200 {
		t.Fatalf("the cursor of its own query: %d %v", code, m)
	}

	const badCursor = "cursor: not one this node gave for this query; start again without cursor"
	tests := []struct {
		name, query string
		msg         string // the whole error
	}{
		{"empty q", "q=", "missing q: use /api/search?q=<words>"},
		{"no q", "limit=3", "missing q: use /api/search?q=<words>"},
		{"only spaces", "q=%20%20", `q "  " holds no word (only spaces and punctuation): use /api/search?q=<words>`},
		{"only punctuation", "q=" + url.QueryEscape(`-- !? "" …`), `q "-- !? \"\" …" holds no word (only spaces and punctuation): use /api/search?q=<words>`},
		{"no word with a cursor", "q=%20&cursor=" + url.QueryEscape(next), `q " " holds no word (only spaces and punctuation): use /api/search?q=<words>`},
		{"cursor of another query", "q=beta&cursor=" + url.QueryEscape(next), badCursor},
		{"cursor of another query, federated", "q=beta&federated=1&cursor=" + url.QueryEscape(next), badCursor},
		{"garbage cursor", "q=alpha&cursor=zz", badCursor},
		{"cursor not base64", "q=alpha&cursor=" + url.QueryEscape("!!!"), badCursor},
		{"cursor too long", "q=alpha&cursor=" + strings.Repeat("A", 65), badCursor},
		{"unknown parameter", "q=alpha&page=2", `unknown parameter "page" (want q, limit, cursor, federated)`},
		{"limit", "q=alpha&limit=0", `limit "0": want a number from 1 to 100`},
		{"twice", "q=alpha&q=beta", "q given 2 times"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, m := search(t, tt.query)
			msg, _ := m["error"].(string)
			if code != 400 || msg != tt.msg {
				t.Fatalf("GET /api/search?%s = %d %q, want 400 %q", tt.query, code, msg, tt.msg)
			}
		})
	}
}
