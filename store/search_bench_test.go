package store_test

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// BenchmarkSearch times Search (what GET /api/search costs the store) at
// 1k and 100k roots, one run each (-benchtime 1x). Every title holds three
// words and each word is in 10 roots whatever the library's size, so a
// query matches as many roots at 1k as at 100k: the figures show the cost
// of the matches, not of the library. Reports p50 and p99 of 2,000
// one-word and 2,000 three-word queries.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("roots=%d", n), func(b *testing.B) {
			s := storetest.New(b)
			v := n / 10
			words := func(i int) (string, string, string) {
				return fmt.Sprintf("alpha%d", i%v), fmt.Sprintf("beta%d", (i*7+1)%v), fmt.Sprintf("gamma%d", (i*13+2)%v)
			}
			var roots []store.RootID
			for start := 0; start < n; start += 500 {
				var items []store.IngestItem
				for i := start; i < min(start+500, n); i++ {
					a, bb, c := words(i)
					items = append(items, store.IngestItem{
						File:   stat(fmt.Sprintf("/lib/%07d.mkv", i), int64(1000+i)),
						Hashes: content{1_000_000 + i, 1_000_000 + i}.hashes(),
						Meta:   store.Meta{Version: 1, Fields: map[string]string{"titles/eng": a + " " + bb + " " + c, "movieYear": "2001"}},
					})
				}
				res, err := s.IngestBatch(ctx, items)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range res {
					roots = append(roots, r.Root)
				}
			}
			var wg sync.WaitGroup
			ch := make(chan store.RootID)
			for range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := range ch {
						if _, err := s.IndexRoot(ctx, r); err != nil {
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
			b.ResetTimer()
			for _, k := range []struct {
				name string
				q    func(i int) string
			}{
				{"1word", func(i int) string { a, _, _ := words(i); return a }},
				{"3words", func(i int) string { a, bb, c := words(i); return a + " " + bb + " " + c }},
			} {
				var ds []time.Duration
				for i := range 2000 {
					t0 := time.Now()
					p, err := s.Search(ctx, k.q(i*37%n), 20, "")
					ds = append(ds, time.Since(t0))
					if err != nil || len(p.Hits) == 0 {
						b.Fatalf("Search: %d hits, %v", len(p.Hits), err)
					}
				}
				sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
				b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), k.name+"-p50-µs")
				b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), k.name+"-p99-µs")
			}
		})
	}
}
