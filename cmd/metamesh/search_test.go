package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store/storetest"
)

// `metamesh search` against a running node: the table, --json, and the
// server's error text with a non-zero exit for a bad --limit.
func TestSearch_CLI(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	data, api := storetest.Dir(t), freeAddr(t)
	b := make([]byte, 5000)
	rand.Read(b)
	if err := os.WriteFile(filepath.Join(lib, "Amélie.Poulain.2001.mkv"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	// A title with a right-to-left override, as a peer's record may hold
	// one: printed raw, it would show the rest of its line reversed.
	b[0]++
	if err := os.WriteFile(filepath.Join(lib, "Bidi.Trap\u202evkm.exe\u202c.2003.mkv"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "run", "--library", lib, "--data", data, "--api", api, "--listen", "/ip4/127.0.0.1/tcp/0",
		"--settle", "100ms", "--log-level", "warn")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	var out string
	waiting.Until(t, "metamesh search to find the file", func() string {
		o, _, code := metamesh(t, nil, "search", "--api", api, "AMELIE")
		if code == 0 && strings.Contains(o, "Poulain") {
			out = o
			return ""
		}
		return fmt.Sprintf("last exit %d, %q", code, o)
	}, cliPoll)
	if !strings.Contains(out, "TITLE") || !strings.Contains(out, "2001") || !strings.Contains(out, "local") {
		t.Errorf("table = %q", out)
	}
	o, _, code := metamesh(t, nil, "search", "poulain", "--json", "--federated", "--api", api)
	var m struct {
		Hits  []map[string]any `json:"hits"`
		Peers []string         `json:"peers"`
	}
	if code != 0 || json.Unmarshal([]byte(o), &m) != nil || len(m.Hits) != 1 || m.Hits[0]["source"] != "local" || m.Peers == nil {
		t.Errorf("--json: exit %d, %q", code, o)
	}
	// Words given apart are one query.
	if o, _, code := metamesh(t, nil, "search", "--api", api, "amelie", "poulain"); code != 0 || !strings.Contains(o, "Poulain") {
		t.Errorf("two words: exit %d, %q", code, o)
	}
	if o, _, _ := metamesh(t, nil, "search", "--api", api, "nothing-like-it"); !strings.Contains(o, "no match") {
		t.Errorf("no match: %q", o)
	}
	o, _, code = metamesh(t, nil, "search", "--api", api, "bidi")
	if code != 0 || !strings.Contains(o, `Trap\u202evkm exe\u202c`) || strings.ContainsAny(o, "\u202e\u202c") {
		t.Errorf("a title with bidi overrides: exit %d, %q; want them escaped", code, o)
	}
	_, e, code := metamesh(t, nil, "search", "--api", api, "--limit", "500", "x")
	if code == 0 || !strings.Contains(e, "limit") {
		t.Errorf("--limit 500: exit %d, stderr %q", code, e)
	}
}
