package main

import (
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store/storetest"
)

// nonEmptyLines are the lines of s that hold something.
func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// After SIGTERM, once everything is shut down, the last line says the
// node stopped; every line is in the node's format.
func TestRun_LastLineSaysStopped(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	api := freeAddr(t)
	var logs storetest.Buffer
	cmd := exec.Command(binary, "run", "--library", lib, "--data", storetest.Dir(t), "--api", api, "--listen", "/ip4/127.0.0.1/tcp/0")
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitReady(t, cmd, api)
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-waiting.After(): // a hang detector
		cmd.Process.Kill()
		t.Fatal("the node did not stop after SIGTERM")
	}
	lines := nonEmptyLines(logs.String())
	if len(lines) == 0 || !strings.Contains(lines[len(lines)-1], `level=INFO msg="metamesh stopped"`) {
		t.Errorf("the last line is not the node saying it stopped:\n%s", logs.String())
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "time=") {
			t.Errorf("a line not in the node's format: %s", l)
		}
	}
}

// A QUIC listen port in use is one clear error; nothing of libp2p's
// start-up (fx) reaches the terminal in another format.
func TestRun_ListenPortTakenIsOneError(t *testing.T) {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, port, _ := net.SplitHostPort(c.LocalAddr().String())
	addr := "/ip4/127.0.0.1/udp/" + port + "/quic-v1"
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	var logs storetest.Buffer
	cmd := exec.Command(binary, "run", "--library", lib, "--data", storetest.Dir(t), "--api", freeAddr(t), "--listen", addr)
	cmd.Stderr = &logs
	if err := cmd.Run(); err == nil {
		t.Fatalf("the node ran on %s, a port in use", addr)
	}
	lines := nonEmptyLines(logs.String())
	want := "metamesh: p2p: cannot listen on " + addr + " (--listen): address already in use; another node? give this one a port of its own with --listen (env METAMESH_LISTEN; make run LISTEN=…)"
	if len(lines) == 0 || lines[len(lines)-1] != want {
		t.Errorf("last line is not %q:\n%s", want, logs.String())
	}
	for _, l := range lines[:max(len(lines)-1, 0)] {
		if !strings.HasPrefix(l, "time=") || strings.Contains(l, "level=ERROR") || strings.Contains(l, "level=WARN") {
			t.Errorf("a line besides the error: %s", l)
		}
	}
}
