package node_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/store"
)

// doBody is do with a request body.
func doBody(t testing.TB, n *node.Node, method, path string, body []byte, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+n.APIAddr()+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestAPI_Snapshot(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	p := filepath.Join(lib, "Film.2001.mkv")
	writeOld(t, p, []byte(strings.Repeat("s", 5000)))
	c := canonicalOf(t, p)
	src := startNodeWith(t, lib, nil)
	dst := startNodeWith(t, t.TempDir(), nil)

	resp, snap := do(t, src, "GET", "/api/snapshot", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/gzip" {
		t.Fatalf("export: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sr, err := store.NewSnapshotReader(bytes.NewReader(snap))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := sr.Next(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("exported snapshot: %v", err)
		}
	}
	if sr.Roots() != 1 || sr.Header.Peer != src.PeerID() {
		t.Errorf("snapshot of %d roots by %q, want 1 by %s", sr.Roots(), sr.Header.Peer, src.PeerID())
	}

	report := func(body []byte) api.SnapshotReport {
		t.Helper()
		var r api.SnapshotReport
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return r
	}
	cut := snap[:len(snap)-10]
	resp, body := doBody(t, dst, "POST", "/api/snapshot", cut, nil)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "snapshot line") {
		t.Errorf("a cut snapshot: %d %s, want 400 naming the line", resp.StatusCode, body)
	}
	resp, body = doBody(t, dst, "POST", "/api/snapshot?mode=replace&dry_run=1", snap, nil)
	if r := report(body); resp.StatusCode != 200 || r.Added != 1 || !r.DryRun {
		t.Errorf("dry run: %d %s", resp.StatusCode, body)
	}
	if resp, _ := do(t, dst, "GET", "/api/meta/"+c+"?local=1", nil); resp.StatusCode != 404 {
		t.Errorf("after a refused file and a dry run, meta: %d, want 404", resp.StatusCode)
	}
	resp, body = doBody(t, dst, "POST", "/api/snapshot?map_path="+lib+"=/media", snap, nil)
	if r := report(body); resp.StatusCode != 200 || r.Added != 1 {
		t.Fatalf("import: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, dst, "GET", "/api/meta/"+c+"?local=1", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "/media/Film.2001.mkv") {
		t.Errorf("imported meta: %d %s", resp.StatusCode, body)
	}
	resp, body = doBody(t, dst, "POST", "/api/snapshot?mode=sideways", snap, nil)
	if resp.StatusCode != 400 {
		t.Errorf("mode=sideways: %d %s", resp.StatusCode, body)
	}
}

func TestAPI_SnapshotAccess(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	writeOld(t, filepath.Join(lib, "a.mkv"), []byte(strings.Repeat("a", 3000)))
	tokFile := filepath.Join(t.TempDir(), "tok")
	n := startNodeWith(t, lib, func(cfg *node.Config) {
		cfg.APIAddr, cfg.APITokenFile, cfg.PublicRead = "0.0.0.0:0", tokFile, true
	})
	b, err := os.ReadFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	auth := map[string]string{"Authorization": "Bearer " + strings.TrimSpace(string(b))}
	for _, tt := range []struct {
		name, method string
		hdr          map[string]string
		code         int
	}{
		{"export without the token (public-read)", "GET", nil, 401},
		{"import without the token", "POST", nil, 401},
		{"import with a cookie", "POST", map[string]string{"Cookie": "metamesh_session=x", "Sec-Fetch-Site": "same-origin"}, 401},
		{"export with the token", "GET", auth, 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := doBody(t, n, tt.method, "/api/snapshot", nil, tt.hdr)
			if resp.StatusCode != tt.code {
				t.Errorf("%d, want %d: %s", resp.StatusCode, tt.code, body)
			}
		})
	}
}
