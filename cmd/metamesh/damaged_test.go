package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store/storetest"
)

// damagedNode is a `metamesh run` on a library of one file, its log kept.
type damagedNode struct {
	cmd  *exec.Cmd
	logs *storetest.Buffer
	done chan error
}

func startDamaged(t *testing.T, lib, data, api string) *damagedNode {
	t.Helper()
	n := &damagedNode{logs: &storetest.Buffer{}, done: make(chan error, 1)}
	n.cmd = exec.Command(binary, "run", "--library", lib, "--data", data, "--api", api, "--listen", "/ip4/127.0.0.1/tcp/0", "--settle", "100ms")
	n.cmd.Stderr = n.logs
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { n.done <- n.cmd.Wait() }()
	t.Cleanup(func() { n.cmd.Process.Kill() })
	return n
}

// stop ends the node with SIGTERM and checks that its last line says it
// stopped and that nothing panicked.
func (n *damagedNode) stop(t *testing.T) {
	t.Helper()
	n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-n.done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, n.logs)
		}
	case <-waiting.After(): // a hang detector
		t.Fatalf("the node did not stop after SIGTERM\n%s", n.logs)
	}
	lines := nonEmptyLines(n.logs.String())
	if len(lines) == 0 || !strings.Contains(lines[len(lines)-1], `msg="metamesh stopped"`) || strings.Contains(n.logs.String(), "panic") {
		t.Errorf("not a clean stop:\n%s", n.logs)
	}
}

// poll waits until cond holds (waiting.For), failing at once should the
// node exit meanwhile.
func poll(t *testing.T, n *damagedNode, what string, cond func() bool) {
	t.Helper()
	waiting.For(t, what, func() bool {
		select {
		case err := <-n.done:
			t.Fatalf("the node exited (%v) while waiting for %s\n%s", err, what, n.logs)
		default:
		}
		return cond()
	})
}

// ready reports whether the node answers /ready with 200.
func ready(api string) bool {
	resp, err := http.Get("http://" + api + "/ready")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

// found reports whether the node's search finds q.
func found(api, q string) bool {
	resp, err := http.Get("http://" + api + "/api/search?q=" + url.QueryEscape(q))
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var r struct {
		Hits []json.RawMessage `json:"hits"`
	}
	return resp.StatusCode == 200 && json.NewDecoder(resp.Body).Decode(&r) == nil && len(r.Hits) > 0
}

// provideKeys is how many keys the provider's keystore holds.
func provideKeys(api string) int64 {
	resp, err := http.Get("http://" + api + "/api/status")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var s struct {
		Provide struct {
			Keys int64 `json:"keys"`
		} `json:"provide"`
	}
	json.NewDecoder(resp.Body).Decode(&s)
	return s.Provide.Keys
}

// flipAll inverts 40 bytes every 2 KiB of every file of part that
// matches pattern.
func flipAll(t *testing.T, data, part, pattern string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(data, part, pattern))
	if len(files) == 0 {
		t.Fatalf("no %s under %s", pattern, filepath.Join(data, part))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for at := 100; at+40 < len(b); at += 2048 {
			for i := at; i < at+40; i++ {
				b[i] ^= 0xff
			}
		}
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRun_DamagedParts: flipped bytes in the search index, the block
// index or the provider store. The node starts, says at WARN that the
// part was moved aside to DATA/<part>.corrupt-<time>, builds it anew
// (search finds the file again, the keystore holds its keys again) and
// stops cleanly.
func TestRun_DamagedParts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		part, pattern, warn string
	}{
		{"search", "index/store/*.zap", `msg="search index: does not open; moved aside, built anew from the store"`},
		{"blocks", "*.sst", `msg="block index: `},
		{"provider", "*.sst", `msg="provider store: `},
	} {
		t.Run(tc.part, func(t *testing.T) {
			t.Parallel()
			lib, _ := filepath.EvalSymlinks(t.TempDir())
			if err := os.WriteFile(filepath.Join(lib, "lighthouse keeper.bin"), []byte(strings.Repeat("lighthouse ", 100_000)), 0o644); err != nil {
				t.Fatal(err)
			}
			data, api := storetest.Dir(t), freeAddr(t)
			n := startDamaged(t, lib, data, api)
			poll(t, n, "search to find the file", func() bool { return found(api, "lighthouse") })
			poll(t, n, "the keystore to hold the file's keys", func() bool { return provideKeys(api) > 0 })
			n.stop(t)

			flipAll(t, data, tc.part, tc.pattern)
			n = startDamaged(t, lib, data, api)
			poll(t, n, "the node to be ready", func() bool { return ready(api) })
			poll(t, n, "the damaged part moved aside and said", func() bool {
				m, _ := filepath.Glob(filepath.Join(data, tc.part+".corrupt-*"))
				return len(m) == 1 && strings.Contains(n.logs.String(), tc.warn)
			})
			for _, l := range nonEmptyLines(n.logs.String()) {
				if strings.Contains(l, tc.warn) && (!strings.Contains(l, "level=WARN") || !strings.Contains(l, "movedTo="+filepath.Join(data, tc.part+".corrupt-"))) {
					t.Errorf("not a WARN saying where the part went: %s", l)
				}
			}
			poll(t, n, "search to find the file again", func() bool { return found(api, "lighthouse") })
			poll(t, n, "the keystore to hold the file's keys again", func() bool { return provideKeys(api) > 0 })
			if fi, err := os.Stat(filepath.Join(data, tc.part)); err != nil || !fi.IsDir() {
				t.Errorf("%s not built anew: %v", tc.part, err)
			}
			n.stop(t)
		})
	}
}

// TestRun_DamagedAOF: an append-only file redis-server refuses stops the
// start with one line, the command that repairs it; nothing is moved.
func TestRun_DamagedAOF(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.WriteFile(filepath.Join(lib, "a.bin"), []byte("a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, api := storetest.Dir(t), freeAddr(t)
	n := startDamaged(t, lib, data, api)
	waitReady(t, n.cmd, api)
	poll(t, n, "the file to be stored", func() bool { s, err := status(api); return err == nil && s.Roots > 0 })
	n.stop(t)
	incr, _ := filepath.Glob(filepath.Join(data, "redis", "appendonlydir", "*.incr.aof"))
	if len(incr) != 1 {
		t.Skipf("not Redis 7's appendonlydir: %v", incr)
	}
	b, err := os.ReadFile(incr[0])
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(string(b[:len(b)/2]), "*")
	copy(b[i:], "#!")
	if err := os.WriteFile(incr[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := metamesh(t, nil, "run", "--library", lib, "--data", data, "--api", api, "--listen", "/ip4/127.0.0.1/tcp/0")
	lines := nonEmptyLines(errOut)
	manifest := filepath.Join(data, "redis", "appendonlydir", "appendonly.aof.manifest")
	want := "metamesh: the store's append-only file is damaged (redis-server: Bad file format reading the append only file " + filepath.Base(incr[0]) +
		"): run redis-check-aof --fix " + manifest + ", then start the node again"
	if code == 0 || len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], want) {
		t.Errorf("exit %d; last line is not %q:\n%s", code, want, errOut)
	}
	if got, err := os.ReadFile(incr[0]); err != nil || string(got) != string(b) {
		t.Errorf("the append-only file was changed or moved: %v", err)
	}
}
