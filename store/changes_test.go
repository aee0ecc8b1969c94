package store_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node/search"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// takes records the batches a consumer took.
type takes struct {
	mu      sync.Mutex
	batches []store.ChangeBatch
	// fail, while above zero, fails that many takes of batches that are
	// not sweeps.
	fail int
}

func (k *takes) consumer(name string) store.Consumer {
	return store.Consumer{Name: name, Take: func(_ context.Context, b store.ChangeBatch) error {
		k.mu.Lock()
		defer k.mu.Unlock()
		if !b.Sweep && k.fail > 0 {
			k.fail--
			return errors.New("a consumer that fails")
		}
		k.batches = append(k.batches, b)
		return nil
	}}
}

// root is the last the consumer took of r: false before any.
func (k *takes) root(r store.RootID) (store.Changed, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := len(k.batches) - 1; i >= 0; i-- {
		for _, c := range k.batches[i].Roots {
			if c.Root == r {
				return c, true
			}
		}
	}
	return store.Changed{}, false
}

func (k *takes) swept() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.ContainsFunc(k.batches, func(b store.ChangeBatch) bool { return b.Last })
}

func runChanges(t *testing.T, s *store.Store, cs ...store.Consumer) *store.Changes {
	t.Helper()
	ch := s.Changes(cs...)
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); ch.Run(cctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return ch
}

// One follower hands both consumers the same batches: a sweep of what
// was there at start, then every root a write changed (a new file, an
// outside writer's searchable field, a delete), each read with what the
// announcer, the search index and the catalog need of it.
func TestChanges_OneFollowerForEveryConsumer(t *testing.T) {
	srv := storetest.Server(t)
	s := openOn(t, srv)
	before := ingest(t, s, stat("/l/before.mkv", 10), content{1, 1}).Root
	var a, b takes
	runChanges(t, s, a.consumer("a"), b.consumer("b"))
	waiting.For(t, "the sweep at start", a.swept)
	got, ok := a.root(before)
	if !ok || got.Announced != (content{1, 1}).hashes().SHA256 && got.Announced != (content{1, 1}).hashes().IPFS || !got.Exists {
		t.Fatalf("the sweep's root = %+v (taken %v), want it announced", got, ok)
	}
	select {
	case <-s.Following():
	case <-waiting.After():
		t.Fatal("the field subscription was never in place")
	}

	added := ingest(t, s, stat("/l/added.mkv", 10), content{2, 2}).Root
	waiting.For(t, "the new file", func() bool { c, ok := a.root(added); return ok && c.Announced != "" })

	// An outside writer's field: tracked into the field index first.
	if err := rawClient(t, srv).Set(ctx, "file:"+string(added)+"/title", "Quarry Lanterns", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the title written", func() bool {
		c, _ := a.root(added)
		return slices.Contains(search.TextOf(c.Document).Title, "quarry")
	})

	if err := s.DeleteRoot(ctx, added); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the delete", func() bool { c, ok := a.root(added); return ok && !c.Exists && c.Announced == "" })

	a.mu.Lock()
	b.mu.Lock()
	defer a.mu.Unlock()
	defer b.mu.Unlock()
	if len(b.batches) < len(a.batches) {
		t.Fatalf("b took %d batches, a %d", len(b.batches), len(a.batches))
	}
	for i := range a.batches {
		if fmt.Sprint(a.batches[i]) != fmt.Sprint(b.batches[i]) {
			t.Errorf("batch %d: a took %+v, b %+v", i, a.batches[i], b.batches[i])
		}
	}
}

