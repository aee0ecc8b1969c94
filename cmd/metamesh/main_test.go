package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

var binary string

// TestMain builds the real binary once; the tests run it as a user would.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "metamesh-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "metamesh")
	// The default data directory of every command run here is a fresh
	// one, never the data of a node the machine's user runs.
	if err := os.Setenv("XDG_DATA_HOME", filepath.Join(dir, "xdg")); err != nil {
		panic(err)
	}
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func metamesh(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runIn(t, "", env, args...)
}

// runIn runs metamesh in dir ("" for the test's own) with env added to
// the environment, and returns its output and exit status.
func runIn(t *testing.T, dir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestCID(t *testing.T) {
	mid := "bagacbabaecxvk4hvugaqw6xxrsxuxrykmyhq35i6ik5pshkn4wzdfdpa5a67y"
	sha := "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"
	tests := []struct {
		name     string
		args     []string
		wantOut  string
		wantCode int
	}{
		{"canonical picks the digest", []string{"cid", "canonical", mid, sha}, sha + "\n", 0},
		{"canonical refuses garbage", []string{"cid", "canonical", "garbage", mid}, "", 2},
		{"inspect", []string{"cid", "inspect", mid}, "midhash\nrank", 0},
		{"inspect v0", []string{"cid", "inspect", "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG"}, "normalized rank  40", 0},
		{"inspect garbage", []string{"cid", "inspect", "garbage"}, "", 2},
		{"flag after positional", []string{"cid", "inspect", mid, "--json"}, `"rank":10`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := metamesh(t, nil, tt.args...)
			if code != tt.wantCode || !strings.Contains(out, tt.wantOut) {
				t.Errorf("out %q err %q code %d; want %q code %d", out, errOut, code, tt.wantOut, tt.wantCode)
			}
			if code == 2 && !strings.Contains(errOut, "invalid CID") {
				t.Errorf("stderr %q does not say why", errOut)
			}
		})
	}
}

func TestHash(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "one.bin")
	os.WriteFile(p, bytes.Repeat([]byte("x"), 300<<10), 0o644)
	out, _, code := metamesh(t, nil, "hash", p, filepath.Join(dir, "missing"))
	if code != 1 {
		t.Errorf("exit %d with a missing file, want 1", code)
	}
	var got ingest.FileHashes
	if err := json.Unmarshal([]byte(strings.Split(out, "\n")[0]), &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	want, _ := ingest.HashFile(context.Background(), p)
	if got != want || !strings.HasPrefix(got.IPFS, "bafybei") || got.Canonical != got.IPFS {
		t.Errorf("hash = %+v, want %+v", got, want)
	}
}

func TestFsck(t *testing.T) {
	t.Parallel()
	srv := storetest.Server(t)
	lib := t.TempDir()
	os.WriteFile(filepath.Join(lib, "a.bin"), []byte("aaaa"), 0o644)
	if _, errOut, code := metamesh(t, nil, "scan", "--library", lib, "--redis-url", srv.URL()); code != 0 {
		t.Fatalf("scan: %d %s", code, errOut)
	}
	// Flags from the environment.
	out, _, code := metamesh(t, []string{"METAMESH_REDIS_URL=" + srv.URL()}, "fsck")
	if code != 0 || !strings.Contains(out, "no violations") || !strings.Contains(out, fmt.Sprintf("store layout %d\n", store.Layout)) {
		t.Fatalf("fsck on a clean store: %d %q", code, out)
	}
	// Corrupt it as a stray writer would: an alias pointing at no root.
	if out, err := exec.Command("redis-cli", "-s", srv.Addr(), "SET", "cid:bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku", "01M8NG8YD8EF2TYVWGQQHWQ8MP").CombinedOutput(); err != nil {
		t.Fatalf("redis-cli: %v %s", err, out)
	}
	out, _, code = metamesh(t, nil, "fsck", "--redis-url", srv.URL(), "--json")
	if code != 1 || !strings.Contains(out, "not an indexed root") {
		t.Fatalf("fsck on a corrupt store: exit %d %q, want 1 and the violation", code, out)
	}
}

