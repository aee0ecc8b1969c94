// Package share moves files' bytes between households over bitswap
// (boxo's server and client on the node's libp2p host): a household that
// shares (--share-files) answers wants for the blocks of its local
// files' DAGs, produced from the library files in place; any household
// fetches a peer's file by its IPFS CID, streamed and verified block by
// block, never written to disk.
//
// The blocks are those of the DAG the file's IPFS CID names (package dag:
// Kubo's defaults). A leaf is a byte range of the library file, read and
// checked against its CID before it goes out: a file that changed behind
// the node's back is never served (Config.Changed has the node take it
// in again). The internal nodes and the leaves' ranges are kept in the
// block index, a go-datastore (pebble) under the data directory: filled
// by the node from the hasher's recording at ingest (Exchange.Add), or
// on a peer's first want of a file's root. It is a cache
// (derived.Pebble): damaged, it is moved aside and made anew, empty, and
// files are indexed again on a peer's first want.
//
// # What is served, and when it stops
//
//   - A block several files hold (a partial copy of a file, a run of
//     zeros) names each of them in the index (up to 32): it is served
//     from any one still in the library, and a file leaving takes only
//     itself out of its blocks' holders. An index of version 1 named
//     such a block by the file indexed last; the start's sweep indexes
//     again, once, every file whose blocks are not all its own.
//   - A want that misses the index for a child of a node just served to
//     a peer indexes that node's file again (reading it once) instead of
//     answering DONT_HAVE for good.
//   - A file open to serve its blocks is checked before each block: its
//     path (Local.Path) must still name the same file (device and
//     inode), else it is closed and the file opened anew where the store
//     says it is, if anywhere. Gone(path) closes it as soon as the
//     library watcher applies a change at the path (the node's
//     ingest.Config.OnApplied); Reopen closes every open file (what the
//     household shares changed), each opened again, through
//     Config.Open, at its next want.
//   - A want refused for a block of a file the index knows is logged
//     (once a file every 30 s, with the count); a fetch that gets no
//     block for its stall time ends with ErrStalled saying what each
//     provider answered.
//   - Leaves gives the node the leaves' CIDs of a file, so GET /api/file
//     checks the bytes it streams as bitswap does.
//
// # Files
//
//   - share.go: Config, Start, the Exchange (bitswap wired to the
//     blockstore, its filter and tracer), Add, Forget, Leaves, Gone,
//     Reopen,
//     the start's sweep.
//   - serve.go: finding a block (indexing a file on demand or again),
//     producing it from the first of its holders that still has it,
//     dropping a changed file's index; the children of the nodes served
//     lately (links) and the log of refused wants (refusals).
//   - blockindex.go: the block index's keys, entries (every holder of a
//     block; version 1's entries read as one holder) and version.
//   - blockstore.go: the blockstore bitswap reads and writes: the index
//     for the server, the index and a bounded cache of received blocks
//     for the node's own fetches (told apart by the context).
//   - files.go: the library files held open between blocks, each checked
//     to still be the library's before a block is read from it.
//   - track.go: the tracer: each peer's fetch of a file in the log, and
//     what providers answered the node's fetches (the blocks they
//     refused); the provider finder.
//   - fetch.go: Fetch and Probe (a peer's file as an io.ReadSeekCloser,
//     with a stall timeout whose error says why), the providers' states,
//     UnavailableError.
//   - share_test.go: two loopback hosts: fetches whole and from the
//     middle, a changed file, the log and --share-rate, hostile wants.
//   - holders_test.go: a file whose copy left, an index of version 1, a
//     block the index lost, a stall's error on both sides.
//   - blockindex_test.go: FuzzDecodeEntry, entries of version 1, shared
//     blocks put and forgotten.
//   - export_test.go: writing an index as version 1 kept it, losing a
//     block, for the tests.
//
// # Goroutines and concurrency
//
// bitswap runs its own goroutines and calls the blockstore, the filter
// and the tracer from them, concurrently: the tracker, the open files,
// the links and the refusals are guarded by their own locks, misses by
// missMu, the index's writes (which read the entries they change) by
// its own mutex, and one file at a time is indexed on demand (building).
// Start runs the tracker's, the open files' and the links' janitors and
// the index sweep; Close stops them and bitswap, then closes the
// datastore. Add and Gone may race Close (ingest still running):
// closeMu orders them.
package share
