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
// # Files
//
//   - share.go: Config, Start, the Exchange (bitswap wired to the
//     blockstore, its filter and tracer), indexing on demand, producing
//     a block, dropping a changed file's index, the start's sweep.
//   - index.go: the block index's keys and entries in the datastore.
//   - blockstore.go: the blockstore bitswap reads and writes: the index
//     for the server, the index and a bounded cache of received blocks
//     for the node's own fetches (told apart by the context).
//   - files.go: the library files held open between blocks.
//   - track.go: the tracer: each peer's fetch of a file in the log, and
//     what providers answered the node's fetches; the provider finder.
//   - fetch.go: Fetch and Probe (a peer's file as an io.ReadSeekCloser,
//     with a stall timeout), the providers' states, UnavailableError.
//   - share_test.go: two loopback hosts: fetches whole and from the
//     middle, a changed file, the log and --share-rate, hostile wants.
//   - index_test.go: FuzzDecodeEntry.
//
// # Goroutines and concurrency
//
// bitswap runs its own goroutines and calls the blockstore, the filter
// and the tracer from them, concurrently: the tracker and the open files
// are guarded by their own locks, misses by missMu, and one file at a
// time is indexed on demand (building). Start runs the tracker's and the
// open files' janitors and the index sweep; Close stops them and
// bitswap, then closes the datastore. Add may race Close (ingest still
// running): closeMu orders them.
package share
