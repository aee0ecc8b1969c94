package node_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// mountTmpfs mounts a tmpfs of size (mount's size=, e.g. "160m") on a
// directory of the test's, unmounted when the test ends; the test skips
// when it cannot mount (not root).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "mmfull")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(dir) })
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs for a data directory to fill (%v): run as root", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fillDisk writes the file p until its file system has no byte left.
func fillDisk(t *testing.T, p string) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, chunk := range []int{1 << 20, 4 << 10, 1} {
		buf := make([]byte, chunk)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
}

// readyAnswer is GET /ready's status and reason.
func readyAnswer(t *testing.T, n *node.Node) (int, string) {
	t.Helper()
	var body struct{ Error string }
	resp, raw := do(t, n, "GET", "/ready", nil)
	_ = json.Unmarshal(raw, &body)
	return resp.StatusCode, body.Error
}

// metricLine is the line of the metric name (without labels) in GET
// /metrics.
func metricLine(t *testing.T, n *node.Node, name string) string {
	t.Helper()
	resp, err := http.Get("http://" + n.APIAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, name+" ") {
			return l
		}
	}
	return ""
}

// A data directory that fills while the node runs: the node keeps
// serving what it has, /ready, /api/status and Prometheus say why it is
// not ready, and once space is freed the files added meanwhile (skipped:
// Redis refused its writes) are taken in, without a restart.
func TestNode_DataDirFull(t *testing.T) {
	t.Parallel()
	data := mountTmpfs(t, "160m")
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	old := filepath.Join(lib, "Before.The.Flood.2016.mkv")
	buf := make([]byte, 200<<10)
	rand.Read(buf)
	writeOld(t, old, buf)
	// The node's own managed Redis, on the full disk with the rest.
	n, logs := startNodeLogged(t, lib, func(c *node.Config) { c.RedisURL, c.DataDir = "", data })
	if code, why := readyAnswer(t, n); code != http.StatusOK {
		t.Fatalf("ready before the disk filled: %d %q", code, why)
	}
	oldCID := canonicalOf(t, old)
	waiting.For(t, "the stored file in the search index", func() bool {
		var res api.SearchResult
		getJSON(t, n, "/api/search?q=flood", &res)
		return len(res.Hits) == 1
	})

	fillDisk(t, filepath.Join(data, "filler"))
	want := regexp.MustCompile(`^data directory full: \d+ bytes free on ` + regexp.QuoteMeta(data) + `$`)
	code, why := readyAnswer(t, n)
	if code != http.StatusServiceUnavailable || !want.MatchString(why) {
		t.Fatalf("ready on a full disk: %d %q, want 503 %q", code, why, want)
	}
	var st api.Status
	getJSON(t, n, "/api/status", &st)
	if !st.DataDir.Full || st.DataDir.Path != data || st.DataDir.MinFreeBytes != node.MinFree || len(st.Problems) != 1 || !want.MatchString(st.Problems[0]) {
		t.Fatalf("status on a full disk: dataDir %+v, problems %q", st.DataDir, st.Problems)
	}
	if got := metricLine(t, n, "metamesh_data_full"); got != "metamesh_data_full 1" {
		t.Errorf("metric on a full disk: %q", got)
	}
	if got := metricLine(t, n, "metamesh_data_free_bytes"); !strings.HasPrefix(got, "metamesh_data_free_bytes ") {
		t.Errorf("no metamesh_data_free_bytes: %q", got)
	}

	// The page says it above every view, and the Node view says how
	// much is free where.
	t.Run("page", func(t *testing.T) {
		ctx, ce := browserFor(t, waiting.Guard)
		must(t, ctx, "load the Node view", ce, chromedp.Navigate("http://"+n.APIAddr()+"/?view=node"))
		must(t, ctx, "wait for the problem", ce, chromedp.Poll[bool](`!document.getElementById("problems").hidden`, chromedp.WithPollingTimeout(waiting.Guard)))
		if got := must(t, ctx, "read the problem", ce, chromedp.TextContent(chromedp.CSS("#problems li"))); !want.MatchString(got) {
			t.Errorf("the page's problem: %q, want %q", got, want)
		}
		if got := must(t, ctx, "read the data directory", ce, chromedp.TextContent(chromedp.CSS("#data-dir"))); !strings.HasPrefix(got, data+" · full: ") {
			t.Errorf("the Node view's data directory: %q", got)
		}
	})

	// New files while the disk is full: Redis refuses to store them.
	var added []string
	for _, name := range []string{"During.The.Storm.2020.mkv", "Dry.Land.2021.mkv", "notes.txt"} {
		p := filepath.Join(lib, name)
		rand.Read(buf)
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		added = append(added, p)
	}
	waiting.For(t, "a file added on the full disk to be skipped", func() bool {
		return n.Ingester().Progress().Errors > 0
	})
	// What the node has, it serves.
	if resp, body := do(t, n, "GET", "/api/meta/"+oldCID+"?local=1", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("meta of a stored file on a full disk: %d %s", resp.StatusCode, body)
	}

	if err := os.Remove(filepath.Join(data, "filler")); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the files added on the full disk to be stored once space is back", func() bool {
		ps, err := n.Store().Paths(context.Background(), added)
		if err != nil || len(ps) != len(added) {
			return false
		}
		for _, s := range ps {
			if !s.Hashed {
				return false
			}
		}
		return true
	})
	waiting.For(t, "the node to be ready again", func() bool {
		code, _ := readyAnswer(t, n)
		return code == http.StatusOK
	})
	getJSON(t, n, "/api/status", &st)
	if st.DataDir.Full || len(st.Problems) != 0 || st.Problems == nil {
		t.Errorf("status once space is back: dataDir %+v, problems %q", st.DataDir, st.Problems)
	}
	if got := metricLine(t, n, "metamesh_data_full"); got != "metamesh_data_full 0" {
		t.Errorf("metric once space is back: %q", got)
	}
	if errs := n.Ingester().Progress().Errors; errs != 0 {
		t.Errorf("scan errors once the skipped files are in: %d", errs)
	}
	for _, line := range []string{"data directory full: serving what the node has", "data directory has space again"} {
		if !slices.ContainsFunc(strings.Split(logs.String(), "\n"), func(l string) bool { return strings.Contains(l, line) }) {
			t.Errorf("no log line %q in:\n%s", line, logs.String())
		}
	}
}