// A consumer that fails is handed the batch's roots again, as is every
// other consumer (they keep sets); a sweep asked for hands every root,
// changesBatch (1,000) roots to a batch, only the last one marked.
func TestChanges_RetryAndSweepInBatches(t *testing.T) {
	s := storetest.New(t)
	var a, b takes
	a.fail = 1
	ch := runChanges(t, s, a.consumer("a"), b.consumer("b"))
	waiting.For(t, "the sweep at start", a.swept)

	r := ingest(t, s, stat("/l/one.mkv", 10), content{1, 1}).Root
	waiting.For(t, "the root, once the failed take is handed again", func() bool { _, ok := a.root(r); return ok })
	if _, ok := b.root(r); !ok {
		t.Fatal("the other consumer never took the root")
	}

	const n = 2500
	var stats []store.FileStat
	var hashes []store.Hashes
	for i := range n - 1 {
		stats = append(stats, stat(fmt.Sprintf("/l/many/%d.mkv", i), 10))
		hashes = append(hashes, content{100 + i, 100 + i}.hashes())
	}
	for i := range stats {
		if _, err := s.Arrive(ctx, stats[i], hashes[i].Midhash); err != nil {
			t.Fatal(err)
		}
	}
	all := must[[]store.RootID](t)(s.RootIDs(ctx))
	if len(all) != n {
		t.Fatalf("%d roots, want %d", len(all), n)
	}
	waiting.For(t, "the new roots handed", func() bool {
		for _, r := range all {
			if _, ok := a.root(r); !ok {
				return false
			}
		}
		return true
	})
	a.mu.Lock()
	a.batches = nil
	a.mu.Unlock()
	ch.Sweep()
	waiting.For(t, "the sweep asked for", a.swept)
	a.mu.Lock()
	defer a.mu.Unlock()
	var sizes []int
	seen := map[store.RootID]bool{}
	for i, bt := range a.batches {
		if !bt.Sweep || bt.Last != (i == len(a.batches)-1) {
			t.Errorf("batch %d: sweep %v, last %v", i, bt.Sweep, bt.Last)
		}
		sizes = append(sizes, len(bt.Roots))
		for _, c := range bt.Roots {
			seen[c.Root] = true
		}
	}
	if !slices.Equal(sizes, []int{1000, 1000, 500}) || len(seen) != n {
		t.Errorf("the sweep's batches hold %v roots, %d of the %d", sizes, len(seen), n)
	}
}

