package node_test

import (
	"crypto/rand"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// bindMount mounts src on dir (mount --bind); the test skips when it
// cannot mount (not root).
func bindMount(t *testing.T, src, dir string) {
	t.Helper()
	if err := syscall.Mount(src, dir, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount a library (%v): run as root", err)
	}
}

// libraryMetric is metamesh_library_available's value for lib, as
// GET /metrics says it ("" when it has no such line).
func libraryMetric(t *testing.T, n *node.Node, lib string) string {
	t.Helper()
	_, body := do(t, n, "GET", "/metrics", nil)
	prefix := `metamesh_library_available{library="` + lib + `"} `
	for _, l := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			return v
		}
	}
	return ""
}

// A library on a mount that is unmounted is unavailable: nothing of it
// is deleted, its files' bytes answer 503 while their metadata is
// served, /ready, /api/status and Prometheus say why; remounted, it is
// available again and a file added meanwhile is found, without a
// restart.
func TestNode_LibraryUnmounted(t *testing.T) {
	t.Parallel()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	drive, lib := filepath.Join(base, "drive"), filepath.Join(base, "films")
	for _, d := range []string{drive, lib} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 300<<10)
	rand.Read(buf)
	writeOld(t, filepath.Join(drive, "Before.mkv"), buf)
	bindMount(t, drive, lib)
	t.Cleanup(func() { _ = syscall.Unmount(lib, syscall.MNT_DETACH) })

	n, logs := startNodeLogged(t, lib, nil)
	old := canonicalOf(t, filepath.Join(lib, "Before.mkv"))
	if resp, _ := do(t, n, "GET", "/api/file/"+old, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/file before the unmount: %d", resp.StatusCode)
	}
	if _, err := os.Stat(filepath.Join(drive, ingest.MarkerName)); err != nil {
		t.Errorf("no marker on the mounted library: %v", err)
	}
	waiting.For(t, "the node to be ready", func() bool { code, _ := readyAnswer(t, n); return code == http.StatusOK })
	if v := libraryMetric(t, n, lib); v != "1" {
		t.Errorf("metamesh_library_available = %q, want 1", v)
	}

	if err := syscall.Unmount(lib, 0); err != nil {
		t.Fatal(err)
	}
	problem := "library unavailable: " + lib + ": its marker file " + ingest.MarkerName + " is gone (an unmounted drive?)"
	waiting.For(t, "/ready to say the library is unavailable", func() bool {
		code, why := readyAnswer(t, n)
		return code == http.StatusServiceUnavailable && why == problem
	})
	resp, body := do(t, n, "GET", "/api/file/"+old, nil)
	if want := "{\n  \"error\": \"library unavailable: " + lib + "\"\n}\n"; resp.StatusCode != http.StatusServiceUnavailable || string(body) != want {
		t.Errorf("GET /api/file of an unmounted library's file: %d %q, want 503 %q", resp.StatusCode, body, want)
	}
	if resp, body := do(t, n, "GET", "/api/meta/"+old+"?local=1", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api/meta of an unmounted library's file: %d %s, want 200", resp.StatusCode, body)
	}
	var st api.Status
	getJSON(t, n, "/api/status", &st)
	if !slices.Contains(st.Problems, problem) {
		t.Errorf("/api/status problems = %q, want %q", st.Problems, problem)
	}
	if v := libraryMetric(t, n, lib); v != "0" {
		t.Errorf("metamesh_library_available while unmounted = %q, want 0", v)
	}

	// Added on the drive while it was not mounted here.
	added := filepath.Join(drive, "After.mkv")
	rand.Read(buf)
	writeOld(t, added, buf)
	bindMount(t, drive, lib)
	fresh := canonicalOf(t, added)
	waiting.For(t, "the file added meanwhile to be served after the remount", func() bool {
		resp, _ := do(t, n, "GET", "/api/file/"+fresh, nil)
		return resp.StatusCode == http.StatusOK
	})
	waiting.For(t, "the node to be ready again", func() bool { code, _ := readyAnswer(t, n); return code == http.StatusOK })
	if resp, _ := do(t, n, "GET", "/api/file/"+old, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api/file of the file from before the unmount: %d, want 200", resp.StatusCode)
	}
	if v := libraryMetric(t, n, lib); v != "1" {
		t.Errorf("metamesh_library_available after the remount = %q, want 1", v)
	}
	for _, want := range []string{
		`level=WARN msg="` + problem + `"`,
		`level=INFO msg="library available again: ` + lib + `"`,
	} {
		if strings.Count(logs.String(), want) != 1 {
			t.Errorf("the log has %q %d times, want once", want, strings.Count(logs.String(), want))
		}
	}
	if strings.Contains(logs.String(), "deleted") {
		t.Errorf("something was deleted:\n%s", logs.String())
	}
}
