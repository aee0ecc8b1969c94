// Package catalog keeps what a household knows of its roots in step with
// the store: the store's search index, the catalog (the library's lists in
// memory, what GET /api/library pages through) and, through TokenKeys, the
// announcer's search token keys.
//
// # Files
//
//   - indexer.go: the Indexer. Every root the change feed names (key-set
//     changes, mints, merges, deletes) and every root whose searchable
//     fields were written (store.WatchSearchFields) is read into the
//     catalog, re-indexed (store.IndexRoot) and its key tokens handed to
//     TokenKeys; a sweep of every root runs at start, after the feed was
//     trimmed past it and after the field subscription was lost.
//   - catalog.go: the Catalog: entries by root, and the sorted views built
//     from them on the first request after a change (recent, movies,
//     shows → seasons → episodes), paged by Page; Counts are its local and
//     peers' files.
//   - bench_catalog_test.go: BenchmarkCatalog (make bench): heap per
//     entry, a rebuild, one page.
//
// # Goroutines and concurrency
//
// Indexer.Run runs a feed follower, a field-write subscriber and one
// worker, until its context ends; only the worker calls IndexRoot and
// writes the catalog, so IndexRoot never runs twice at once for a root.
// The Catalog's lock guards its entries and views: API handlers read
// (Page, Counts) while the worker writes.
package catalog