// A trim of the feed past the follower's position (forced while it is
// held between two reads) is a resync: a sweep marked Resync hands every
// root, those whose entries were trimmed among them. Redis going away and
// coming back on the same socket loses nothing: what is written after it,
// a file and an outside writer's field, is handed on.
func TestChanges_TrimAndRestart(t *testing.T) {
	srv := storetest.Server(t)
	var logs storetest.Buffer
	s, err := store.Open(ctx, store.Options{URL: srv.URL(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var a takes
	ch := s.Changes(a.consumer("a"))
	held := make(chan struct{})
	gate := make(chan struct{})
	var hold atomic.Bool
	store.SetAfterFeedRead(ch, func() {
		if hold.CompareAndSwap(true, false) {
			held <- struct{}{}
			<-gate
		}
	})
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); ch.Run(cctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waiting.For(t, "the sweep at start", a.swept)
	<-s.Following()

	hold.Store(true)
	first := ingest(t, s, stat("/l/first.mkv", 10), content{1, 1}).Root
	if _, ok := waiting.Recv(t, held, "the follower held after a read"); !ok {
		t.Fatal("the follower's hook channel closed")
	}
	var trimmed []store.RootID
	for i := range 3 {
		trimmed = append(trimmed, ingest(t, s, stat(fmt.Sprintf("/l/t%d.mkv", i), 10), content{10 + i, 10 + i}).Root)
	}
	if err := rawClient(t, srv).XTrimMaxLen(ctx, "meta:events", 1).Err(); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	a.batches = nil
	a.mu.Unlock()
	gate <- struct{}{}
	resynced := func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return slices.ContainsFunc(a.batches, func(b store.ChangeBatch) bool { return b.Resync && b.Last })
	}
	waiting.For(t, "the resync after the trim", resynced)
	for _, r := range append(trimmed, first) {
		if c, ok := a.root(r); !ok || !c.Exists {
			t.Errorf("root %s not handed by the resync", r)
		}
	}
	if !strings.Contains(logs.String(), "the change feed was trimmed past the node; sweeping the store again") {
		t.Errorf("log = %q, want the trim warning", logs.String())
	}

	// Redis goes away (a clean shutdown: the data is on disk) and comes
	// back on the same socket.
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "a failed read", func() bool { return strings.Contains(logs.String(), "cannot read the change feed; retrying") })
	srv2, err := store.StartServer(ctx, store.ServerConfig{Dir: filepath.Dir(srv.Addr()), Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv2.Close() })
	after := ingest(t, s, stat("/l/after.mkv", 10), content{50, 50}).Root
	waiting.For(t, "a file added after the outage", func() bool { c, ok := a.root(after); return ok && c.Exists })
	if err := rawClient(t, srv2).Set(ctx, "file:"+string(first)+"/title", "Lantern Quarry", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "an outside write after the outage", func() bool {
		c, _ := a.root(first)
		return slices.Contains(search.TextOf(c.Document).Title, "lantern")
	})
}

// A write to a field queues its root only when some consumer's Fields
// takes it, a peer's claim (origin/<peer>/<field>) by its own name; a
// change feed's entry queues it whatever Fields says. Keyspace
// notifications arrive in order: the root whose field no consumer takes
// is written first, so had it been queued it would be in a batch no later
// than the one that brings the root written after it.
func TestChanges_FieldsChooseTheRoots(t *testing.T) {
	srv := storetest.Server(t)
	s := openOn(t, srv)
	skipped := ingest(t, s, stat("/l/skipped.mkv", 10), content{1, 1}).Root
	taken := ingest(t, s, stat("/l/taken.mkv", 10), content{2, 2}).Root
	claimed := ingest(t, s, stat("/l/claimed.mkv", 10), content{3, 3}).Root
	var a, b takes
	titles := a.consumer("titles")
	titles.Fields = func(f string) bool { return f == "title" }
	none := b.consumer("nothing")
	none.Fields = func(string) bool { return false }
	runChanges(t, s, titles, none)
	waiting.For(t, "the sweep at start", a.swept)
	select {
	case <-s.Following():
	case <-waiting.After():
		t.Fatal("the field subscription was never in place")
	}
	raw := rawClient(t, srv)
	for _, w := range []struct {
		root  store.RootID
		field string
	}{{skipped, "plot/eng"}, {claimed, "origin/12D3KooWPeer/title"}, {taken, "title"}} {
		if err := raw.Set(ctx, "file:"+string(w.root)+"/"+w.field, "Quarry", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	changed := func(r store.RootID) bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, bt := range a.batches {
			if !bt.Sweep && slices.ContainsFunc(bt.Roots, func(c store.Changed) bool { return c.Root == r }) {
				return true
			}
		}
		return false
	}
	waiting.For(t, "the root whose title was written", func() bool { return changed(taken) })
	if !changed(claimed) {
		t.Error("a peer's claim of a title did not queue its root")
	}
	if changed(skipped) {
		t.Error("a write to a field no consumer takes queued its root")
	}
	// The change feed queues a root for everyone: a delete.
	if err := s.DeleteRoot(ctx, skipped); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the delete", func() bool { c, ok := b.root(skipped); return ok && !c.Exists })
}

// FieldName is the one unwrapping of a peer's claim.
func TestFieldName(t *testing.T) {
	for f, want := range map[string]string{
		"title": "title", "titles/eng": "titles/eng", "origin/12D3KooWPeer/title": "title",
		"origin/12D3KooWPeer/titles/eng": "titles/eng", "origin/12D3KooWPeer": "origin/12D3KooWPeer", "origin": "origin",
	} {
		if got := store.FieldName(f); got != want {
			t.Errorf("FieldName(%q) = %q, want %q", f, got, want)
		}
	}
}
