// Package catalog keeps what a household knows of its roots in step with
// the store: the search index (a bleve index under the data directory),
// the catalog (the library's lists in memory, what GET /api/library pages
// through), from the batches of changed roots store.Changes hands it.
//
// # Files
//
//   - indexer.go: the Indexer, a store.Consumer: every root of a batch
//     (read once by store.Changes for every consumer) is put in the
//     catalog, then in the search index; a sweep's last batch drops what
//     no root holds, and the search index is compacted after it.
//   - textindex.go: the TextIndex: every root's search text in bleve, kept
//     on disk (built anew when missing or of another version; moved
//     aside to DATA/search.corrupt-<time> and built anew when damaged:
//     it does not open, a segment fails its CRC-32, bleve panics opening
//     it or while it runs) or in memory; Search ranks what bleve finds by
//     the rules of match.go; Compact merges its segments into one (a
//     query's cost grows with them).
//   - match.go: how a query's words match (exact, prefix, one edit away,
//     NxMM, leading articles), the sort key that orders equal hits, and
//     the search cursor.
//   - catalog.go: the Catalog: entries by root, and the sorted lists kept
//     sorted change by change (recent, movies, shows → seasons →
//     episodes), paged by Page; Counts are its local and peers' files.
//   - damage_test.go: damaged indexes on disk, at open and while open.
//   - bench_catalog_test.go: BenchmarkCatalog (make bench): heap per
//     entry, a sweep's build of the lists, one change, one page.
//
// # Goroutines and concurrency
//
// Indexer.Take runs on store.Changes' one delivering goroutine: only it
// writes the index and the catalog, so a root is never indexed twice at
// once. The TextIndex is safe for concurrent use: searches run
// on API handlers' and peers' goroutines while the worker writes. The
// Catalog's lock guards its entries and lists: API handlers read (Page,
// Counts) while Take writes. Every bleve call holds the
// TextIndex's ixMu to read and runs with its panics recovered; a rebuild
// (on the goroutine whose call found the damage) holds it to write.
package catalog
