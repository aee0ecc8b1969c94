// Package derived keeps the parts of the data directory that are caches
// of the store and the library (the search index DATA/search, the block
// index DATA/blocks, the provider's keystore DATA/provider) from ever
// stopping the node: a part that does not open, fails a checksum, or
// whose library panics is moved aside to DATA/<part>.corrupt-<time>
// (MoveAside; the time in UTC, as 20060102T150405Z), logged at WARN, and
// rebuilt by its owner.
//
// # Files
//
//   - aside.go: MoveAside and the name of a part moved aside; Recover,
//     which turns a library's panic into an error.
//   - pebble.go: OpenPebble, a pebble go-datastore that is opened again,
//     empty, when it does not open or when pebble reports on-disk
//     corruption while it runs; pebble's fatal paths panic (and are
//     recovered) instead of ending the process.
//   - derived_test.go: flipped and truncated tables, at open and at run
//     time.
//
// # Goroutines and concurrency
//
// A Pebble is safe for concurrent use: every call holds its read lock;
// a rebuild (on its own goroutine, started by pebble's corruption event
// or by a call that saw corruption) takes the write lock, so it waits for
// the calls under way and closes the old database's open queries.
package derived
