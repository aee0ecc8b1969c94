package ingest

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// Fault tests: the store and the folder are real; the faults (a full
// inotify table, an overflowing event queue, a file vanishing or changing
// mid-pass, an unreadable file, Redis going away) are injected.

// faultFS is the library's file system with faults: open, when set, runs
// in place of each Open, given the read and the real open; watch, when
// set, in place of Watch.
type faultFS struct {
	fileSystem
	open  func(p string, r read, open func() (*os.File, error)) (*os.File, error)
	watch func(dir string) error
}

func (f faultFS) Open(p string, r read) (*os.File, error) {
	if f.open == nil {
		return f.fileSystem.Open(p, r)
	}
	return f.open(p, r, func() (*os.File, error) { return f.fileSystem.Open(p, r) })
}

func (f faultFS) Watch(dir string) error {
	if f.watch == nil {
		return f.fileSystem.Watch(dir)
	}
	return f.watch(dir)
}

func setup(t *testing.T, watch bool, tweak func(*Ingester)) (*Ingester, *store.Store, string, *storetest.Buffer) {
	t.Helper()
	s := storetest.New(t)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	logs := &storetest.Buffer{}
	in, err := New(s, Config{
		Libraries: []string{dir}, Workers: 2, Settle: 30 * time.Millisecond, Watch: watch,
		RescanInterval: 200 * time.Millisecond, Extractors: []Extractor{FileInfo{}},
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if tweak != nil {
		tweak(in)
	}
	if err := in.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	waitIdle(t, in)
	return in, s, dir, logs
}

func waitIdle(t *testing.T, in *Ingester) {
	t.Helper()
	if err := in.WaitIdle(waiting.Context(t)); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, p string, n int) {
	t.Helper()
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + len(p))
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func stored(s *store.Store, p string) bool {
	_, err := s.Path(context.Background(), p)
	return err == nil
}

func consistent(t *testing.T, s *store.Store) {
	t.Helper()
	v, err := s.Check(context.Background())
	if err != nil || len(v) > 0 {
		t.Fatalf("Check = %v %v", v, err)
	}
}

func TestWatch_WatchLimitFallsBackToRescans(t *testing.T) {
	in, s, dir, logs := setup(t, true, func(in *Ingester) {
		in.fs = faultFS{fileSystem: in.fs, watch: func(string) error { return syscall.ENOSPC }}
	})
	if st := in.Progress().State; st != StatePolling {
		t.Fatalf("state = %s, want %s", st, StatePolling)
	}
	if !strings.Contains(logs.String(), "fs.inotify.max_user_watches") || !strings.Contains(logs.String(), "needed=") {
		t.Errorf("log does not name the watch limit needed:\n%s", logs)
	}
	write(t, filepath.Join(dir, "late.bin"), 1000)
	waiting.For(t, "a periodic rescan to find the new file", func() bool { return stored(s, filepath.Join(dir, "late.bin")) })
	consistent(t, s)
}

func TestWatch_OverflowRescans(t *testing.T) {
	in, s, dir, _ := setup(t, true, nil)
	before, _ := s.Events(context.Background(), "", 1000)
	// Pretend events were lost: a file appears without one, then the
	// watcher reports an overflow.
	in.watcher.Remove(dir)
	write(t, filepath.Join(dir, "unseen.bin"), 1000)
	in.watcher.Errors <- fsnotify.ErrEventOverflow
	waiting.For(t, "the rescan after an overflow", func() bool { return stored(s, filepath.Join(dir, "unseen.bin")) })
	after, _ := s.Events(context.Background(), "", 1000)
	resets := 0
	for _, e := range after[len(before):] {
		if e.Type == store.EventReset {
			resets++
		}
	}
	if resets != 1 {
		t.Errorf("reset events after overflow = %d, want 1", resets)
	}
}

func TestIngest_FileVanishesDuringHashing(t *testing.T) {
	var target string
	in, s, dir, _ := setup(t, false, func(in *Ingester) {
		in.fs = faultFS{fileSystem: in.fs, open: func(p string, r read, open func() (*os.File, error)) (*os.File, error) {
			if p == target && r == readFull {
				os.Remove(p)
			}
			return open()
		}}
	})
	target = filepath.Join(dir, "vanishing.bin")
	write(t, target, 3<<20)
	in.Rescan()
	waitIdle(t, in)
	if stored(s, target) {
		t.Error("a vanished file left its path in the store")
	}
	if n, _ := s.Roots(context.Background()); n != 0 {
		t.Errorf("a vanished file left %d roots (partial root or CID for gone bytes)", n)
	}
	consistent(t, s)
}

func TestIngest_FileChangesDuringHashing(t *testing.T) {
	var target string
	var once sync.Once
	in, s, dir, _ := setup(t, false, func(in *Ingester) {
		in.fs = faultFS{fileSystem: in.fs, open: func(p string, r read, open func() (*os.File, error)) (*os.File, error) {
			if p == target && r == readFull {
				once.Do(func() { write(t, p, 3<<20+5) })
			}
			return open()
		}}
	})
	target = filepath.Join(dir, "changing.bin")
	write(t, target, 3<<20)
	in.Rescan()
	waiting.For(t, "the changed file to be ingested as it is now", func() bool {
		st, err := s.Path(context.Background(), target)
		return err == nil && st.Hashed && st.Size == 3<<20+5
	})
	waitIdle(t, in)
	h, err := HashFile(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := s.Path(context.Background(), target)
	doc, _ := s.Document(context.Background(), st.Root)
	if len(doc.CIDs) != 3 || doc.CanonicalCID() != h.IPFS {
		t.Errorf("cids %v, want those of the current bytes (%s)", doc.CIDs, h.IPFS)
	}
	consistent(t, s)
}

func TestIngest_UnreadableFileSkippedThenRetried(t *testing.T) {
	var mu sync.Mutex
	denied := true
	in, s, dir, logs := setup(t, true, func(in *Ingester) {
		in.fs = faultFS{fileSystem: in.fs, open: func(p string, _ read, open func() (*os.File, error)) (*os.File, error) {
			mu.Lock()
			defer mu.Unlock()
			if denied && strings.HasSuffix(p, "locked.bin") {
				return nil, &os.PathError{Op: "open", Path: p, Err: syscall.EACCES}
			}
			return open()
		}}
	})
	p := filepath.Join(dir, "locked.bin")
	write(t, p, 1000)
	waiting.For(t, "the skip to be logged", func() bool { return strings.Contains(logs.String(), "permission denied") })
	if stored(s, p) {
		t.Fatal("unreadable file stored")
	}
	if in.Progress().Errors == 0 {
		t.Error("error not counted")
	}
	mu.Lock()
	denied = false
	mu.Unlock()
	write(t, p, 1001) // it changes: retried
	waiting.For(t, "the retry after a change", func() bool { return stored(s, p) })
	// Stored once it arrives; its full hash lands after: fsck reads the
	// store key by key, so it waits for the ingester to be idle.
	if err := in.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := in.Progress().Errors; n != 0 {
		t.Errorf("scan.errors = %d after the file was fixed, want 0", n)
	}
	consistent(t, s)
}

func TestIngest_RedisOutagePausesAndResumes(t *testing.T) {
	dataDir := t.TempDir()
	srv, err := store.StartServer(context.Background(), store.ServerConfig{Dir: dataDir, Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	port := srv.Addr()[strings.LastIndex(srv.Addr(), ":")+1:]
	s, err := store.Open(context.Background(), store.Options{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	logs := &storetest.Buffer{}
	in, err := New(s, Config{Libraries: []string{dir}, Workers: 2, Settle: 30 * time.Millisecond, Watch: true,
		Extractors: []Extractor{}, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	waitIdle(t, in)
	write(t, filepath.Join(dir, "before.bin"), 2000)
	waiting.For(t, "ingest before the outage", func() bool { return stored(s, filepath.Join(dir, "before.bin")) })

	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		write(t, filepath.Join(dir, "during"+string(rune('a'+i))+".bin"), 3000+i)
	}
	waiting.For(t, "ingest to pause", func() bool { return strings.Contains(logs.String(), "ingest paused") })

	var p int
	for _, c := range port {
		p = p*10 + int(c-'0')
	}
	srv2, err := store.StartServer(context.Background(), store.ServerConfig{Dir: dataDir, Port: p, Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv2.Close()
	for i := 0; i < 5; i++ {
		q := filepath.Join(dir, "during"+string(rune('a'+i))+".bin")
		waiting.For(t, "ingest after the outage: "+q, func() bool {
			st, err := s.Path(context.Background(), q)
			return err == nil && st.Hashed
		})
	}
	if !stored(s, filepath.Join(dir, "before.bin")) {
		t.Error("data from before the outage lost")
	}
	if !strings.Contains(logs.String(), "ingest resumed") {
		t.Error("no resume logged")
	}
	consistent(t, s)
}

// A worker blocked on a file for good (a read of a hung mount) makes the
// ingester say it is stuck, naming the file, and Close returns after
// StopWait without it, naming what it left.
func TestIngest_BlockedWorker(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var target string
	in, _, dir, logs := setup(t, false, func(in *Ingester) {
		in.cfg.StopWait, in.cfg.StuckAfter = 300*time.Millisecond, 300*time.Millisecond
		in.fs = faultFS{fileSystem: in.fs, open: func(p string, _ read, open func() (*os.File, error)) (*os.File, error) {
			if p == target {
				<-release
			}
			return open()
		}}
	})
	target = filepath.Join(dir, "hung.bin")
	write(t, target, 4096)
	in.Rescan()
	waiting.For(t, "the ingester to say it is stuck", func() bool {
		p, _, stuck := in.Stuck()
		return stuck && strings.Contains(p, "hung.bin")
	})
	done := make(chan struct{})
	go func() { in.Close(); close(done) }()
	waiting.Recv(t, done, "Close to return without waiting for the blocked worker")
	if out := logs.String(); !strings.Contains(out, "stopped without the workers still blocked on a file") || !strings.Contains(out, "hung.bin") {
		t.Errorf("Close did not say what it left:\n%s", out)
	}
}

// Bytes that changed under an unchanged size and mtime (a block read for
// a peer no longer hashes to its CID) are hashed again on Rehash: the
// path ends up with the CIDs of its bytes as they are, and Touch alone
// would not have looked.
func TestIngest_RehashUnderUnchangedStat(t *testing.T) {
	in, s, dir, _ := setup(t, false, nil)
	p := filepath.Join(dir, "film.mkv")
	write(t, p, 3<<20)
	in.Rescan()
	waiting.For(t, "the file to be ingested", func() bool {
		st, err := s.Path(context.Background(), p)
		return err == nil && st.Hashed
	})
	waitIdle(t, in)
	fi, _ := os.Stat(p)
	data, _ := os.ReadFile(p)
	data[2<<20] ^= 0xff // outside the midhash's sample
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	h, err := HashFile(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	in.Rehash(p)
	waiting.For(t, "the file to be hashed again", func() bool {
		st, err := s.Path(context.Background(), p)
		if err != nil {
			return false
		}
		own, err := s.Own(context.Background(), st.Root)
		return err == nil && own.SHA256 == h.SHA256 && own.IPFS == h.IPFS
	})
	waitIdle(t, in)
	consistent(t, s)
}
