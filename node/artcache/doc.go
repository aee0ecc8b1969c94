// Package artcache keeps the artwork fetched from other households
// (posters, fan art, still frames: small images) under the data
// directory, DATA/art/<cid>, one file per image named by the CID it was
// asked by, within a size cap: the least recently used go first. It
// knows nothing of libp2p or the store: the node fetches and verifies
// the bytes, the cache keeps them.
//
// The cache is found again at start by scanning its directory (a file's
// modification time orders it; a Get touches it), so a restart keeps
// what was fetched. Files are written through a temporary file and
// renamed, so a reader never sees half of one; a leftover temporary
// file is removed by the scan.
//
// # Files
//
//   - cache.go: Cache (Open, Path, Put, Stats), the LRU by bytes.
//   - cache_test.go: a put found again after a restart, the cap
//     evicting the least recently used, an oversized image refused, and
//     FuzzPut (a name and bytes from a peer kept only under a CID, in
//     the directory), BenchmarkCache_HitRate (hits/requests of a grid asked twice, a
//     scan past the cap, a skewed browse; each against no cap).
//
// # Concurrency
//
// A Cache is safe for concurrent use: one mutex guards the index and
// the byte count; the bytes of a Put are written outside it.
package artcache
