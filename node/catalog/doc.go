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
//     change by change (recent, movies, shows → seasons → episodes, home
//     videos newest recorded first),
//     paged by Page; Entry, one root's entry; NextEpisode, the
//     episode after another (the next of its season, else the first
//     of the next season); Counts are its local and peers' files. Take (its
//     Consumer: Fields is store.CatalogField) puts a batch's entries; a
//     sweep's last batch drops what no batch of the sweep named.
//   - catalog_test.go: the lists kept change by change against those a
//     sweep builds; Take's changes and sweeps; the Home videos' order.
//   - shared.go: Shared, a page of the library protocol
//     (/metamesh/library/1.0.0) a friend's household asks for: the local
//     films, shows, seasons and episodes a filter keeps, with words.
//   - works.go: the household's films and shows as wholes, for a media
//     centre (node/stremio): Films and Shows paged by offset, a Show with
//     its episodes, films by CID or IMDb ID, a show by IMDb ID, and
//     Plays (a film's or an episode's CID).
//   - works_test.go: the films and shows as wholes, paged, by ID.
//   - duplicates.go: the copies of the local videos, and of other local
//     files held under several paths (path, size,
//     resolution, codecs, runtime, other paths, the work each is) kept
//     beside their entries, and Duplicates (GET /api/duplicates): the
//     files under several paths, and the works held as several files
//     (same IMDb ID, folded title and year, show, season and episode),
//     grouped once per change of the catalog.
//   - duplicates_test.go: the groups of a library, both ways, paged and
//     after changes.
//   - bench_catalog_test.go: BenchmarkCatalog (make bench): heap per
//     entry, a sweep's build of the lists, one change, one page.
//
// # Goroutines and concurrency
//
// Take runs on store.Changes' one delivering goroutine: only it writes
// the catalog. The Catalog's lock guards its entries and lists: API
// handlers read (Page, Counts, Shared, Duplicates) while Take writes; Duplicates
// takes the write lock to keep the groups it made until the next change.
package catalog
