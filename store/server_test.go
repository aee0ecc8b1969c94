package store_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

func TestStartServer_MissingBinary(t *testing.T) {
	_, err := store.StartServer(ctx, store.ServerConfig{Dir: storetest.Dir(t), Binary: "redis-server-not-installed"})
	if !errors.Is(err, store.ErrRedisNotInstalled) || !strings.Contains(err.Error(), "apt-get install redis-server") {
		t.Fatalf("err = %v, want ErrRedisNotInstalled with an install hint", err)
	}
}

// rawClient is a plain go-redis client on srv, for what the Store does
// not offer (CONFIG, INFO).
func rawClient(t testing.TB, srv *store.Server) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// notifyClasses expands notify-keyspace-events flags into their classes
// ("A" is g$lshzxet plus module events).
func notifyClasses(flags string) map[rune]bool {
	out := map[rune]bool{}
	for _, c := range strings.ReplaceAll(flags, "A", "g$lshzxet") {
		out[c] = true
	}
	return out
}

func TestOpen_NotifyKeyspaceEvents(t *testing.T) {
	srv := storetest.Server(t)
	raw := rawClient(t, srv)
	tests := []struct {
		preset     string
		wantChange bool // whether Open has to CONFIG SET
	}{
		{"", true},
		{"Ex", true},
		{"Elm", true},
		{"Kg", true},
		{"AE", true},   // A covers $, g and x; only K is missing
		{"AKE", false}, // everything is there
		{"K$gx", false},
		{"KEA", false},
	}
	for _, tt := range tests {
		t.Run("preset "+strconv.Quote(tt.preset), func(t *testing.T) {
			if err := raw.ConfigSet(ctx, "notify-keyspace-events", tt.preset).Err(); err != nil {
				t.Fatal(err)
			}
			before := raw.ConfigGet(ctx, "notify-keyspace-events").Val()["notify-keyspace-events"]
			if err := raw.ConfigResetStat(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			s := must[*store.Store](t)(store.Open(ctx, store.Options{URL: srv.URL(), Logger: storetest.Logger(t)}))
			defer s.Close()
			got := must[string](t)(s.DebugConfigGet(ctx, "notify-keyspace-events"))
			have := notifyClasses(got)
			for c := range notifyClasses(before) {
				if !have[c] {
					t.Errorf("notify-keyspace-events %q → %q: class %q removed", before, got, c)
				}
			}
			for _, c := range "K$gx" {
				if !have[c] {
					t.Errorf("notify-keyspace-events %q → %q: class %q missing", before, got, c)
				}
			}
			stats := raw.Info(ctx, "commandstats").Val()
			if changed := strings.Contains(stats, "cmdstat_config|set:"); changed != tt.wantChange {
				t.Errorf("CONFIG SET called = %v, want %v (%q → %q)", changed, tt.wantChange, before, got)
			}
		})
	}
}

// TestServer_UnixSocketOnly: the managed server has no TCP listener, and
// its socket and directory are closed to other users.
func TestServer_UnixSocketOnly(t *testing.T) {
	srv := storetest.Server(t)
	raw := rawClient(t, srv)
	if got := raw.ConfigGet(ctx, "port").Val()["port"]; got != "0" {
		t.Errorf("CONFIG GET port = %q, want 0 (no TCP)", got)
	}
	if !strings.HasPrefix(srv.URL(), "unix://") {
		t.Errorf("URL = %q, want unix://", srv.URL())
	}
	for _, p := range []string{srv.Addr(), filepath.Dir(srv.Addr())} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s has mode %v, open to group or others", p, perm)
		}
	}
	if fi, _ := os.Stat(srv.Addr()); fi.Mode().Type() != os.ModeSocket {
		t.Errorf("%s is not a socket: %v", srv.Addr(), fi.Mode())
	}
}

// TestServer_NarrowsWideDir: a redis dir created wider than 0700 (by hand,
// or by an older version) is narrowed before the server starts.
func TestServer_NarrowsWideDir(t *testing.T) {
	dir := filepath.Join(storetest.Dir(t), "redis")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	srv := must[*store.Server](t)(store.StartServer(ctx, store.ServerConfig{Dir: dir, Logger: storetest.Logger(t)}))
	defer srv.Close()
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("redis dir mode %v, want 0700", fi.Mode().Perm())
	}
}

// TestOpen_DataDirTooDeep: a socket path over the kernel's limit is a
// clear error naming the path, its length and the limit, not a silently
// truncated socket name.
func TestOpen_DataDirTooDeep(t *testing.T) {
	data := filepath.Join(storetest.Dir(t), strings.Repeat("d", 100))
	_, err := store.Open(ctx, store.Options{DataDir: data, Logger: storetest.Logger(t)})
	socket := filepath.Join(data, "redis", store.SocketName)
	if err == nil {
		t.Fatal("Open with a too-deep data directory succeeded")
	}
	for _, want := range []string{socket, strconv.Itoa(len(socket)), strconv.Itoa(store.MaxSocketPath)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("the too-deep data directory was created: %v", err)
	}
}

