// Package catalog keeps the library's lists in step with the store: the
// catalog (in memory, what GET /api/library pages through), a
// store.Consumer of its own fed by the batches of changed roots
// store.Changes hands it. It knows nothing of the search index or the
// announcer (node/search, node/announce).
//
// # Files
//
//   - catalog.go: the Catalog: entries by root (store.CatalogEntryOf of
//     each changed root's document), and the sorted lists kept sorted
//     change by change (recent, movies, shows → seasons → episodes),
//     paged by Page; Counts are its local and peers' files. Take (its
//     Consumer: Fields is store.CatalogField) puts a batch's entries; a
//     sweep's last batch drops what no batch of the sweep named.
//   - catalog_test.go: the lists kept change by change against those a
//     sweep builds; Take's changes and sweeps.
//   - bench_catalog_test.go: BenchmarkCatalog (make bench): heap per
//     entry, a sweep's build of the lists, one change, one page.
//
// # Goroutines and concurrency
//
// Take runs on store.Changes' one delivering goroutine: only it writes
// the catalog. The Catalog's lock guards its entries and lists: API
// handlers read (Page, Counts) while Take writes.
package catalog
