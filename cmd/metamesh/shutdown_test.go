package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store/storetest"
)

// SIGTERM stops a running node and its managed redis-server; a second
// signal is not needed.
func TestRun_SIGTERMStopsEverything(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(lib, "a.bin"), []byte("some bytes"), 0o644)
	data := storetest.Dir(t)
	api := freeAddr(t)
	cmd := exec.Command(binary, "run", "--library", lib, "--data", data, "--api", api, "--listen", "/ip4/127.0.0.1/tcp/0", "--log-level", "warn")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitReady(t, cmd, api)
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		t.Logf("stopped %s after SIGTERM (%v)", time.Since(start).Round(time.Millisecond), err)
	case <-waiting.After(): // a hang detector, not a timing check
		cmd.Process.Kill()
		t.Fatal("the node did not stop after SIGTERM")
	}
	out, _ := exec.Command("pgrep", "-af", "redis-server").Output()
	if strings.Contains(string(out), data) {
		t.Errorf("the managed redis-server outlived the node:\n%s", out)
	}
}
