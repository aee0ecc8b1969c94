package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store/storetest"
)

// makeRoot is the repository's root and the suite's binary relative to
// it, which stands in for make's own build (GO=true BIN=…).
func makeRoot(t *testing.T) (root, bin string) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is not installed: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if bin, err = filepath.Rel(root, binary); err != nil {
		t.Fatal(err)
	}
	return root, bin
}

// TestMakeRun_BadLibrary: make run creates only its default library; a
// LIBRARY that is missing or a file reaches the binary, whose error names
// it, and nothing is created in its place.
func TestMakeRun_BadLibrary(t *testing.T) {
	root, bin := makeRoot(t)
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

// TestMakeRun_CLIDefaults: right after `make run` on a library (with its
// default data directory and an API address of its own), every client
// command without a flag finds that node: `id` prints its peer ID, `fsck`
// checks its Redis while it runs, `status`, `lookup`, `search`, `peers`,
// `providers` and `health` reach its API; a --data that holds no node
// says so and creates nothing.
func TestMakeRun_CLIDefaults(t *testing.T) {
	t.Parallel()
	root, bin := makeRoot(t)
	lib := t.TempDir()
	if err := os.WriteFile(filepath.Join(lib, "Blade.Runner.1982.mkv"), []byte("not really a film, but bytes to hash"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_DATA_HOME=" + storetest.Dir(t)}
	api := freeAddr(t)
	startMakeRun(t, root, bin, lib, api, fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", freePort(t)), env)

	var st struct {
		PeerID string `json:"peerId"`
		Roots  int64  `json:"roots"`
	}
	waiting.Until(t, "metamesh status without flags to see the node's file", func() string {
		out, _, code := metamesh(t, env, "status", "--json")
		if code == 0 && json.Unmarshal([]byte(out), &st) == nil && st.Roots == 1 {
			return ""
		}
		return fmt.Sprintf("exit %d\n%s", code, out)
	}, cliPoll)
	hashOut, _, _ := metamesh(t, nil, "hash", filepath.Join(lib, "Blade.Runner.1982.mkv"))
	var h struct {
		CID string `json:"canonical"`
	}
	if err := json.Unmarshal([]byte(hashOut), &h); err != nil || h.CID == "" {
		t.Fatalf("hash: %q %v", hashOut, err)
	}

	for _, tt := range []struct {
		args     []string
		wantCode int
		says     string
	}{
		{[]string{"id"}, 0, st.PeerID},
		{[]string{"fsck"}, 0, "checking the store of the node running on"},
		{[]string{"fsck", "--repair"}, 1, "stop it to --repair"},
		{[]string{"lookup", "--local", h.CID}, 0, "/Blade.Runner.1982.mkv\n"}, // its path line
		{[]string{"search", "blade", "runner"}, 0, h.CID},
		{[]string{"providers", h.CID}, 0, "no providers found"}, // a node alone
		{[]string{"peers"}, 0, ""},
		{[]string{"health"}, 0, "ready"},
		{[]string{"status", "--api", "127.0.0.1:1"}, 1, "cannot reach the node at http://127.0.0.1:1 (--api"},
	} {
		out, errOut, code := metamesh(t, env, tt.args...)
		if code != tt.wantCode || !strings.Contains(out+errOut, tt.says) {
			t.Errorf("metamesh %s: exit %d, want %d saying %q\nstdout: %s\nstderr: %s", strings.Join(tt.args, " "), code, tt.wantCode, tt.says, out, errOut)
		}
	}

	missing := filepath.Join(t.TempDir(), "no-such-data")
	for _, args := range [][]string{{"id"}, {"fsck"}, {"status"}, {"search", "x"}} {
		_, errOut, code := metamesh(t, env, append(args, "--data", missing)...)
		if code == 0 || !strings.Contains(errOut, "does not exist") {
			t.Errorf("metamesh %s --data <missing>: exit %d: %s", args[0], code, errOut)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a command created the missing data directory (%v)", err)
	}
}

// TestMakeSample: make sample writes a library the node reads as the
// layouts it names: a film with its NFO, poster and subtitle, a film
// named by its release, a show's two seasons; a second run keeps what is
// there.
func TestMakeSample(t *testing.T) {
	t.Parallel()
	root, _ := makeRoot(t)
	lib := filepath.Join(t.TempDir(), "library")
	sample := func() string {
		t.Helper()
		out, err := exec.Command("make", "-s", "-C", root, "sample", "LIBRARY="+lib).CombinedOutput()
		if err != nil {
			t.Fatalf("make sample: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := sample(); !strings.Contains(out, "10 new files") {
		t.Errorf("make sample said %q, want 10 new files", out)
	}
	if out := sample(); !strings.Contains(out, "0 new files") {
		t.Errorf("make sample again said %q, want 0 new files", out)
	}

	api := freeAddr(t)
	startRun(t, storetest.Dir(t), api, "--library", lib, "--listen", "/ip4/127.0.0.1/tcp/0")
	type hit struct {
		CID      string `json:"cid"`
		Title    string `json:"title"`
		Year     int    `json:"year"`
		Season   int    `json:"season"`
		Episode  int    `json:"episode"`
		EpTitle  string `json:"episodeTitle"`
		FileType string `json:"fileType"`
	}
	search := func(q string) ([]hit, error) {
		var page struct{ Hits []hit }
		err := tryJSON("http://"+api+"/api/search?q="+q, &page)
		return page.Hits, err
	}
	var eps []hit
	waiting.Until(t, "the sample show to show its three episodes", func() string {
		eps, _ = search("lighthouse+keepers")
		if len(eps) == 3 && eps[0].EpTitle != "" && eps[2].EpTitle != "" {
			return ""
		}
		return fmt.Sprintf("%+v", eps)
	})
	sort.Slice(eps, func(i, j int) bool { return eps[i].Season*100+eps[i].Episode < eps[j].Season*100+eps[j].Episode })
	want := []hit{{Title: "Lighthouse Keepers", Year: 2020, Season: 1, Episode: 1, EpTitle: "The Lamp", FileType: "video"},
		{Title: "Lighthouse Keepers", Year: 2020, Season: 1, Episode: 2, EpTitle: "The Storm", FileType: "video"},
		{Title: "Lighthouse Keepers", Year: 2020, Season: 2, Episode: 1, EpTitle: "The Return", FileType: "video"}}
	for i := range want {
		if got := eps[i]; got.Title != want[i].Title || got.Year != want[i].Year || got.Season != want[i].Season ||
			got.Episode != want[i].Episode || got.EpTitle != want[i].EpTitle || got.FileType != want[i].FileType {
			t.Errorf("episode %d: %+v, want %+v", i, got, want[i])
		}
	}
	if h, _ := search("quiet+harbour"); len(h) != 1 || h[0].Title != "The Quiet Harbour" || h[0].Year != 2021 {
		t.Errorf("the film named by its release: %+v", h)
	}
	films, _ := search("nachtzug") // the NFO's original title
	if len(films) != 1 || films[0].Title != "Night Train" {
		t.Fatalf("the film with an NFO: %+v", films)
	}
	var doc struct {
		Plot      map[string]string   `json:"plot"`
		Genre     []string            `json:"genre"`
		Art       map[string]string   `json:"art"`
		Subtitles map[string][]string `json:"subtitles"`
		Fileinfo  struct {
			Duration float64 `json:"duration"`
		} `json:"fileinfo"`
	}
	waiting.Until(t, "Night Train's poster and subtitles", func() string {
		getJSON(t, "http://"+api+"/api/meta/"+films[0].CID, &doc)
		if doc.Art["poster"] != "" && len(doc.Subtitles["eng"]) == 1 {
			return ""
		}
		return fmt.Sprintf("%+v", doc)
	})
	if !strings.Contains(doc.Plot["eng"], "night train") || len(doc.Genre) != 2 || doc.Art["poster"] == "" ||
		len(doc.Subtitles["eng"]) != 1 || doc.Fileinfo.Duration < 5 {
		t.Errorf("Night Train's record: %+v", doc)
	}
}

// getJSON decodes the 200 answer of GET u into v.
func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	if err := tryJSON(u, v); err != nil {
		t.Fatal(err)
	}
}

// tryJSON decodes the 200 answer of GET u into v.
func tryJSON(u string, v any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// startMakeRun starts `make run` of the built binary bin in root on lib,
// with the API at api and libp2p listening on listen, env added to the
// environment, and stops it (make and the node it started, one process
// group) when the test ends.
func startMakeRun(t *testing.T, root, bin, lib, api, listen string, env []string) *exec.Cmd {
	t.Helper()
	mk := exec.Command("make", "-s", "-C", root, "run", "GO=true", "BIN="+bin, "LIBRARY="+lib, "API="+api, "LISTEN="+listen)
	mk.Env = append(os.Environ(), env...)
	mk.Stderr = os.Stderr
	mk.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // make and the node it starts
	if err := mk.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// make exits at once; the node it started shuts down in its own
		// time, which the data directory's removal must wait for.
		syscall.Kill(-mk.Process.Pid, syscall.SIGTERM)
		mk.Wait()
		waiting.For(t, "the node make started to stop", func() bool { return syscall.Kill(-mk.Process.Pid, 0) != nil })
	})
	return mk
}
