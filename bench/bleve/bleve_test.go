package bleve

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// BenchmarkBleve times bleve on storetest's search library at 1,000 and
// 100,000 titles (one run): the time to index them in batches, the index's
// bytes on disk and the Go heap it holds per title, and p50 and p99 of
// 2,000 queries of each kind (a whole word: a match query; a prefix: a
// prefix query; a typo: a fuzzy query of one edit; three words: a match
// query of any of them, ranked), 20 hits each, with the page's
// summaries read from Redis (what a search needs of its hits, one round
// trip), as store.Search reads them.
func BenchmarkBleve(b *testing.B) {
	type result struct {
		n          int
		index      time.Duration
		disk, heap float64
		p50, p99   map[string]time.Duration
	}
	var res []result
	for _, n := range []int{1_000, 100_000} {
		// The same library in a store: a search with the index in bleve
		// reads its page's summaries from Redis, one round trip.
		st := storetest.New(b)
		var roots []store.RootID
		for start := 0; start < n; start += 500 {
			var items []store.IngestItem
			for i := start; i < min(start+500, n); i++ {
				t := storetest.CorpusTitle(n, i)
				sum := sha256.Sum256([]byte(fmt.Sprint("bleve", i)))
				c, err := protocol.SHA256CID(sum[:])
				if err != nil {
					b.Fatal(err)
				}
				items = append(items, store.IngestItem{
					File:   store.FileStat{Path: fmt.Sprintf("/lib/%07d.mkv", i), Size: int64(1000 + i), MtimeNs: 1},
					Hashes: store.Hashes{Midhash: midhash(b, i), SHA256: c.String(), IPFS: c.String()},
					Meta:   store.Meta{Version: 1, Fields: map[string]string{"titles/eng": strings.Join(t[:], " "), "movieYear": "2001"}},
				})
			}
			res, err := st.IngestBatch(context.Background(), items)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range res {
				roots = append(roots, r.Root)
			}
		}
		dir := filepath.Join(b.TempDir(), "index")
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		t0 := time.Now()
		idx, err := bleve.New(dir, bleve.NewIndexMapping())
		if err != nil {
			b.Fatal(err)
		}
		batch := idx.NewBatch()
		for i := range n {
			t := storetest.CorpusTitle(n, i)
			if err := batch.Index(string(roots[i]), map[string]any{"title": strings.Join(t[:], " ")}); err != nil {
				b.Fatal(err)
			}
			if batch.Size() == 1000 || i == n-1 {
				if err := idx.Batch(batch); err != nil {
					b.Fatal(err)
				}
				batch.Reset()
			}
		}
		r := result{n: n, index: time.Since(t0), p50: map[string]time.Duration{}, p99: map[string]time.Duration{}}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		r.heap = float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / float64(n)
		var disk int64
		filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, err := d.Info(); err == nil {
					disk += fi.Size()
				}
			}
			return nil
		})
		r.disk = float64(disk) / float64(n)
		for _, kind := range storetest.CorpusQueryKinds {
			var ds []time.Duration
			for i := range 2000 {
				target := storetest.CorpusTitle(n, i*37%n)
				text := storetest.CorpusQuery(kind, n, i*37%n)
				var q query.Query
				switch kind {
				case "prefix":
					pq := bleve.NewPrefixQuery(text)
					pq.SetField("title")
					q = pq
				case "typo":
					fq := bleve.NewFuzzyQuery(text)
					fq.SetFuzziness(1)
					fq.SetField("title")
					q = fq
				default:
					mq := bleve.NewMatchQuery(text)
					mq.SetField("title")
					q = mq
				}
				req := bleve.NewSearchRequestOptions(q, 20, 0, false)
				t := time.Now()
				sr, err := idx.Search(req)
				if err != nil {
					b.Fatal(err)
				}
				page := make([]store.RootID, len(sr.Hits))
				for k, h := range sr.Hits {
					page[k] = store.RootID(h.ID)
				}
				sums, err := st.CatalogEntries(context.Background(), page)
				ds = append(ds, time.Since(t))
				if err != nil {
					b.Fatal(err)
				}
				want := strings.Join(target[:], " ")
				if !slices.ContainsFunc(sums, func(s store.Summary) bool { return s.Title == want }) {
					b.Fatalf("%s %q did not find %q", kind, text, want)
				}
			}
			slices.Sort(ds)
			r.p50[kind], r.p99[kind] = ds[len(ds)/2], ds[len(ds)*99/100]
		}
		if err := idx.Close(); err != nil {
			b.Fatal(err)
		}
		res = append(res, r)
	}
	fmt.Printf("\nsearch index in bleve v2.6.3 (scorch on disk, in-process):\n")
	for _, r := range res {
		fmt.Printf("  %7d titles: indexed in %v (%.0f titles/s), %.0f bytes per title on disk, %.0f bytes of heap per title\n",
			r.n, r.index.Round(time.Millisecond), float64(r.n)/r.index.Seconds(), r.disk, r.heap)
	}
	fmt.Printf("  %-8s %-10s %-10s %-10s %-10s %-8s %-8s\n", "query", "p50 1k", "p99 1k", "p50 100k", "p99 100k", "p50 ×", "p99 ×")
	for _, kind := range storetest.CorpusQueryKinds {
		a, z := res[0], res[1]
		fmt.Printf("  %-8s %-10v %-10v %-10v %-10v %-8.2f %-8.2f\n", kind, a.p50[kind].Round(time.Microsecond), a.p99[kind].Round(time.Microsecond),
			z.p50[kind].Round(time.Microsecond), z.p99[kind].Round(time.Microsecond),
			float64(z.p50[kind])/float64(a.p50[kind]), float64(z.p99[kind])/float64(a.p99[kind]))
		b.ReportMetric(float64(z.p50[kind].Microseconds()), kind+"-p50-100k-µs")
	}
	fmt.Println()
}

// midhash is a made-up midhash256 CID of the i-th file.
func midhash(b *testing.B, i int) string {
	sum := sha256.Sum256([]byte(fmt.Sprint("mid", i)))
	c, err := protocol.MidhashCID(sum[:])
	if err != nil {
		b.Fatal(err)
	}
	return c.String()
}
