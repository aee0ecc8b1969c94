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

// `metamesh duplicates` against a running node: by content the paths of
// one file, by title the two encodes of one film side by side, --json,
// and a usage error for a bad --by.
func TestDuplicates_CLI(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	data, api := storetest.Dir(t), freeAddr(t)
	write := func(name string, b []byte) {
		t.Helper()
		p := filepath.Join(lib, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	same, big, small := make([]byte, 5000), make([]byte, 8000), make([]byte, 6000)
	for _, b := range [][]byte{same, big, small} {
		rand.Read(b)
	}
	write("Movies/Lone.Lighthouse.2011.mkv", same)
	write("Backup/Lone.Lighthouse.2011.mkv", same)
	write("Movies/Quiet.Harbour.2015.1080p.x264.mkv", big)
	write("Movies/Quiet Harbour (2015)/Quiet Harbour.720p.mkv", small)
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
	waiting.Until(t, "metamesh duplicates --by title to list the film", func() string {
		o, _, code := metamesh(t, nil, "duplicates", "--api", api, "--by", "title")
		if code == 0 && strings.Contains(o, "Quiet Harbour (2015): 2 copies") {
			out = o
			return ""
		}
		return fmt.Sprintf("last exit %d, %q", code, o)
	}, cliPoll)
	lines := strings.Split(out, "\n")
	if len(lines) < 4 || !strings.Contains(lines[1], "RESOLUTION") ||
		!strings.Contains(lines[2], "1080p") || !strings.Contains(lines[2], "H.264") || !strings.Contains(lines[2], "Quiet.Harbour.2015.1080p.x264.mkv") ||
		!strings.Contains(lines[3], "720p") || !strings.Contains(lines[3], "Quiet Harbour (2015)/Quiet Harbour.720p.mkv") ||
		!strings.Contains(out, "1 group,") {
		t.Errorf("--by title:\n%s", out)
	}

	waiting.Until(t, "metamesh duplicates to list the file's two paths", func() string {
		o, _, code := metamesh(t, nil, "duplicates", "--api", api)
		if code == 0 && strings.Contains(o, "Lone Lighthouse (2011): 2 copies") {
			out = o
			return ""
		}
		return fmt.Sprintf("last exit %d, %q", code, o)
	}, cliPoll)
	for _, p := range []string{"Movies/Lone.Lighthouse.2011.mkv", "Backup/Lone.Lighthouse.2011.mkv", "PATH"} {
		if !strings.Contains(out, p) {
			t.Errorf("by content: no %q in\n%s", p, out)
		}
	}
	if strings.Contains(out, "Quiet") {
		t.Errorf("by content lists the film's distinct files:\n%s", out)
	}

	o, _, code := metamesh(t, nil, "duplicates", "--api", api, "--by", "title", "--json")
	var m struct {
		By     string `json:"by"`
		Groups []struct {
			Copies []struct {
				Path string `json:"path"`
			} `json:"copies"`
		} `json:"groups"`
	}
	if code != 0 || json.Unmarshal([]byte(o), &m) != nil || m.By != "title" || len(m.Groups) != 1 || len(m.Groups[0].Copies) != 2 {
		t.Errorf("--json: exit %d, %q", code, o)
	}
	if _, e, code := metamesh(t, nil, "duplicates", "--api", api, "--by", "size"); code != 2 || !strings.Contains(e, `--by "size": want content or title`) {
		t.Errorf("--by size: exit %d, stderr %q", code, e)
	}
}
