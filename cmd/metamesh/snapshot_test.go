package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store/storetest"
)

// startRunOn starts `metamesh run` on lib and waits until it is ready.
func startRunOn(t *testing.T, lib string) string {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(binary, "run", "--library", lib, "--data", storetest.Dir(t), "--api", addr,
		"--listen", "/ip4/127.0.0.1/tcp/0", "--settle", "100ms", "--log-level", "warn")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	waitReady(t, cmd, addr)
	return addr
}

// TestExportImport: metamesh export writes a running node's snapshot to
// a file, metamesh import reads it into another node (a dry run first,
// which writes nothing); an altered file is refused with exit status 2
// and the line.
func TestExportImport(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	if err := os.WriteFile(filepath.Join(lib, "Film.2001.mkv"), []byte(strings.Repeat("f", 4000)), 0o644); err != nil {
		t.Fatal(err)
	}
	hashed, errOut, code := metamesh(t, nil, "hash", filepath.Join(lib, "Film.2001.mkv"))
	var h struct{ Canonical string }
	if err := json.Unmarshal([]byte(hashed), &h); code != 0 || err != nil {
		t.Fatalf("hash: %d %s %v", code, errOut, err)
	}
	c := h.Canonical
	a := startRunOn(t, lib)
	waiting.For(t, "the file to be scanned", func() bool { st, err := status(a); return err == nil && st.Roots == 1 })
	b := startRunOn(t, t.TempDir())

	file := filepath.Join(t.TempDir(), "home.snapshot")
	out, errOut, code := metamesh(t, nil, "export", file, "--api", a)
	if code != 0 || !strings.Contains(out, "1 files") {
		t.Fatalf("export: %d %q %s", code, out, errOut)
	}
	meta := func() int {
		resp, err := http.Get("http://" + b + "/api/meta/" + c + "?local=1")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	out, errOut, code = metamesh(t, nil, "import", file, "--api", b, "--dry-run", "--map-path", lib+"=/media")
	if code != 0 || !strings.Contains(out, "1 added") || !strings.Contains(out, "nothing written") || meta() != 404 {
		t.Fatalf("dry run: %d %q %s", code, out, errOut)
	}
	bad := filepath.Join(t.TempDir(), "bad.snapshot")
	raw, _ := os.ReadFile(file)
	os.WriteFile(bad, raw[:len(raw)-8], 0o644)
	if _, errOut, code := metamesh(t, nil, "import", bad, "--api", b); code != 2 || !strings.Contains(errOut, "snapshot line") || meta() != 404 {
		t.Fatalf("a cut file: exit %d %q, want 2 naming the line", code, errOut)
	}
	out, errOut, code = metamesh(t, nil, "import", file, "--api", b, "--map-path", lib+"=/media")
	if code != 0 || !strings.Contains(out, "1 added") || meta() != 200 {
		t.Fatalf("import: %d %q %s", code, out, errOut)
	}
}
