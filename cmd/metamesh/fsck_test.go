package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metamesh/node/store/storetest"
)

// A field another program wrote while no node ran is a violation until
// fsck --repair lists it.
func TestFsck_Repair(t *testing.T) {
	t.Parallel()
	srv := storetest.Server(t)
	lib := t.TempDir()
	os.WriteFile(filepath.Join(lib, "a.bin"), []byte("aaaa"), 0o644)
	if _, errOut, code := metamesh(t, nil, "scan", "--library", lib, "--redis-url", srv.URL()); code != 0 {
		t.Fatalf("scan: %d %s", code, errOut)
	}
	root, err := exec.Command("redis-cli", "-s", srv.Addr(), "SRANDMEMBER", "file:__index__").Output()
	if err != nil {
		t.Fatal(err)
	}
	key := "file:" + strings.TrimSpace(string(root)) + "/tmdb/id"
	if out, err := exec.Command("redis-cli", "-s", srv.Addr(), "SET", key, "27205").CombinedOutput(); err != nil {
		t.Fatalf("redis-cli: %v %s", err, out)
	}
	if out, _, code := metamesh(t, nil, "fsck", "--redis-url", srv.URL()); code != 1 || !strings.Contains(out, "not listed") {
		t.Fatalf("fsck before repair: exit %d %q", code, out)
	}
	out, _, code := metamesh(t, nil, "fsck", "--repair", "--json", "--redis-url", srv.URL())
	var got struct {
		OK       bool
		Repaired struct{ Listed int }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 || !got.OK || got.Repaired.Listed != 1 {
		t.Fatalf("fsck --repair: exit %d %q (%v)", code, out, err)
	}
	if out, _, code := metamesh(t, nil, "fsck", "--redis-url", srv.URL()); code != 0 {
		t.Fatalf("fsck after repair: exit %d %q", code, out)
	}
}
