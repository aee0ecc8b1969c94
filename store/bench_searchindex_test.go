package store_test

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/metamesh/node/node/search"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// BenchmarkSearchIndex weighs the search index (make bench, one run): at
// 1,000 and 100,000 roots (storetest.CorpusTitle), the time to index
// them (read from the store, put in node/search's TextIndex on disk)
// and to compact the index as the indexer does after a sweep, its bytes
// on disk per root, and, after 200 queries of each kind to warm the page
// cache, p50 and p99 of a search (the index, then the page's hits from
// Redis) for 2,000 queries of each kind (storetest.CorpusQuery: a whole
// word, a prefix, a typo, three words), the two libraries' queries
// interleaved, with the 100k / 1k ratio.
func BenchmarkSearchIndex(b *testing.B) {
	type result struct {
		n        int
		index    time.Duration
		disk     float64 // the index's, per root
		p50, p99 map[string]time.Duration
		compact  time.Duration // Compact after the fill
		segments [2]int        // before and after it
		s        *store.Store
		text     *search.TextIndex
	}
	var res []result
	for _, n := range []int{1_000, 100_000} {
		s := storetest.New(b)
		roots := ingestCorpus(b, s, n)
		dir := filepath.Join(b.TempDir(), "search")
		text := must[*search.TextIndex](b)(search.OpenTextIndex(dir))
		texts.Store(s, text)
		t0 := time.Now()
		var wg sync.WaitGroup
		ch := make(chan store.RootID)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range ch {
					d, err := s.Document(ctx, r)
					if err == nil {
						err = text.Put(r, search.EntryOf(d))
					}
					if err != nil {
						b.Error(err)
					}
				}
			}()
		}
		for _, r := range roots {
			ch <- r
		}
		close(ch)
		wg.Wait()
		if err := text.Flush(); err != nil {
			b.Fatal(err)
		}
		r := result{n: n, index: time.Since(t0), p50: map[string]time.Duration{}, p99: map[string]time.Duration{}}
		r.disk = float64(dirSize(b, dir)) / float64(n)
		// As the indexer does after a sweep.
		r.segments[0] = text.Segments()
		t0 = time.Now()
		if err := text.Compact(ctx); err != nil {
			b.Fatal(err)
		}
		r.compact, r.segments[1] = time.Since(t0), text.Segments()
		r.s, r.text = s, text
		res = append(res, r)
	}
	// Both libraries are searched in turn, a query in one then one in the
	// other, so both see the same noise of a shared machine. Warm up
	// first: the first queries after an index is written read its files
	// into the page cache, where a household's node has them.
	for _, kind := range storetest.CorpusQueryKinds {
		for i := range 200 {
			for _, r := range res {
				must[searchPage](b)(searchAt(b, r.s, storetest.CorpusQuery(kind, r.n, i*53%r.n), 20, ""))
			}
		}
	}
	for _, kind := range storetest.CorpusQueryKinds {
		ds := make([][]time.Duration, len(res))
		for i := range 2000 {
			for k, r := range res {
				q := storetest.CorpusQuery(kind, r.n, i*37%r.n)
				t := time.Now()
				p, err := searchAt(b, r.s, q, 20, "")
				ds[k] = append(ds[k], time.Since(t))
				if err != nil || len(p.Hits) == 0 {
					b.Fatalf("Search(%q): %d hits, %v", q, len(p.Hits), err)
				}
				title := storetest.CorpusTitle(r.n, i*37%r.n)
				if want := strings.Join(title[:], " "); !slices.ContainsFunc(p.Hits, func(h store.SearchHit) bool { return h.Title == want }) {
					b.Fatalf("Search(%q) did not find %q", q, want)
				}
			}
		}
		for k := range res {
			slices.Sort(ds[k])
			res[k].p50[kind], res[k].p99[kind] = ds[k][len(ds[k])/2], ds[k][len(ds[k])*99/100]
		}
	}
	for _, r := range res {
		texts.Delete(r.s)
		r.text.Close()
	}
	fmt.Printf("\nthe search index (node/search's TextIndex on disk, hits read from Redis; one client):\n")
	for _, r := range res {
		fmt.Printf("  %7d roots: indexed in %v (%.0f roots/s), %.0f on disk a root; %d segments compacted to %d in %v\n", r.n, r.index.Round(time.Millisecond), float64(r.n)/r.index.Seconds(),
			r.disk, r.segments[0], r.segments[1], r.compact.Round(time.Millisecond))
	}
	fmt.Printf("  %-8s %-10s %-10s %-10s %-10s %-8s %-8s\n", "query", "p50 1k", "p99 1k", "p50 100k", "p99 100k", "p50 ×", "p99 ×")
	for _, kind := range storetest.CorpusQueryKinds {
		a, z := res[0], res[1]
		r50, r99 := float64(z.p50[kind])/float64(a.p50[kind]), float64(z.p99[kind])/float64(a.p99[kind])
		fmt.Printf("  %-8s %-10v %-10v %-10v %-10v %-8.2f %-8.2f\n", kind, a.p50[kind].Round(time.Microsecond), a.p99[kind].Round(time.Microsecond),
			z.p50[kind].Round(time.Microsecond), z.p99[kind].Round(time.Microsecond), r50, r99)
		b.ReportMetric(float64(z.p50[kind].Microseconds()), kind+"-p50-100k-µs")
	}
	fmt.Println()
}

// dirSize is the bytes of the files under dir.
func dirSize(tb testing.TB, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}
