package search

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/metamesh/node/store"
)

// Indexer keeps the search index (textindex.go) in step with the store:
// it takes the batches of changed roots store.Changes hands it (Take),
// each root read once for every consumer, and puts each root's Entry
// (its text and sort key, from its document) in the index. A sweep's
// last batch drops what no root of the sweep holds, and the index is
// compacted after it. An index made anew while the node runs (found
// damaged) asks for a sweep (Changes.Sweep).
type Indexer struct {
	text *TextIndex
	log  *slog.Logger

	// swept are the roots of the sweep in progress, nil between sweeps.
	swept map[store.RootID]bool
}

// NewIndexer indexes into text; sweep is how it asks for a sweep
// (Changes.Sweep).
func NewIndexer(text *TextIndex, sweep func(), log *slog.Logger) *Indexer {
	x := &Indexer{text: text, log: log.With("component", "search")}
	text.setIndexer(x.log, sweep)
	return x
}

// Consumer is the indexer as store.Changes takes it: a write to a field
// Field reports has the root read again.
func (x *Indexer) Consumer() store.Consumer {
	return store.Consumer{Name: "the search index", Fields: Field, Take: x.Take}
}

// Take puts one batch in the index (store.Consumer). Its puts are
// searchable once it returns.
func (x *Indexer) Take(ctx context.Context, b store.ChangeBatch) (err error) {
	if b.First {
		x.swept = make(map[store.RootID]bool)
	}
	defer func() {
		if ferr := x.text.Flush(); ferr != nil && err == nil {
			err = fmt.Errorf("write the search index: %w", ferr)
		}
	}()
	for _, c := range b.Roots {
		var e Entry // a root gone leaves the index
		if c.Exists {
			e = EntryOf(c.Document)
		}
		if err := x.text.Put(c.Root, e); err != nil {
			return fmt.Errorf("index a root for search: %w", err)
		}
		if b.Sweep && c.Exists && x.swept != nil {
			x.swept[c.Root] = true
		}
	}
	if !b.Last || x.swept == nil {
		return nil
	}
	keep := x.swept
	x.swept = nil
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
