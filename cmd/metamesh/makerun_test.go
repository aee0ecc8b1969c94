package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeRun_BadLibrary: make run creates only its default library; a
// LIBRARY that is missing or a file reaches the binary, whose error names
// it, and nothing is created in its place.
func TestMakeRun_BadLibrary(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is not installed: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// The binary the suite built stands in for make's own build.
	bin, err := filepath.Rel(root, binary)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		library, says string
	}{
		{filepath.Join(dir, "libary-typo"), "does not exist (--library)"},
		{file, "is not a directory"},
	} {
		cmd := exec.Command("make", "-s", "-C", root, "run", "GO=true", "BIN="+bin,
			"LIBRARY="+tt.library, "DATA="+filepath.Join(dir, "data"), "API=127.0.0.1:0")
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("make run LIBRARY=%s succeeded:\n%s", tt.library, out)
			continue
		}
		if !strings.Contains(string(out), tt.says) || !strings.Contains(string(out), "Ctrl-C stops it") {
			t.Errorf("make run LIBRARY=%s said:\n%s\nwant %q", tt.library, out, tt.says)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "libary-typo")); !os.IsNotExist(err) {
		t.Errorf("the mistyped library was created (%v)", err)
	}
}