// TestDataInsideLibrary: run and scan refuse a data directory inside a
// library, naming both, before anything is written there.
func TestDataInsideLibrary(t *testing.T) {
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	data := filepath.Join(lib, "mmdata")
	for _, args := range [][]string{
		{"run", "--library", lib, "--data", data, "--api", "127.0.0.1:0"},
		{"scan", "--library", lib, "--data", data},
	} {
		t.Run(args[0], func(t *testing.T) {
			_, errOut, code := metamesh(t, nil, args...)
			if code == 0 || !strings.Contains(errOut, "data directory "+data+" is inside the library "+lib) {
				t.Errorf("%v: exit %d, stderr %q; want a failure naming both paths", args, code, errOut)
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("%v created %s: %v", args, data, err)
			}
		})
	}
}

// TestScan_SubsetLeavesOtherLibraries: scan of one library is a one-off
// that leaves the stored paths of the others alone, as its help says.
func TestScan_SubsetLeavesOtherLibraries(t *testing.T) {
	t.Parallel()
	srv := storetest.Server(t)
	a, _ := filepath.EvalSymlinks(t.TempDir())
	b, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(a, "a.bin"), []byte("aaaa"), 0o644)
	os.WriteFile(filepath.Join(b, "b.bin"), []byte("bbbb"), 0o644)
	if _, errOut, code := metamesh(t, nil, "scan", "--library", a, "--library", b, "--redis-url", srv.URL()); code != 0 {
		t.Fatalf("scan of both: %d %s", code, errOut)
	}
	os.WriteFile(filepath.Join(a, "a2.bin"), []byte("aaaa2"), 0o644)
	if _, errOut, code := metamesh(t, nil, "scan", "--library", a, "--redis-url", srv.URL()); code != 0 {
		t.Fatalf("scan of one: %d %s", code, errOut)
	}
	st, err := store.Open(context.Background(), store.Options{URL: srv.URL(), Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, p := range []string{filepath.Join(a, "a.bin"), filepath.Join(a, "a2.bin"), filepath.Join(b, "b.bin")} {
		if ps, err := st.Path(context.Background(), p); err != nil || !ps.Hashed {
			t.Errorf("%s after a scan of %s alone: %+v %v", p, a, ps, err)
		}
	}
	help, _, _ := metamesh(t, nil, "scan", "--help")
	if !strings.Contains(help, "leaves the stored paths of every other library alone") {
		t.Errorf("scan --help does not say a subset scan leaves other libraries alone:\n%s", help)
	}
}

// cliPoll is how often a wait runs a metamesh command again: each look
// is a process of its own, and five a second leave the node its CPU.
var cliPoll = waiting.Every(200 * time.Millisecond)

// waitReady waits until the node cmd runs answers /ready on api, and
// kills it if it never does (a hang detector, not a timing check).
func waitReady(t *testing.T, cmd *exec.Cmd, api string) {
	t.Helper()
	ready := false
	defer func() { // runs on the failed wait's Fatalf too
		if !ready {
			cmd.Process.Kill()
		}
	}()
	waiting.For(t, "the node to become ready", func() bool {
		resp, err := http.Get("http://" + api + "/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	ready = true
}

type statusDoc struct {
	Roots int64 `json:"roots"`
	Scan  struct {
		State      string `json:"state"`
		FilesDone  int64  `json:"filesDone"`
		FilesTotal int64  `json:"filesTotal"`
	} `json:"scan"`
}

func status(addr string) (statusDoc, error) {
	var s statusDoc
	resp, err := http.Get("http://" + addr + "/api/status")
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

// TestRun_KillMidIngest: kill -9 of a node (and so of its managed Redis)
// in the middle of the initial scan, then a restart: fsck is clean and
// every file is present with its full hashes.
func TestRun_KillMidIngest(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	data := storetest.Dir(t)
	const files = 120
	buf := make([]byte, 4<<20)
	for i := 0; i < files; i++ {
		buf[0], buf[1] = byte(i), byte(i>>8)
		os.WriteFile(filepath.Join(lib, fmt.Sprintf("file%03d.bin", i)), buf, 0o644)
		buf[0] = 0xFF // every file unique
	}
	old := time.Now().Add(-time.Hour)
	filepath.Walk(lib, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })

	addr := freeAddr(t)
	cmd := exec.Command(binary, "run", "--library", lib, "--data", data, "--api", addr, "--listen", "/ip4/127.0.0.1/tcp/0", "--workers", "1", "--log-level", "warn")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() // should the wait fail
	var progress statusDoc
	// Looked at every 5 ms, so the kill comes early in the scan.
	waiting.For(t, "the node to report progress", func() bool {
		var err error
		progress, err = status(addr)
		return err == nil && progress.Scan.FilesDone >= 5
	}, waiting.Every(5*time.Millisecond))
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if progress.Scan.FilesDone >= files {
		t.Log("the scan finished before the kill; the restart check still runs")
	}
	// The managed redis-server dies with the node; the restart starts a
	// new one on the same data.
	out, errOut, code := metamesh(t, nil, "scan", "--library", lib, "--data", data, "--json")
	if code != 0 {
		t.Fatalf("scan after kill: %d %s", code, errOut)
	}
	_ = out
	fsckOut, _, code := metamesh(t, nil, "fsck", "--data", data)
	if code != 0 {
		t.Fatalf("fsck after kill -9 and restart: exit %d\n%s", code, fsckOut)
	}
	st, err := store.Open(context.Background(), store.Options{DataDir: data, Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := 0; i < files; i++ {
		p := filepath.Join(lib, fmt.Sprintf("file%03d.bin", i))
		ps, err := st.Path(context.Background(), p)
		if err != nil || !ps.Hashed {
			t.Fatalf("%s after restart: %+v %v", p, ps, err)
		}
	}
	if n, _ := st.Roots(context.Background()); n != files {
		t.Errorf("roots = %d, want %d", n, files)
	}
}

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"1000", 1000, true}, {"500k", 500_000, true}, {"2M", 2_000_000, true},
		{"2MB/s", 2_000_000, true}, {"1.5MiB", 1 << 20 * 3 / 2, true}, {"1GiB", 1 << 30, true},
		{"fast", 0, false}, {"-1", 0, false}, {"2X", 0, false}, {"", 0, false},
		// Under 1 byte a second is refused, not rounded to 0 (unlimited).
		{"0.5", 0, false}, {"0.001k", 1, true}, {"0.0001k", 0, false}, {"1.9", 1, true},
	} {
		got, err := parseRate(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseRate(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestShareFiles(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		all     bool
		folders []string
	}{
		{nil, false, nil},
		{[]string{"true"}, true, nil}, // the flag alone
		{[]string{"false"}, false, nil},
		{[]string{"1"}, true, nil},
		{[]string{"/lib/Movies", "/lib/Shows"}, false, []string{"/lib/Movies", "/lib/Shows"}},
		{[]string{"./true"}, false, []string{"./true"}},
	} {
		all, folders := shareFiles(tc.in)
		if all != tc.all || !slices.Equal(folders, tc.folders) {
			t.Errorf("shareFiles(%q) = %v, %q; want %v, %q", tc.in, all, folders, tc.all, tc.folders)
		}
	}
}

// A shared folder outside every library stops run before it starts,
// from the flag and from its environment twin (comma-separated).
func TestRun_ShareFolderOutsideLibraries(t *testing.T) {
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.Mkdir(filepath.Join(lib, "Movies"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		env  []string
		args []string
	}{
		"flag": {nil, []string{"--share-files=" + filepath.Join(lib, "Movies"), "--share-files=" + outside}},
		"env":  {[]string{"METAMESH_SHARE_FILES=" + filepath.Join(lib, "Movies") + "," + outside}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"run", "--library", lib, "--data", storetest.Dir(t), "--api", "127.0.0.1:0"}, tc.args...)
			_, errOut, code := metamesh(t, tc.env, args...)
			if code == 0 || !strings.Contains(errOut, "--share-files") || !strings.Contains(errOut, outside) || !strings.Contains(errOut, "not inside a library") {
				t.Errorf("exit %d, stderr %q; want a failure naming --share-files and %s", code, errOut, outside)
			}
		})
	}
}
