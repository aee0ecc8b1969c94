package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRun_DataDirFull: metamesh run on a data directory with no space
// left says so in one line and exits 1, before it opens anything there
// (no redis/, no identity, no index is made).
func TestRun_DataDirFull(t *testing.T) {
	t.Parallel()
	data, err := os.MkdirTemp("", "mmfull")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(data) })
	if err := syscall.Mount("tmpfs", data, "tmpfs", 0, "size=1m,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs for a data directory to fill (%v): run as root", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(data, syscall.MNT_DETACH) })
	f, err := os.Create(filepath.Join(data, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{64 << 10, 1} {
		for buf := make([]byte, chunk); ; {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
	f.Close()

	_, stderr, code := metamesh(t, nil, "run", "--library", t.TempDir(), "--data", data,
		"--api", "127.0.0.1:0", "--listen", "/ip4/127.0.0.1/tcp/0")
	if want := "metamesh: data directory full: 0 bytes free on " + data + "\n"; stderr != want || code != 1 {
		t.Errorf("run on a full data directory: exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
	}
	entries, _ := os.ReadDir(data)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 1 {
		t.Errorf("the data directory holds %s after the refused start; want only the filler", strings.Join(names, ", "))
	}
}
