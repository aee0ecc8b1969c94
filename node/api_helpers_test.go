package node_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/store/storetest"
)

// startNodeWith starts a node on lib with cfg changed by edit, and waits
// for its initial scan.
func startNodeWith(t testing.TB, lib string, edit func(*node.Config)) *node.Node {
	t.Helper()
	n, _ := startNodeLogged(t, lib, edit)
	return n
}

// startNodeLogged is startNodeWith with the node's log kept (at Info),
// to read and to show when the test fails.
func startNodeLogged(t testing.TB, lib string, edit func(*node.Config)) (*node.Node, *storetest.Buffer) {
	t.Helper()
	logs := &storetest.Buffer{}
	cfg := node.Config{
		Libraries: []string{lib}, RedisURL: storetest.Server(t).URL(), APIAddr: "127.0.0.1:0", DataDir: storetest.Dir(t),
		P2P: p2p.Config{Listen: []string{"/ip4/127.0.0.1/tcp/0"}}, Settle: 30 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	}
	if edit != nil {
		edit(&cfg)
	}
	n, err := node.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.Close()
		if t.Failed() {
			t.Logf("the node's log:\n%s", logs.String())
		}
	})
	if err := n.Ingester().WaitIdle(waiting.Context(t)); err != nil {
		t.Fatal(err)
	}
	return n, logs
}

// writeOld writes a file with an mtime an hour ago, so the initial scan
// takes it as settled whatever Settle is.
func writeOld(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
}

// canonicalOf is the canonical CID of the file at p.
func canonicalOf(t *testing.T, p string) string {
	t.Helper()
	h, err := ingest.HashFile(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return h.Canonical
}

// do sends a request with headers and returns the response and its body.
func do(t testing.TB, n *node.Node, method, path string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+n.APIAddr()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}
