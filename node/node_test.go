package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

func startNode(t *testing.T, lib string) (*node.Node, *store.Server) {
	t.Helper()
	srv := storetest.Server(t)
	n, err := node.New(node.Config{
		Libraries: []string{lib}, RedisURL: srv.URL(), APIAddr: "127.0.0.1:0", DataDir: storetest.Dir(t),
		P2P: p2p.Config{Listen: []string{"/ip4/127.0.0.1/tcp/0"}}, Settle: 30 * time.Millisecond, Logger: storetest.Logger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	if err := n.Ingester().WaitIdle(waiting.Context(t)); err != nil {
		t.Fatal(err)
	}
	return n, srv
}

func get(t *testing.T, n *node.Node, method, path string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+n.APIAddr()+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s %s: body is not JSON: %q", method, path, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	return resp.StatusCode, m
}

func TestNode_API(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(lib, "Movie.Title.2010.1080p.mkv"), []byte(strings.Repeat("frame", 100000)), 0o644)
	os.WriteFile(filepath.Join(lib, "copy.mkv"), []byte(strings.Repeat("frame", 100000)), 0o644)
	n, _ := startNode(t, lib)
	h, err := ingest.HashFile(context.Background(), filepath.Join(lib, "copy.mkv"))
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, method, path string
		code               int
		check              func(m map[string]any) error
	}{
		{"health", "GET", "/health", 200, nil},
		{"ready", "GET", "/ready", 200, nil},
		{"meta by ipfs", "GET", "/api/meta/" + h.IPFS + "?local=1", 200, func(m map[string]any) error {
			if m["canonical_cid"] != h.IPFS || m["source"] != "local" {
				return fmt.Errorf("doc %v", m)
			}
			d := m["duplicates"].([]any)
			if len(d) != 1 {
				return fmt.Errorf("duplicates %v", d)
			}
			paths := []string{m["filePath"].(string), d[0].(string)}
			slices.Sort(paths)
			if !slices.Equal(paths, []string{filepath.Join(lib, "Movie.Title.2010.1080p.mkv"), filepath.Join(lib, "copy.mkv")}) {
				return fmt.Errorf("paths %v", paths)
			}
			if len(m["cids"].([]any)) != 3 {
				return fmt.Errorf("cids %v", m["cids"])
			}
			return nil
		}},
		{"meta by midhash", "GET", "/api/meta/" + h.Midhash, 200, nil},
		{"meta by sha2-256", "GET", "/api/meta/" + h.SHA256 + "?local=1", 200, nil},
		{"meta by CIDv0 form", "GET", "/api/meta/QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG", 404, nil},
		{"malformed", "GET", "/api/meta/zzzz", 400, nil},
		{"missing cid", "GET", "/api/meta/", 400, nil},
		{"unknown route", "GET", "/api/nope", 404, nil},
		{"wrong method", "DELETE", "/api/meta/" + h.IPFS, 405, nil},
		{"status", "GET", "/api/status", 200, func(m map[string]any) error {
			scan := m["scan"].(map[string]any)
			if m["roots"].(float64) != 1 || m["libraryFiles"].(float64) != 2 || scan["state"] != "watching" || scan["filesDone"].(float64) != 2 || scan["filesTotal"].(float64) != 2 {
				return fmt.Errorf("status %v", m)
			}
			if m["redis"].(map[string]any)["ok"] != true {
				return fmt.Errorf("redis %v", m["redis"])
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, m := get(t, n, tt.method, tt.path)
			if code != tt.code {
				t.Fatalf("status %d, want %d: %v", code, tt.code, m)
			}
			if code >= 400 && m["error"] == "" {
				t.Errorf("error body %v", m)
			}
			if tt.check != nil {
				if err := tt.check(m); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestNode_StatusCountsWatchedFiles: a library filled while the node
// watches it has its files counted in /api/status (libraryFiles: every
// local path, a duplicate too), though its full scan, at start, found
// none; a file deleted leaves the count.
func TestNode_StatusCountsWatchedFiles(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	n, _ := startNode(t, lib)
	for name, body := range map[string]string{"a.mkv": "film a", "b.mkv": "film b", "b copy.mkv": "film b"} {
		if err := os.WriteFile(filepath.Join(lib, name), []byte(strings.Repeat(body, 1000)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	waitFiles := func(want float64) {
		t.Helper()
		waiting.Until(t, fmt.Sprint("libraryFiles ", want), func() string {
			_, m := get(t, n, "GET", "/api/status")
			scan := m["scan"].(map[string]any)
			if m["libraryFiles"].(float64) == want {
				if scan["filesTotal"].(float64) != 0 {
					t.Errorf("the scan's own count changed: %v", scan)
				}
				return ""
			}
			return fmt.Sprintf("libraryFiles %v (scan %v)", m["libraryFiles"], scan)
		})
	}
	waitFiles(3)
	if err := os.Remove(filepath.Join(lib, "a.mkv")); err != nil {
		t.Fatal(err)
	}
	waitFiles(2)
}

func TestConfig_Validate(t *testing.T) {
	t.Parallel()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	lib := filepath.Join(dir, "lib")
	os.MkdirAll(filepath.Join(lib, "sub"), 0o755)
	link := filepath.Join(dir, "link-to-lib")
	os.Symlink(lib, link)
	other := filepath.Join(dir, "other")
	os.Mkdir(other, 0o755)
	tests := []struct {
		name string
		cfg  node.Config
		want []string // what the error names; nil: valid
	}{
		{"no library", node.Config{DataDir: dir}, []string{"library"}},
		{"missing library", node.Config{Libraries: []string{filepath.Join(dir, "nope")}, DataDir: dir}, []string{"does not exist", "nope"}},
		{"library is a file", node.Config{Libraries: []string{file}, DataDir: dir}, []string{"not a directory"}},
		{"bad api", node.Config{Libraries: []string{dir}, DataDir: dir + "-data", APIAddr: "nonsense"}, []string{"--api", "nonsense"}},
		{"negative workers", node.Config{Libraries: []string{dir}, DataDir: dir + "-data", Workers: -1}, []string{"--workers", "-1"}},
		{"name too long", node.Config{Libraries: []string{dir}, DataDir: dir + "-data", Name: strings.Repeat("n", 65)}, []string{"--name", "65 bytes"}},
		{"name with a newline", node.Config{Libraries: []string{dir}, DataDir: dir + "-data", Name: "Alice\nBob"}, []string{"--name", "control character"}},
		{"name with an escape", node.Config{Libraries: []string{dir}, DataDir: dir + "-data", Name: "Alice\x1b[2J"}, []string{"--name", "control character"}},
		{"name not UTF-8", node.Config{Libraries: []string{dir}, DataDir: dir + "-data", Name: "Alice\xff"}, []string{"--name", "not UTF-8"}},
		{"name padded", node.Config{Libraries: []string{dir}, DataDir: dir + "-data", Name: "  Alice's NAS "}, nil},
		{"name of 64 bytes", node.Config{Libraries: []string{dir}, DataDir: dir + "-data", Name: strings.Repeat("é", 32)}, nil},
		{"data inside the library", node.Config{Libraries: []string{lib}, DataDir: filepath.Join(lib, "mmdata")}, []string{"--data", lib, filepath.Join(lib, "mmdata")}},
		{"data deep inside, not created yet", node.Config{Libraries: []string{lib}, DataDir: filepath.Join(lib, "sub", "a", "b")}, []string{"--data", lib, filepath.Join(lib, "sub", "a", "b")}},
		{"data is the library", node.Config{Libraries: []string{lib}, DataDir: lib}, []string{"--data", lib}},
		{"data inside the library through a symlink", node.Config{Libraries: []string{lib}, DataDir: filepath.Join(link, "mmdata")}, []string{"--data", lib, filepath.Join(lib, "mmdata")}},
		{"data inside the second library", node.Config{Libraries: []string{other, lib}, DataDir: filepath.Join(lib, "sub", "data")}, []string{"--data", lib}},
		{"data inside, with --redis-url", node.Config{Libraries: []string{lib}, DataDir: filepath.Join(lib, "mmdata"), RedisURL: "redis://127.0.0.1:1"}, []string{"--data", lib}},
		{"data hidden inside the library", node.Config{Libraries: []string{lib}, DataDir: filepath.Join(lib, ".metamesh")}, nil},
		{"data under a hidden dir of the library", node.Config{Libraries: []string{lib}, DataDir: filepath.Join(lib, ".local", "share", "metamesh")}, nil},
		{"data next to the library", node.Config{Libraries: []string{lib}, DataDir: lib + "data"}, nil},
		{"library inside the data dir", node.Config{Libraries: []string{filepath.Join(lib, "sub")}, DataDir: lib}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.SetDefaults()
			err := tt.cfg.Validate()
			if tt.want == nil {
				if err != nil {
					t.Errorf("Validate = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate = nil, want an error naming %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate = %v, want an error naming %q", err, w)
				}
			}
		})
	}
}

// TestNew_RepeatedLibraries: a library given twice, or inside another,
// is scanned once and the log says which were dropped.
func TestNew_RepeatedLibraries(t *testing.T) {
	t.Parallel()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	lib := filepath.Join(dir, "lib")
	os.MkdirAll(filepath.Join(lib, "sub"), 0o755)
	var logs strings.Builder
	n, err := node.New(node.Config{
		Libraries: []string{lib, lib + "/", filepath.Join(lib, "sub")},
		RedisURL:  "redis://127.0.0.1:1", Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = n
	out := logs.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "scanned once") || !strings.Contains(out, filepath.Join(lib, "sub")) {
		t.Errorf("log = %q, want one line naming the dropped libraries", out)
	}
}

// TestNode_RedisDown: with Redis gone the API answers 503 with a JSON
// error instead of hanging or claiming the file is unknown.
func TestNode_RedisDown(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(lib, "a.bin"), []byte("abc"), 0o644)
	n, srv := startNode(t, lib)
	h, _ := ingest.HashFile(context.Background(), filepath.Join(lib, "a.bin"))
	if code, _ := get(t, n, "GET", "/api/meta/"+h.SHA256); code != 200 {
		t.Fatalf("before the outage: %d", code)
	}
	srv.Close()
	// A cached answer may still be served until the cache misses its beat
	// through Redis (half a second); then every answer is a 503.
	waiting.Until(t, "meta with Redis down to answer 503", func() string {
		code, m := get(t, n, "GET", "/api/meta/"+h.SHA256)
		if code == 503 && m["error"] != nil {
			return ""
		}
		if code != 200 {
			t.Fatalf("meta with Redis down: %d %v, want 503", code, m)
		}
		return fmt.Sprintf("still %d %v", code, m)
	})
	if code, _ := get(t, n, "GET", "/ready"); code != 503 {
		t.Errorf("ready with Redis down: %d, want 503", code)
	}
	code, m := get(t, n, "GET", "/api/status")
	if code != 200 || m["redis"].(map[string]any)["ok"] != false {
		t.Errorf("status with Redis down: %d %v", code, m["redis"])
	}
}

// TestNode_RedisStopped: a Redis that is alive but does not answer (here
// SIGSTOP'ed) makes the request paths answer 503 with a JSON error
// within the request timeout, not after every retry's read timeout. The
// document cache stops serving too once its beat through Redis is gone
// (half a second), so a cached document is not served from a Redis that
// answers nothing.
func TestNode_RedisStopped(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(lib, "a.bin"), []byte("abc"), 0o644)
	os.WriteFile(filepath.Join(lib, "b.bin"), []byte("bcd"), 0o644)
	n, srv := startNode(t, lib)
	h, _ := ingest.HashFile(context.Background(), filepath.Join(lib, "a.bin"))
	cached, _ := ingest.HashFile(context.Background(), filepath.Join(lib, "b.bin"))
	waiting.For(t, "the document cache to serve b.bin", func() bool {
		if n.Store().CacheStats().Hits > 0 {
			return true
		}
		if code, _ := get(t, n, "GET", "/api/meta/"+cached.SHA256); code != 200 {
			t.Fatalf("before the stop: %d", code)
		}
		return false
	})
	pid := srv.Pid()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Registered after the server's own cleanup, so it runs first: a
	// stopped server would not stop on SIGTERM.
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })

	for _, path := range []string{"/api/meta/" + h.SHA256, "/ready"} {
		code, m := get(t, n, "GET", path)
		msg, _ := m["error"].(string)
		if code != 503 || !strings.Contains(msg, "redis is not answering") {
			t.Errorf("%s with Redis stopped: %d %v, want 503 and an error saying Redis is not answering", path, code, m)
		}
	}
	// The requests above took a second each: the cache's beat is gone.
	if code, m := get(t, n, "GET", "/api/meta/"+cached.SHA256); code != 503 {
		t.Errorf("the cached document with Redis stopped for a second: %d %v, want 503", code, m)
	}
	code, m := get(t, n, "GET", "/api/status")
	if redis, _ := m["redis"].(map[string]any); code != 200 || redis["ok"] != false || !strings.Contains(fmt.Sprint(redis["error"]), "not answering") {
		t.Errorf("status with Redis stopped: %d %v", code, m["redis"])
	}

	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code, m := get(t, n, "GET", "/api/meta/"+h.SHA256); code != 200 {
		t.Errorf("after SIGCONT: %d %v", code, m)
	}
}