func TestServer_RestartsAfterCrash(t *testing.T) {
	dir := storetest.Dir(t)
	srv := must[*store.Server](t)(store.StartServer(ctx, store.ServerConfig{Dir: dir, Logger: storetest.Logger(t)}))
	defer srv.Close()
	s := must[*store.Store](t)(store.Open(ctx, store.Options{URL: srv.URL()}))
	defer s.Close()
	a := ingest(t, s, stat("/a", 1), content{1, 1})

	old := srv.Pid()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitRestarted(t, srv, s, old)
	// The restarted server accepts work through the same Store.
	b := ingest(t, s, stat("/b", 2), content{2, 2})
	if b.Root == a.Root {
		t.Fatal("distinct content shares a root")
	}
	mustCheck(t, s)
}

// A redis-server that stops answering while its process runs (SIGSTOP,
// as a hung disk would leave it) is killed after HangAfter and
// restarted, with its data.
func TestServer_RestartsAHungServer(t *testing.T) {
	dir := storetest.Dir(t)
	logs := &storetest.Buffer{}
	srv := must[*store.Server](t)(store.StartServer(ctx, store.ServerConfig{Dir: dir, Logger: slog.New(slog.NewTextHandler(logs, nil)), HangAfter: 500 * time.Millisecond}))
	defer srv.Close()
	s := must[*store.Store](t)(store.Open(ctx, store.Options{URL: srv.URL()}))
	defer s.Close()
	a := ingest(t, s, stat("/a", 1), content{1, 1})
	old := srv.Pid()
	if err := syscall.Kill(old, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitRestarted(t, srv, s, old)
	if !strings.Contains(logs.String(), "redis-server has not answered PING; killing it to restart it") {
		t.Errorf("no line says why it was restarted:\n%s", logs)
	}
	if got, err := s.Path(ctx, "/a"); err != nil || got.Root != a.Root {
		t.Errorf("after the restart: %+v %v", got, err)
	}
}

func TestServer_DataSurvivesCleanRestart(t *testing.T) {
	dir := storetest.Dir(t)
	srv := must[*store.Server](t)(store.StartServer(ctx, store.ServerConfig{Dir: dir, Logger: storetest.Logger(t)}))
	s := must[*store.Store](t)(store.Open(ctx, store.Options{URL: srv.URL()}))
	a := ingest(t, s, stat("/a", 1), content{1, 1})
	s.Close()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	srv = must[*store.Server](t)(store.StartServer(ctx, store.ServerConfig{Dir: dir, Logger: storetest.Logger(t)}))
	defer srv.Close()
	s = must[*store.Store](t)(store.Open(ctx, store.Options{URL: srv.URL()}))
	defer s.Close()
	if got := must[store.RootID](t)(s.GetByCID(ctx, content{1, 1}.hashes().IPFS)); got != a.Root {
		t.Errorf("after restart GetByCID = %s, want %s", got, a.Root)
	}
}

func TestOpen_ManagedServer(t *testing.T) {
	data := storetest.Dir(t)
	s := must[*store.Store](t)(store.Open(ctx, store.Options{DataDir: data, Logger: storetest.Logger(t)}))
	defer s.Close()
	if s.Server() == nil {
		t.Fatal("no managed server")
	}
	ingest(t, s, stat("/a", 1), content{1, 1})
	if n := must[int64](t)(s.Roots(ctx)); n != 1 {
		t.Errorf("roots = %d", n)
	}
}

func TestStartServer_OneServerPerDataDir(t *testing.T) {
	dir := storetest.Dir(t)
	srv := must[*store.Server](t)(store.StartServer(ctx, store.ServerConfig{Dir: dir, Logger: storetest.Logger(t)}))
	if _, err := store.StartServer(ctx, store.ServerConfig{Dir: dir, LockWait: 100 * time.Millisecond, Logger: storetest.Logger(t)}); !errors.Is(err, store.ErrDataDirInUse) {
		t.Fatalf("second server on one data dir: %v, want ErrDataDirInUse", err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	again := must[*store.Server](t)(store.StartServer(ctx, store.ServerConfig{Dir: dir, Logger: storetest.Logger(t)}))
	again.Close()
}

// TestRunningServer: another process's managed server is found by its
// data directory while it answers, and not once it is gone (its socket
// file may stay behind).
func TestRunningServer(t *testing.T) {
	data := storetest.Dir(t)
	if u, ok := store.RunningServer(ctx, data); ok {
		t.Fatalf("a server found in an empty data directory: %s", u)
	}
	s := must[*store.Store](t)(store.Open(ctx, store.Options{DataDir: data, Logger: storetest.Logger(t)}))
	ingest(t, s, stat("/a", 1), content{1, 1})
	u, ok := store.RunningServer(ctx, data)
	if !ok || u != s.Server().URL() {
		t.Fatalf("RunningServer = %q %v, want %q", u, ok, s.Server().URL())
	}
	other := must[*store.Store](t)(store.Open(ctx, store.Options{URL: u, Logger: storetest.Logger(t)}))
	if n := must[int64](t)(other.Roots(ctx)); n != 1 {
		t.Errorf("roots through the running server = %d, want 1", n)
	}
	other.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if u, ok := store.RunningServer(ctx, data); ok {
		t.Errorf("a stopped server still found: %s", u)
	}
}

// waitRestarted waits until srv runs another process than old and s's
// Redis answers again.
func waitRestarted(t *testing.T, srv *store.Server, s *store.Store, old int) {
	t.Helper()
	waiting.For(t, fmt.Sprintf("redis-server (pid %d) to be restarted", old), func() bool {
		return srv.Pid() != old && s.Ping(ctx) == nil
	})
}
