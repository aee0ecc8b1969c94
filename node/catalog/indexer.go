package catalog

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/metamesh/node/node/announce"
	"github.com/metamesh/node/store"
)

// Indexer keeps the search index (textindex.go) and the node's catalog
// (catalog.go) in step with the store: every root the change feed names
// (key-set changes, mints, merges, deletes) and every root whose
// searchable fields were written (store.WatchSearchFields: extraction,
// re-extraction, renames, peers' merges, outside writers) is read once
// (store.IndexedRoot) by one worker goroutine, and put in the index and
// the catalog in that order, so a root is never indexed twice at once. A
// sweep of every root runs at start (it loads the catalog, puts every
// root in the index and drops what no root holds), after the feed was
// trimmed past it and after the field subscription was lost; the index
// is compacted after it. Every local root's key tokens (store.KeyTokens)
// go to keys as it indexes them, root by root, and as one whole set after
// a sweep.
type Indexer struct {
	st   *store.Store
	text *TextIndex
	cat  *Catalog // nil: no catalog (a Household serves no API)
	keys TokenKeys
	log  *slog.Logger

	mu      sync.Mutex
	pending map[store.RootID]bool
	sweep   bool
	wake    chan struct{}
}

// TokenKeys takes the key tokens of local roots (the announcer).
type TokenKeys interface {
	// SetTokens: root's key tokens are now toks.
	SetTokens(root store.RootID, toks []string)
	// SweptTokens: every root's, after a whole sweep.
	SweptTokens(ctx context.Context, all map[store.RootID][]string) error
}

func NewIndexer(st *store.Store, text *TextIndex, cat *Catalog, keys TokenKeys, log *slog.Logger) *Indexer {
	return &Indexer{st: st, text: text, cat: cat, keys: keys, log: log.With("component", "search"), pending: map[store.RootID]bool{}, wake: make(chan struct{}, 1)}
}

// Run indexes until ctx ends. It logs what the search index found
// damaged when it opened, and sweeps into an index made anew because it
// was found damaged while the node ran.
func (x *Indexer) Run(ctx context.Context) {
	x.text.setIndexer(x.log, x.requestSweep)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); x.follow(ctx) }()
	go func() { defer wg.Done(); x.watch(ctx) }()
	x.work(ctx)
	wg.Wait()
}

func (x *Indexer) add(roots ...store.RootID) {
	x.mu.Lock()
	for _, r := range roots {
		if r != "" {
			x.pending[r] = true
		}
	}
	x.mu.Unlock()
	x.poke()
}

func (x *Indexer) requestSweep() {
	x.mu.Lock()
	x.sweep = true
	x.mu.Unlock()
	x.poke()
}

func (x *Indexer) poke() {
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// follow reads the change feed from its head (a sweep, asked for once
// the head is read, covers what came before, and what a trim lost) and
// queues every root an entry names.
func (x *Indexer) follow(ctx context.Context) {
	(&announce.FeedFollower{
		Store: x.st, Log: x.log, Name: "the search indexer",
		Resync:     func(context.Context) error { x.requestSweep(); return nil },
		ResyncWhat: "read the change feed's head",
		Entries: func(_ context.Context, evs []store.Event) {
			for _, e := range evs {
				x.add(e.Root, e.Into)
			}
		},
	}).Run(ctx)
}

// watch queues roots whose searchable fields change; after the
// subscription is lost it subscribes again and sweeps.
func (x *Indexer) watch(ctx context.Context) {
	first := true
	for ctx.Err() == nil {
		ready := make(chan struct{})
		lost := first
		first = false
		go func() {
			select {
			case <-ready:
				if !lost {
					x.requestSweep()
				}
			case <-ctx.Done():
			}
		}()
		err := x.st.WatchSearchFields(ctx, ready, func(roots []store.RootID) { x.add(roots...) })
		if ctx.Err() != nil {
			return
		}
		announce.Pause(ctx, x.log, "follow field writes", err)
	}
}

// work indexes the queued roots and reads them into the catalog, and
// sweeps when asked.
func (x *Indexer) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-x.wake:
		}
		x.mu.Lock()
		sweep := x.sweep
		x.sweep = false
		roots := make([]store.RootID, 0, len(x.pending))
		for r := range x.pending {
			roots = append(roots, r)
		}
		clear(x.pending)
		x.mu.Unlock()
		if sweep {
			all, err := x.st.RootIDs(ctx)
			if err != nil {
				x.requestSweep()
				announce.Pause(ctx, x.log, "sweep the search index", err)
				continue
			}
			roots = append(roots, all...)
			// The catalog first, many roots per round trip, so the lists
			// are whole soon after a start; a changed root's entry comes
			// from the document IndexedRoot reads anyway (index).
			if x.cat != nil {
				if err := x.cat.update(ctx, x.st, roots, true); err != nil {
					if ctx.Err() != nil {
						return
					}
					x.add(roots...)
					x.requestSweep()
					announce.Pause(ctx, x.log, "read roots into the catalog", err)
					continue
				}
			}
			// What the index holds of roots gone while no indexer ran
			// (an outside writer's delete, a store swapped) leaves it.
			keep := make(map[store.RootID]bool, len(all))
			for _, r := range all {
				keep[r] = true
			}
			if err := x.text.Keep(keep); err != nil {
				x.add(roots...)
				x.requestSweep()
				announce.Pause(ctx, x.log, "sweep the search index", err)
				continue
			}
		}
		x.index(ctx, roots, sweep)
		if sweep {
			x.compact(ctx)
		}
	}
}

// compact merges the search index's segments after a sweep, which put
// every root in it again: a query's cost grows with the segments it
// reads (docs/figures.md).
func (x *Indexer) compact(ctx context.Context) {
	before := x.text.Segments()
	if before <= 1 {
		return
	}
	start := time.Now()
	if err := x.text.Compact(ctx); err != nil {
		if ctx.Err() == nil {
			x.log.Warn("cannot compact the search index; searches read more of it", "err", err)
		}
		return
	}
	x.log.Info("search index compacted", "segments", before, "now", x.text.Segments(), "took", time.Since(start).Round(time.Millisecond))
}

// index indexes roots and hands their key tokens on: one by one, or, for
// a sweep that indexed every root, as one set. A root that fails is queued
// again with those after it (a failed sweep asks for another).
func (x *Indexer) index(ctx context.Context, roots []store.RootID, sweep bool) {
	// What was put is searchable once this pass ends, whichever way.
	defer func() {
		if err := x.text.Flush(); err != nil && ctx.Err() == nil {
			x.log.Warn("cannot write the search index", "err", err)
			x.requestSweep()
		}
	}()
	var all map[store.RootID][]string
	if sweep {
		all = make(map[store.RootID][]string, len(roots))
	}
	for i, r := range roots {
		in, err := x.st.IndexedRoot(ctx, r)
		if err == nil {
			err = x.text.Put(r, in)
		}
		toks := in.KeyTokens
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			x.add(roots[i:]...)
			if sweep {
				for r, toks := range all {
					x.keys.SetTokens(r, toks)
				}
				x.requestSweep()
			}
			announce.Pause(ctx, x.log, "index a root for search", err)
			return
		}
		if sweep {
			if len(toks) > 0 {
				all[r] = toks
			}
			continue
		}
		if x.cat != nil {
			x.cat.indexed(r, in)
		}
		x.keys.SetTokens(r, toks)
	}
	if sweep {
		if err := x.keys.SweptTokens(ctx, all); err != nil && ctx.Err() == nil {
			x.requestSweep()
			announce.Pause(ctx, x.log, "provide the search token keys", err)
		}
	}
}
