package storetest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/metamesh/node/store"
)

// Dir returns a new, short temporary directory removed by tb.Cleanup. A
// managed redis-server puts its unix socket in its directory, and a socket
// path must fit in store.MaxSocketPath bytes, which the paths of
// tb.TempDir (named after the test) can exceed.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "mm")
	if err != nil {
		tb.Fatalf("temp dir: %v", err)
	}
	tb.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// Server starts a redis-server for tb and returns it. A missing
// redis-server fails the test: the suite never silently skips.
func Server(tb testing.TB) *store.Server {
	tb.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		tb.Fatalf("redis-server is not installed (sudo apt-get install redis-server): %v", err)
	}
	srv, err := store.StartServer(context.Background(), store.ServerConfig{Dir: Dir(tb), Logger: Logger(tb)})
	if err != nil {
		tb.Fatalf("start redis-server: %v", err)
	}
	tb.Cleanup(func() { _ = srv.Close() })
	return srv
}

// New starts a redis-server and opens a Store on it.
func New(tb testing.TB) *store.Store {
	tb.Helper()
	srv := Server(tb)
	s, err := store.Open(context.Background(), store.Options{URL: srv.URL(), Logger: Logger(tb)})
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// Logger discards logs (tests assert on behaviour, not log lines).
func Logger(testing.TB) *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Buffer is a strings.Builder that a logger or a running process may write
// while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
