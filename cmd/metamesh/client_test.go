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
