package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store/storetest"
)

// TestRun_LoneNode: a node without peers. peers and providers say there
// are none (--json: empty lists), lookup prints the file's summary (its
// name for a title, its 3,000,000 bytes as a size, its path) by its CID
// and by the file itself, and
// kad-dht's failed routing table refresh (nobody to ask) is a debug
// line, on one line.
func TestRun_LoneNode(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	f := filepath.Join(lib, "big.bin")
	if err := os.WriteFile(f, bytes.Repeat([]byte("m"), 3_000_000), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, _ := metamesh(t, nil, "hash", f)
	var h map[string]any
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatalf("hash: %q: %v", out, err)
	}
	cid := h["sha2-256"].(string)
	data, api := storetest.Dir(t), freeAddr(t)
	var logs storetest.Buffer
	cmd := exec.Command(binary, "run", "--library", lib, "--data", data, "--api", api, "--listen", "/ip4/127.0.0.1/tcp/0", "--settle", "100ms", "--log-level", "debug")
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	waiting.Until(t, "lookup to find the file", func() string {
		o, _, code := metamesh(t, nil, "lookup", "--local", "--api", api, cid)
		if code == 0 {
			out = o
			return ""
		}
		return fmt.Sprintf("last exit %d\n%s", code, logs.String())
	}, cliPoll)
	for _, want := range [][]string{{"title", "big.bin"}, {"size", "2.9", "MiB"}, {"path", f}} {
		if !slices.ContainsFunc(strings.Split(out, "\n"), func(l string) bool { return slices.Equal(strings.Fields(l), want) }) {
			t.Errorf("lookup lacks the line %q:\n%s", strings.Join(want, " "), out)
		}
	}
	// The file itself finds it too: hashed, looked up by its canonical
	// CID.
	byFile, errOut, code := metamesh(t, nil, "lookup", "--local", "--api", api, f)
	if code != 0 || byFile != out || errOut != "hashed "+f+": "+h["canonical"].(string)+"\n" {
		t.Errorf("lookup FILE: exit %d, stderr %q, stdout:\n%s\nwant what lookup CID printed:\n%s", code, errOut, byFile, out)
	}

	tests := []struct {
		args     []string
		want     string
		jsonList string
	}{
		{[]string{"peers"}, "no connected peers\n", "peers"},
		{[]string{"providers", cid}, "no providers found for " + cid + " (the node has no peers: the DHT has no one to ask yet)\n", "providers"},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			out, errOut, code := metamesh(t, nil, append(tt.args, "--api", api)...)
			if code != 0 || out != tt.want {
				t.Errorf("exit %d, stdout %q, stderr %q; want 0 and %q", code, out, errOut, tt.want)
			}
			out, _, code = metamesh(t, nil, append(tt.args, "--api", api, "--json")...)
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(out), &m); code != 0 || err != nil || string(m[tt.jsonList]) != "[]" {
				t.Errorf("--json: exit %d, %q (%v); want %q: []", code, out, err, tt.jsonList)
			}
		})
	}

	var line string
	waiting.Until(t, "a routing table refresh logged", func() string {
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "failed when refreshing routing table") {
				line = l
				return ""
			}
		}
		return "the log so far:\n" + logs.String()
	})
	if !strings.Contains(line, "level=DEBUG") || !strings.Contains(line, `msg="failed when refreshing routing table"`) ||
		strings.Contains(line, `\n`) || !strings.Contains(line, "failed to find any peer in table") {
		t.Errorf("refresh failure of a node without peers: %s\nwant one debug line, its error in error=", line)
	}
}
