package catalog

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/metamesh/node/store"
)

// Indexer keeps the search index (textindex.go) and the node's catalog
// (catalog.go) in step with the store: it takes the batches of changed
// roots store.Changes hands it (Take), each root read once for every
// consumer, and puts each root in the catalog, then in the index. A
// sweep's batches fill the catalog as they come; its last one drops what
// no root of the sweep holds, from the catalog and the index, and the
// index is compacted after it. An index made anew while the node runs
// (found damaged) asks for a sweep (Changes.Sweep).
type Indexer struct {
	text *TextIndex
	cat  *Catalog // nil: no catalog (a Household serves no API)
	log  *slog.Logger

	// swept are the roots of the sweep in progress, nil between sweeps.
	swept map[store.RootID]bool
}

// NewIndexer indexes into text and cat; sweep is how it asks for a sweep
// (Changes.Sweep).
func NewIndexer(text *TextIndex, cat *Catalog, sweep func(), log *slog.Logger) *Indexer {
	x := &Indexer{text: text, cat: cat, log: log.With("component", "search")}
	text.setIndexer(x.log, sweep)
	return x
}

// Take puts one batch in the catalog and the index (store.Consumer). The
// index's puts are searchable once it returns.
func (x *Indexer) Take(ctx context.Context, b store.ChangeBatch) (err error) {
	if b.First {
		x.swept = make(map[store.RootID]bool)
	}
	if x.cat != nil {
		x.cat.take(b.Roots)
	}
	defer func() {
		if ferr := x.text.Flush(); ferr != nil && err == nil {
			err = fmt.Errorf("write the search index: %w", ferr)
		}
	}()
	for _, c := range b.Roots {
		if err := x.text.Put(c.Root, c.Indexed); err != nil {
			return fmt.Errorf("index a root for search: %w", err)
		}
		if b.Sweep && c.Exists {
			x.swept[c.Root] = true
		}
	}
	if !b.Last {
		return nil
	}
	keep := x.swept
	x.swept = nil
	if x.cat != nil {
		x.cat.swept(keep)
	}
	// What the index holds of roots gone while no indexer ran (an outside
	// writer's delete, a store swapped) leaves it.
	if err := x.text.Keep(keep); err != nil {
		return fmt.Errorf("sweep the search index: %w", err)
	}
	x.compact(ctx)
	return nil
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
