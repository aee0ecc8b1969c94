// Package search is the household's search in one place: which fields of
// a root are searchable and how its document becomes search tokens (the
// word rules), the search index fed from the store's changes, how a
// query's words match and rank, and the merge of a federated search's
// local page with peers' answers. It reads the store's documents and
// summaries (package store) and answers with package model's types; it
// knows nothing of the catalog, the announcer, libp2p or HTTP. The wire
// formats and the one normalization of words (protocol.Tokens,
// protocol.Keyed, protocol.SearchTokenKey) stay in package protocol.
//
// # Files
//
//   - text.go: the word rules: Field (the fields a write to which has
//     the indexer read the root again), KeyField, TextOf (a document's
//     title tokens apart from its others, maxRootTokens at most), Entry
//     and EntryOf (what the index keeps of a root: its text and the
//     summary its sort key is made of), and KeyTokens (the words a local
//     file provides DHT keys for: of its titles, IDs and genres).
//   - indexer.go: the Indexer, a store.Consumer of its own (Consumer:
//     Fields is Field): every root of a batch (read once by
//     store.Changes for every consumer) is put in the search index; a
//     sweep's last batch drops what no root holds, and the index is
//     compacted after it.
//   - textindex.go: the TextIndex: every root's search text in bleve,
//     kept on disk (built anew when missing or of another version; moved
//     aside to DATA/search.corrupt-<time> and built anew when damaged:
//     it does not open, a segment fails its CRC-32, bleve panics opening
//     it or while it runs) or in memory; Search ranks what bleve finds by
//     the rules of match.go; Compact merges its segments into one (a
//     query's cost grows with them).
//   - match.go: how a query's words match (exact, prefix, one edit away,
//     NxMM, leading articles), the sort key that orders equal hits, and
//     the search cursor.
//   - merge.go: Merge, a pure function: a search's page, the local hits
//     then peers' new hits in turns (each peer's first, then each one's
//     second, …, at most the page's limit), a hit shown already naming
//     each further peer that sent it (never a local file's); and Hit,
//     the one place a search hit is built, from the local index's or
//     from a peer's answer.
//   - text_test.go: the word rules, and that the consumers' Fields cover
//     what the node keeps of a root. merge_test.go: Merge's table.
//   - textindex_test.go: the index on disk and in memory, its puts,
//     sweeps and searches. damage_test.go: damaged indexes on disk, at
//     open and while open. indexer_test.go: the start-up sweep through
//     store.Changes on a real redis-server.
//
// # Goroutines and concurrency
//
// Indexer.Take runs on store.Changes' one delivering goroutine: only it
// writes the index, so a root is never indexed twice at once. The
// TextIndex is safe for concurrent use: searches run on API handlers' and
// peers' goroutines while the indexer writes. Every bleve call holds the
// TextIndex's ixMu to read and runs with its panics recovered; a rebuild
// (on the goroutine whose call found the damage) holds it to write. The
// word rules and Merge are pure.
package search
