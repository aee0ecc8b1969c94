package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Commands that talk to a node send the token of --api-token-file (or
// its environment twin) and say which file they could not read.
func TestClient_TokenFile(t *testing.T) {
	var mu sync.Mutex
	var auth string
	got := func() string { mu.Lock(); defer mu.Unlock(); return auth }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = r.Header.Get("Authorization")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"peerId":"x"}`))
	}))
	defer srv.Close()
	tok := filepath.Join(t.TempDir(), "api-token")
	os.WriteFile(tok, []byte("s3cret\n"), 0o600)
	if _, errOut, code := metamesh(t, nil, "status", "--api", srv.URL, "--api-token-file", tok); code != 0 || got() != "Bearer s3cret" {
		t.Fatalf("status with a token file: exit %d %s, Authorization %q", code, errOut, got())
	}
	mu.Lock()
	auth = ""
	mu.Unlock()
	if _, _, code := metamesh(t, []string{"METAMESH_API_TOKEN_FILE=" + tok}, "status", "--api", strings.TrimPrefix(srv.URL, "http://")); code != 0 || got() != "Bearer s3cret" {
		t.Fatalf("status with the env twin and host:port: exit %d, Authorization %q", code, got())
	}
	if _, errOut, code := metamesh(t, nil, "status", "--api", srv.URL, "--api-token-file", tok+".missing"); code == 0 || !strings.Contains(errOut, "--api-token-file") {
		t.Errorf("a missing token file: exit %d %q", code, errOut)
	}
}

// TestClient_Numbers: whole numbers of the node's JSON print as integers
// in every readable output, however the node wrote them (3000000 or
// 3e6), and --json prints them as the node wrote them.
func TestClient_Numbers(t *testing.T) {
	answers := map[string]string{
		"/api/meta/bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku": `{"canonical_cid":"bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku","source":"local",
			"cids":["bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"],"sizeByte":3000000,"mtime":1700000000,
			"video":{"bitrate":1.2e7,"duration":5400.5}}`,
		"/api/status": `{"version":"dev","peerId":"12D3KooWx","roots":2000000,"peers":0,"provideQueue":1e6,
			"scan":{"state":"watching","filesDone":2000000,"filesTotal":2000000,"errors":0},"redis":{"ok":true,"addr":"r.sock"}}`,
		"/api/search": `{"hits":[{"title":"Big","year":2001,"season":1,"episode":2,"size":3e6,"source":"local","cid":"bafkx"}]}`,
		"/api/peers":  `{"peers":[{"id":"12D3KooWpeer","latencyMs":1500000,"addrs":["/ip4/10.0.0.2/tcp/4681"]}]}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(answers[r.URL.Path]))
	}))
	defer srv.Close()
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"lookup", "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"},
			// One column of names, as wide as the longest (video/duration).
			[]string{"sizeByte       3000000\n", "mtime          1700000000\n", "video/bitrate  12000000\n", "video/duration 5400.5\n", "canonical      bafk"}},
		{[]string{"status"}, []string{"files      2000000 roots\n", "scan       watching: 2000000/2000000 files, 0 errors\n", "announce   1000000 queued\n"}},
		{[]string{"search", "big"}, []string{"2001", "S01E02", "2.9 MiB"}},
		{[]string{"peers"}, []string{"12D3KooWpeer  1500000ms  /ip4/10.0.0.2/tcp/4681\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			out, errOut, code := metamesh(t, nil, append(tt.args, "--api", srv.URL)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "e+") {
				t.Errorf("output has a number in exponent form:\n%s", out)
			}
		})
	}
	out, _, code := metamesh(t, nil, "lookup", "--json", "--api", srv.URL, "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku")
	if code != 0 || !strings.Contains(out, `"sizeByte": 3000000`) {
		t.Errorf("lookup --json: exit %d\n%s", code, out)
	}
}
