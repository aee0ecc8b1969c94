package announce

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// TestFeedFollower runs the loop the announcer and the search indexer
// share against a real redis-server, through every path: a resync that
// fails is retried with a new head; entries from before the head are not
// handed on, entries after it are, in order; a trim past the follower's
// position counts, resyncs and carries on from the new head (the trimmed
// entries never come); Redis going away and coming back is waited out
// without a resync, and nothing appended afterwards is missed; the loop
// ends with its context.
func TestFeedFollower(t *testing.T) {
	t.Parallel()
	srv := storetest.Server(t)
	st, err := store.Open(context.Background(), store.Options{URL: srv.URL(), Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Addr()})
	t.Cleanup(func() { rdb.Close() })
	bg := context.Background()
	appendEv := func(path string) {
		t.Helper()
		if err := st.AppendEvent(bg, store.Event{Type: store.EventReset, Path: path}); err != nil {
			t.Fatalf("append %s: %v", path, err)
		}
	}
	appendEv("old") // before the head: the first resync covers it

	var logs storetest.Buffer
	var resyncs, trims atomic.Int32
	batches := make(chan []string)
	gate := make(chan struct{})
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	ff := &FeedFollower{
		Store: st, Log: slog.New(slog.NewTextHandler(&logs, nil)), Name: "the test follower",
		Resync: func(context.Context) error {
			if resyncs.Add(1) == 1 {
				return errors.New("injected resync failure")
			}
			return nil
		},
		ResyncWhat: "resync the test follower",
		Trimmed:    func() { trims.Add(1) },
		Entries: func(ctx context.Context, evs []store.Event) {
			var paths []string
			for _, e := range evs {
				paths = append(paths, e.Path)
			}
			// Hand the batch over, then wait to be let go: the test
			// changes the stream while the loop is between reads.
			select {
			case batches <- paths:
			case <-ctx.Done():
				return
			}
			select {
			case <-gate:
			case <-ctx.Done():
			}
		},
	}
	done := make(chan struct{})
	go func() { defer close(done); ff.Run(ctx) }()

	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; log:\n%s", what, logs.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// next returns the next batch the loop hands over, leaving the loop
	// held until release.
	next := func(want ...string) {
		t.Helper()
		select {
		case got := <-batches:
			if !slices.Equal(got, want) {
				t.Errorf("batch = %q, want %q", got, want)
			}
		case <-waiting.After():
			t.Fatalf("no batch; want %q; log:\n%s", want, logs.String())
		}
	}
	release := func() { gate <- struct{}{} }

	// The first resync fails: the loop pauses, reads the head again and
	// resyncs again.
	waitFor("the second resync", func() bool { return resyncs.Load() == 2 })
	if !strings.Contains(logs.String(), "cannot resync the test follower; retrying") || !strings.Contains(logs.String(), "injected resync failure") {
		t.Errorf("log = %q, want the failed resync and its error", logs.String())
	}
	appendEv("a1")
	next("a1")

	// While the loop is held after a1, entries after it arrive and the
	// stream is trimmed to the newest: a1 and b1, b2 are gone.
	appendEv("b1")
	appendEv("b2")
	appendEv("b3")
	if err := rdb.XTrimMaxLen(bg, "meta:events", 1).Err(); err != nil {
		t.Fatal(err)
	}
	release()
	waitFor("the resync after the trim", func() bool { return resyncs.Load() == 3 })
	if n := trims.Load(); n != 1 {
		t.Errorf("trimmed called %d times, want 1", n)
	}
	if !strings.Contains(logs.String(), "the change feed was trimmed past the test follower; sweeping the store again") {
		t.Errorf("log = %q, want the trim warning", logs.String())
	}
	appendEv("c1")
	next("c1") // not b3: the resync covered it
	release()

	// Redis goes away (a clean shutdown: the stream is on disk) and comes
	// back on the same socket after the loop failed to read at least once.
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor("a failed read", func() bool { return strings.Contains(logs.String(), "cannot read the change feed; retrying") })
	srv2, err := store.StartServer(bg, store.ServerConfig{Dir: filepath.Dir(srv.Addr()), Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv2.Close() })
	if srv2.Addr() != srv.Addr() {
		t.Fatalf("restarted on %s, want %s", srv2.Addr(), srv.Addr())
	}
	appendEv("d1")
	next("d1")
	release()
	if r, n := resyncs.Load(), trims.Load(); r != 3 || n != 1 {
		t.Errorf("after the outage: %d resyncs, %d trims; want 3 and 1 (an outage loses nothing)", r, n)
	}

	cancel()
	select {
	case <-done:
	case <-waiting.After():
		t.Fatal("the loop did not end with its context")
	}
}
