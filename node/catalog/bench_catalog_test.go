package catalog

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/store"
)

// BenchmarkCatalog prints what the library's lists cost a node of 100,000
// files: the heap its catalog holds per entry, the time to rebuild the
// sorted lists after a change (once per change, on the next request), and
// one page of a list once built, the cost of every other request.
func BenchmarkCatalog(b *testing.B) {
	const files = 100_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c := New()
	// Seasons and episodes point at shared numbers, as the store's
	// summaries do.
	var nums [100]int
	for i := range nums {
		nums[i] = i
	}
	for i := range files {
		e := store.Summary{Root: store.NewRootID(), CID: fmt.Sprintf("bafkrei%052d", i), Size: int64(i) << 20,
			FileType: "video", Source: "local"}
		if i%10 < 7 { // 70% episodes of 500 shows
			e.Title, e.Season, e.Episode, e.EpisodeTitle = fmt.Sprintf("Show Number %d", i%500), &nums[i/500%10], &nums[i/5000], fmt.Sprintf("Episode Title %d", i)
		} else {
			e.Title, e.Year = fmt.Sprintf("A Film Called %d", i), 1950+i%75
		}
		c.entries[e.Root] = e
	}
	c.local, c.loaded = files, true
	runtime.GC()
	runtime.ReadMemStats(&after)
	perEntry := float64(after.HeapAlloc-before.HeapAlloc) / files

	b.Run("rebuild", func(b *testing.B) {
		for b.Loop() {
			c.views = nil
			c.viewsOf()
		}
		b.ReportMetric(perEntry, "heapB/entry")
	})
	b.Run("page", func(b *testing.B) {
		c.viewsOf()
		for b.Loop() {
			if _, err := c.Page(api.LibraryQuery{View: api.ViewMovies, Season: -1, Page: 300, Limit: 50}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
