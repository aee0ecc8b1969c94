package ingest_test

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

var bg = context.Background()

// lib is a real library folder for a test.
type lib struct {
	tb  testing.TB
	dir string
}

func newLib(tb testing.TB) *lib {
	dir, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return &lib{tb: tb, dir: dir}
}

func (l *lib) path(rel string) string { return filepath.Join(l.dir, rel) }

// write creates rel with data, making parent directories.
func (l *lib) write(rel string, data []byte) string {
	l.tb.Helper()
	p := l.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		l.tb.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		l.tb.Fatal(err)
	}
	return p
}

func randBytes(tb testing.TB, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return b
}

func testConfig(l *lib) ingest.Config {
	return ingest.Config{
		Libraries:  []string{l.dir},
		Workers:    2,
		Settle:     50 * time.Millisecond,
		Extractors: []ingest.Extractor{ingest.FileInfo{}, ingest.Filename{}},
		Logger:     storetest.Logger(nil),
	}
}

func scan(tb testing.TB, s *store.Store, l *lib) ingest.Progress {
	tb.Helper()
	p, err := ingest.Scan(bg, s, testConfig(l), time.Second, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// watch starts a watching Ingester on l and waits for its first scan.
func watch(tb testing.TB, s *store.Store, l *lib) *ingest.Ingester {
	tb.Helper()
	return watchWith(tb, s, testConfig(l))
}

// watchWith is watch with a configuration of the test's own.
func watchWith(tb testing.TB, s ingest.Store, cfg ingest.Config) *ingest.Ingester {
	tb.Helper()
	cfg.Watch = true
	in, err := ingest.New(s, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := in.Start(bg); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { in.Close() })
	idle(tb, in)
	return in
}

func idle(tb testing.TB, in *ingest.Ingester) {
	tb.Helper()
	if err := in.WaitIdle(waiting.Context(tb)); err != nil {
		tb.Fatalf("ingester never went idle: %v", err)
	}
}

func mustCheck(tb testing.TB, s *store.Store) {
	tb.Helper()
	v, err := s.Check(bg)
	if err != nil {
		tb.Fatal(err)
	}
	if len(v) > 0 {
		tb.Fatalf("store violations: %v", v)
	}
}

// docOf returns the document the path belongs to.
func docOf(tb testing.TB, s *store.Store, path string) (store.PathState, store.Document) {
	tb.Helper()
	st, err := s.Path(bg, path)
	if err != nil {
		tb.Fatalf("path %s: %v", path, err)
	}
	d, err := s.Document(bg, st.Root)
	if err != nil {
		tb.Fatal(err)
	}
	return st, d
}

func known(s *store.Store, path string) bool {
	_, err := s.Path(bg, path)
	return err == nil
}

func events(tb testing.TB, s *store.Store) []store.Event {
	tb.Helper()
	e, err := s.Events(bg, "", 10000)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// storeWithRaw is a store on a server of its own and a plain Redis client
// of that server, for a test that writes what an older release left.
func storeWithRaw(tb testing.TB) (*store.Store, *redis.Client) {
	tb.Helper()
	srv := storetest.Server(tb)
	s, err := store.Open(bg, store.Options{URL: srv.URL(), Logger: storetest.Logger(tb)})
	if err != nil {
		tb.Fatal(err)
	}
	opts, _ := redis.ParseURL(srv.URL())
	raw := redis.NewClient(opts)
	tb.Cleanup(func() { raw.Close(); s.Close() })
	return s, raw
}
