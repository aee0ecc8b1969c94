package node_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metamesh/node/node"
)

func TestAPI_Access(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	p := filepath.Join(lib, "Show.S01E02.mkv")
	writeOld(t, p, []byte(strings.Repeat("z", 3000)))
	c := canonicalOf(t, p)
	tokFile := filepath.Join(t.TempDir(), "tok")

	loop := startNodeWith(t, lib, func(cfg *node.Config) { cfg.APIHosts = []string{"media.home"} })
	open := startNodeWith(t, lib, func(cfg *node.Config) { cfg.APIAddr = "0.0.0.0:0"; cfg.APITokenFile = tokFile })
	public := startNodeWith(t, lib, func(cfg *node.Config) { cfg.APIAddr = "0.0.0.0:0"; cfg.PublicRead = true })
	b, err := os.ReadFile(tokFile)
	if err != nil {
		t.Fatalf("token file not generated: %v", err)
	}
	if fi, _ := os.Stat(tokFile); fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	tok := strings.TrimSpace(string(b))
	auth := map[string]string{"Authorization": "Bearer " + tok}

	tests := []struct {
		name string
		n    *node.Node
		path string
		hdr  map[string]string
		code int
	}{
		{"loopback no token", loop, "/api/status", nil, 200},
		{"loopback localhost", loop, "/api/status", map[string]string{"Host": "localhost:4680"}, 200},
		{"loopback [::1]", loop, "/api/status", map[string]string{"Host": "[::1]:4680"}, 200},
		{"loopback 127.0.0.2 (--api 127.0.0.2:PORT)", loop, "/api/status", map[string]string{"Host": "127.0.0.2:4740"}, 200},
		{"loopback rebinding to a public IP", loop, "/api/status", map[string]string{"Host": "203.0.113.9:4680"}, 403},
		{"loopback --api-host", loop, "/api/status", map[string]string{"Host": "media.home"}, 200},
		{"loopback rebinding", loop, "/api/status", map[string]string{"Host": "evil.example:4680"}, 403},
		{"loopback rebinding meta", loop, "/api/meta/" + c, map[string]string{"Host": "evil.example"}, 403},
		{"loopback: the node's own page", loop, "/api/meta/" + c + "?local=1", map[string]string{"Sec-Fetch-Site": "same-origin"}, 200},
		{"loopback: another port of the host", loop, "/api/meta/" + c + "?local=1", map[string]string{"Sec-Fetch-Site": "same-site"}, 200},
		{"loopback: a page of another site", loop, "/api/meta/" + c, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"loopback: another site's search", loop, "/api/search?q=show&federated=1", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"loopback: another site's link to the page", loop, "/", map[string]string{"Sec-Fetch-Site": "cross-site"}, 200},
		{"public-read: a page of another site", public, "/api/file/" + c, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"token: health open", open, "/health", nil, 200},
		{"token: ready open", open, "/ready", nil, 200},
		{"token: metrics open", open, "/metrics", nil, 200},
		{"token: status without", open, "/api/status", nil, 401},
		{"token: meta without", open, "/api/meta/" + c, nil, 401},
		{"token: file without", open, "/api/file/" + c, nil, 401},
		{"token: wrong", open, "/api/status", map[string]string{"Authorization": "Bearer " + strings.Repeat("0", len(tok))}, 401},
		{"token: prefix of the right one", open, "/api/status", map[string]string{"Authorization": "Bearer " + tok[:10]}, 401},
		{"token: basic scheme", open, "/api/status", map[string]string{"Authorization": "Basic " + tok}, 401},
		{"token: right", open, "/api/status", auth, 200},
		{"token: right meta", open, "/api/meta/" + c + "?local=1", auth, 200},
		{"token: any Host", open, "/api/status", map[string]string{"Authorization": "Bearer " + tok, "Host": "nas.lan"}, 200},
		{"public-read meta", public, "/api/meta/" + c + "?local=1", nil, 200},
		{"public-read file", public, "/api/file/" + c, nil, 200},
		{"public-read status closed", public, "/api/status", nil, 401},
		{"public-read peers closed", public, "/api/peers", nil, 401},
		{"public-read events closed", public, "/api/events", nil, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, tt.n, "GET", tt.path, tt.hdr)
			if resp.StatusCode != tt.code {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.code, body)
			}
			if tt.code == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			if resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("CORS header %q", resp.Header.Get("Access-Control-Allow-Origin"))
			}
		})
	}
}

func TestAPI_Errors(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	p := filepath.Join(lib, "Show", "Season 1", "Show.S01E02.mkv")
	writeOld(t, p, []byte(strings.Repeat("e", 3000)))
	c := canonicalOf(t, p)
	n := startNodeWith(t, lib, nil)

	tests := []struct {
		path   string
		code   int
		errHas string
	}{
		{"/api/meta", 400, "missing CID"},
		{"/api/meta/", 400, "missing CID"},
		{"//api/status", 404, "did you mean /api/status"},
		{"/api/meta/" + c + "/extra", 404, "takes nothing after the CID"},
		{"/api/meta/banana", 400, `invalid CID "banana"`},
		{"/api/meta/" + c + "?local=banana", 400, `local="banana"`},
		{"/api/meta/" + c + "?locl=1", 400, `unknown query parameter "locl"`},
		{"/api/status?x=1", 400, "takes none"},
		{"/api/events?x=1", 400, "takes none"},
		{"/api/nope", 404, "no such endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, body := do(t, n, "GET", tt.path, nil)
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatalf("not JSON: %q", body)
			}
			msg, _ := m["error"].(string)
			if resp.StatusCode != tt.code || !strings.Contains(msg, tt.errHas) {
				t.Fatalf("status %d %q, want %d with %q", resp.StatusCode, msg, tt.code, tt.errHas)
			}
			if strings.Contains(msg, "invalid cid: invalid cid") {
				t.Errorf("repeated prefix: %q", msg)
			}
		})
	}
	t.Run("events Last-Event-ID malformed", func(t *testing.T) {
		resp, body := do(t, n, "GET", "/api/events", map[string]string{"Last-Event-ID": "x"})
		if resp.StatusCode != 400 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
	})

	t.Run("typed document", func(t *testing.T) {
		resp, body := do(t, n, "GET", "/api/meta/"+c+"?local=true", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		var m map[string]any
		json.Unmarshal(body, &m)
		for _, f := range []string{"sizeByte", "duplicateCount"} {
			if _, ok := m[f].(float64); !ok {
				t.Errorf("%s = %#v, want a number", f, m[f])
			}
		}
		if s, ok := m["mtime"].(string); !ok || !strings.Contains(s, "T") {
			t.Errorf("mtime = %#v, want RFC 3339", m["mtime"])
		}
		if m["canonical_cid"] != c {
			t.Errorf("canonical_cid %v, want %s", m["canonical_cid"], c)
		}
	})
}
