package store_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

func TestStartServer_MissingBinary(t *testing.T) {
	_, err := store.StartServer(ctx, store.ServerConfig{Dir: t.TempDir(), Binary: "redis-server-not-installed"})
	if !errors.Is(err, store.ErrRedisNotInstalled) || !strings.Contains(err.Error(), "apt-get install redis-server") {
		t.Fatalf("err = %v, want ErrRedisNotInstalled with an install hint", err)
	}
}

func TestOpen_KeepsNotifyClassesAndAddsKeyspace(t *testing.T) {
	srv := storetest.Server(t)
	raw := must[*store.Store](t)(store.Open(ctx, store.Options{URL: srv.URL()}))
	defer raw.Close()
	if err := raw.DebugConfigSet(ctx, "notify-keyspace-events", "Ex"); err != nil {
		t.Fatal(err)
	}
	s := must[*store.Store](t)(store.Open(ctx, store.Options{URL: srv.URL()}))
	defer s.Close()
	got := must[string](t)(s.DebugConfigGet(ctx, "notify-keyspace-events"))
	for _, c := range []string{"K", "E", "x", "$"} {
		if !strings.Contains(got, c) {
			t.Errorf("notify-keyspace-events = %q, missing %q", got, c)
		}
	}
}

func TestServer_RestartsAfterCrash(t *testing.T) {
	dir := t.TempDir()
	srv := must[*store.Server](t)(store.StartServer(ctx, store.ServerConfig{Dir: dir, Logger: storetest.Logger(t)}))
	defer srv.Close()
	s := must[*store.Store](t)(store.Open(ctx, store.Options{URL: srv.URL()}))
	defer s.Close()
	a := ingest(t, s, stat("/a", 1), content{1, 1})

	old := srv.Pid()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for srv.Pid() == old || s.Ping(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatal("redis-server was not restarted")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The restarted server accepts work through the same Store.
	b := ingest(t, s, stat("/b", 2), content{2, 2})
	if b.Root == a.Root {
		t.Fatal("distinct content shares a root")
	}
	mustCheck(t, s)
}

func TestServer_DataSurvivesCleanRestart(t *testing.T) {
	dir := t.TempDir()
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
	data := t.TempDir()
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
	dir := t.TempDir()
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
