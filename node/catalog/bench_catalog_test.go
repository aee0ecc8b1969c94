package catalog

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/store"
)

// BenchmarkCatalog prints what the library's lists cost a node of 100,000
// files: the heap its catalog holds per entry (the sorted lists
// included), the time to build the lists at once (a sweep), one change
// (a file's entry read again: out of its lists and into them, here an
// episode that moves to another show and back), and one page of a list.
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
	var all []store.Summary
	for i := range files {
		e := store.Summary{Root: store.NewRootID(), CID: fmt.Sprintf("bafkrei%052d", i), Size: int64(i) << 20,
			FileType: "video", Source: "local"}
		if i%10 < 7 { // 70% episodes of 500 shows
			e.Title, e.Season, e.Episode, e.EpisodeTitle = fmt.Sprintf("Show Number %d", i%500), &nums[i/500%10], &nums[i/5000], fmt.Sprintf("Episode Title %d", i)
		} else {
			e.Title, e.Year = fmt.Sprintf("A Film Called %d", i), 1950+i%75
		}
		all = append(all, e)
	}
	c.apply(nil, all, true)
	runtime.GC()
	runtime.ReadMemStats(&after)
	perEntry := float64(after.HeapAlloc-before.HeapAlloc) / files

	b.Run("sweep", func(b *testing.B) {
		for b.Loop() {
			c.views = buildViews(c.entries)
		}
		b.ReportMetric(perEntry, "heapB/entry")
	})
	b.Run("change", func(b *testing.B) {
		e := all[files/2+1] // an episode
		moved := e
		moved.Title = "Another Show Entirely"
		i := 0
		for b.Loop() {
			if i++; i%2 == 0 {
				c.apply([]store.RootID{e.Root}, []store.Summary{e}, false)
			} else {
				c.apply([]store.RootID{e.Root}, []store.Summary{moved}, false)
			}
		}
	})
	b.Run("page", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Page(model.LibraryQuery{View: model.ViewMovies, Season: -1, Page: 300, Limit: 50}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
