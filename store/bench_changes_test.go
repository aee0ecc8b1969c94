package store_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/metamesh/node/node/search"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// BenchmarkChangesSweep weighs the start-up sweep of store.Changes (make
// bench, one run) at METAMESH_SWEEP_ROOTS roots (default 100,000; titles
// of storetest.CorpusTitle): the time to read what the announcer, the
// search index and the catalog need of every root with ReadChanged (a
// thousand roots per round trip), against what the node read for them
// before in the same run (each root's Document, one round trip each,
// and AnnouncedMany), as a ratio. Both compute of each document what
// the consumers do (consume).
func BenchmarkChangesSweep(b *testing.B) {
	n := 100_000
	if v := os.Getenv("METAMESH_SWEEP_ROOTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatalf("METAMESH_SWEEP_ROOTS=%q: %v", v, err)
		}
	}
	s := storetest.New(b)
	roots := ingestCorpus(b, s, n)
	for b.Loop() {
		t0 := time.Now()
		for _, r := range roots {
			consume(must[store.Document](b)(s.Document(ctx, r)))
		}
		must[map[store.RootID]string](b)(s.AnnouncedMany(ctx, roots))
		before := time.Since(t0)
		t1 := time.Now()
		read := must[[]store.Changed](b)(s.ReadChanged(ctx, roots))
		for _, c := range read {
			consume(c.Document)
		}
		now := time.Since(t1)
		if len(read) != n {
			b.Fatalf("ReadChanged read %d roots, want %d", len(read), n)
		}
		fmt.Printf("changes sweep of %d roots: ReadChanged %s (%.1f µs a root), root by root %s (%.1f µs a root): %.2f× the time\n",
			n, now.Round(time.Millisecond), float64(now.Microseconds())/float64(n), before.Round(time.Millisecond),
			float64(before.Microseconds())/float64(n), now.Seconds()/before.Seconds())
		b.ReportMetric(now.Seconds()/before.Seconds(), "sweep/root-by-root")
	}
}

// consume computes of d what store.Changes' consumers do: the search
// index's entry, the announcer's key tokens, the catalog's entry.
func consume(d store.Document) {
	_ = search.EntryOf(d)
	_ = search.KeyTokens(d)
	_ = store.CatalogEntryOf(d)
}

// ingestCorpus ingests n files titled by storetest.CorpusTitle, 500 per
// batch, and returns their roots in order.
func ingestCorpus(tb testing.TB, s *store.Store, n int) []store.RootID {
	tb.Helper()
	var roots []store.RootID
	for start := 0; start < n; start += 500 {
		var items []store.IngestItem
		for i := start; i < min(start+500, n); i++ {
			t := storetest.CorpusTitle(n, i)
			items = append(items, store.IngestItem{
				File:   stat(fmt.Sprintf("/lib/%07d.mkv", i), int64(1000+i)),
				Hashes: content{1_000_000 + i, 1_000_000 + i}.hashes(),
				Meta:   store.Meta{Version: 1, Fields: map[string]string{"titles/eng": t[0] + " " + t[1] + " " + t[2], "movieYear": "2001"}},
			})
		}
		for _, r := range must[[]store.IngestResult](tb)(s.IngestBatch(ctx, items)) {
			roots = append(roots, r.Root)
		}
	}
	return roots
}
