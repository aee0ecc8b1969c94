// Package node wires a MetaMesh node together and runs it: configuration,
// the store (with its managed redis-server), the libp2p side (node/p2p),
// the household's federation side (node/federation, with node/announce,
// node/search and node/catalog), ingest of the libraries and the HTTP API's backend. It
// holds no business rules of its own: those live in protocol, store,
// ingest and the packages under node/.
//
// # Files
//
//   - config.go: Config (the host's and the DHT's part nested as P2P, a
//     p2p.Config), defaults, Validate.
//   - datadir.go: the data directory every command shares
//     (DefaultDataDir, CheckDataDir) and DATA/api.url, where a running
//     node tells the client commands its API; claimDataDir, which Start
//     calls before it opens a file there: a directory it cannot write
//     said as such, and what a failed first start made removed.
//   - node.go: New, Start, Close, Run: a Node is a Household plus
//     ingest plus the HTTP API. Start is a sequence of small steps (the
//     data directory claimed, the API's address bound, the store, the
//     host, the Household, sharing, ingest, the API served); once the
//     address is bound, Close undoes a step that fails.
//   - sdnotify.go: Run telling a service manager (systemd's Type=notify,
//     NOTIFY_SOCKET) READY=1 once the node serves and STOPPING=1.
//   - running.go: what Start says, before it binds anything, when a node
//     already runs on its data directory or its API address
//     (ErrAlreadyRunning), and how to reach that node.
//   - node/p2p (its own package): the identity, the libp2p host with its
//     DHT, reachability, relays, observed addresses and log routing.
//   - node/announce (its own package): the announcer (a consumer of the
//     store's changes, store.Changes) and the sweeping provider.
//   - node/federation (its own package): the Household (announcer,
//     record and search protocols, search indexer, catalog, resolver,
//     reprovide on a first peer, wired in one place: StartHousehold),
//     GET /api/meta's document, federated search and the keyword index's
//     lookups.
//   - node/search (its own package): the search index and its indexer,
//     the word rules (which fields are searchable, a document's text, its
//     DHT key tokens), the matching and ranking, and the merge of peers'
//     answers.
//   - node/dav (its own package): the read-only WebDAV share of the
//     library (/dav/), laid out from the metadata, a consumer of the
//     store's changes.
//   - dav.go: node/dav wired in: its library among the Household's
//     consumers, its files opened as GET /api/file opens them.
//   - dav_test.go: the share as rclone, cadaver and a plain PROPFIND
//     see it, a friend's film streamed through it, its access off
//     loopback (the token as the Basic password, --public-read).
//   - node/catalog (its own package): the catalog, the library's lists
//     in memory (GET /api/library), a consumer of the store's changes.
//   - node/thumbs (its own package): posters' thumbnails, made and kept
//     under the data directory (GET /api/thumb).
//   - node/artcache (its own package): peers' artwork kept under
//     DATA/art, an LRU under --art-cache.
//   - node/stills (its own package): videos' stills, frames ffmpeg
//     takes from the local videos without a poster, under DATA/stills.
//   - stills.go: node/stills wired in (Config.Stills, ffmpeg looked up
//     once), a consumer of the store's changes; its worker runs after
//     the first scan; GET /api/thumb of a still.
//   - node/transcode (its own package): streams a browser plays of
//     files it cannot, made by ffmpeg (remuxed, the audio or the video
//     transcoded), at most --transcodes at once, under DATA/transcode.
//   - transcode.go: node/transcode wired in (ffmpeg looked up once):
//     GET /api/stream of a local or a peer's file, and its status.
//   - node/share (its own package): files' bytes over bitswap: the
//     library's blocks served in place (--share-files), through the block
//     index under DATA/blocks, and peers' files fetched.
//   - node/privacy (its own package): which library files peers may
//     learn of and fetch, by folder (--share-files, its folders, the
//     .metamesh-share and .metamesh-private markers): Rules.Of(path).
//   - sharing.go: node/share wired in: opening a library file by its
//     IPFS CID for a peer (only a file node/privacy says is shared),
//     the hasher's index kept, a marker file changed (every root
//     announced anew, the files bitswap held open judged again), GET
//     /api/file of a peer's file and /api/sources (the file's IPFS CID
//     and providers from its record and the DHT).
//   - sharing_folders_test.go: two households on loopback: a shared
//     folder's file fetched, a private folder's found nowhere, a marker
//     added and removed; a private file's blocks refused under
//     --share-files, and a file being served refused once made private.
//   - stremio.go: node/stremio (the Stremio add-on) wired in front of
//     the API, with its access rules, the store's documents and the
//     household's own search.
//   - node/stremio (its own package): the Stremio add-on under /stremio.
//   - art.go: artwork travels: GET /api/thumb of a peer's image fetched
//     from the households that name it (a few at once, over 5 MiB
//     refused, checked against its CID, kept in DATA/art, a failure
//     remembered a while, a household that names artwork it does not
//     serve logged once), and the artwork of the files the household
//     announces served to peers though it does not share them
//     (--share-art: openShared asks servesArt); a video's still
//     served by its own CID (sharedStill) and a peer's fetched from the
//     households whose records of the file the catalog shows with it
//     name it (peerStill, catalog.Showing).
//   - share_gone.go: what ingest applies at a path (a file deleted,
//     moved out or replaced) closes what node/share held open there.
//   - file_check.go: GET /api/file of a local file checks the bytes it
//     streams: each 256 KiB block against its CID where the block index
//     holds the file's DAG, else the midhash sample before the first
//     byte; a mismatch cuts the answer and has the file hashed again.
//   - trust.go: a peer's file asked by another CID than the IPFS CID its
//     blocks come by: the pairing checked against the bytes (the midhash
//     sample, the whole sha2-256) before the first byte, a record the
//     bytes disprove dropped and its signers not believed.
//   - backend.go: the api.Backend the HTTP API calls (documents, status,
//     files opened through os.Root, thumbnails of them, the event stream with root IDs mapped
//     to canonical CIDs).
//   - households.go: who may see the household's list of films and shows
//     (--library-visible; friends: the peers it named or connected to on
//     its own word), and the backend's GET /api/households and a
//     household's library.
//   - duplicates.go: the backend's GET /api/duplicates, the catalog's
//     groups of the household's own files.
//   - snapshot.go: the backend's api.Snapshotter: a snapshot of the
//     store exported with the node's peer ID, imported by the store
//     (store.ImportSnapshot), a refused file a bad request.
//   - watching.go: the backend's api.Watcher: the household's members
//     (Config.Users made at start), how far each watched a file (kept
//     by the store, never sent to peers), what to continue and the
//     next episode (the catalog's NextEpisode).
//   - auth.go: the API's access rules, bearer token file and invites
//     (package invite's store, DATA/invites.json).
//   - space.go: the data directory's free space: a start refused under
//     MinFree (ErrDataDirFull), the watch that says when it fills and,
//     once it has space again and Redis takes writes, has the libraries
//     rescanned; the problem /ready and /api/status give meanwhile.
//   - metrics.go: the Prometheus registry (metamesh_ series read at scrape
//     time from ingest, the announcer and the host; lookup counters).
//   - scan.go: one-shot scan
//     and fsck. bench_hooks.go: FindProviders alone, for the benchmark.
//
// # Goroutines
//
// Start runs: the HTTP server;
// the data directory's space watch (space.go: a statfs a second);
// with Config.Stills, the stills' worker (node/stills: one ffmpeg at a
// time);
// and, in the packages it starts, the host's and the Household's (their
// doc.go say which). An HTTP request runs on net/http's goroutine.
//
// # Rules
//
//   - The node never reaches out on its own (node/p2p), and provides only
//     its own files (node/announce), never a private folder's
//     (node/privacy).
//   - Every API request bounds its Redis calls to
//     federation.RequestTimeout (1 s, go-redis retries included), so a
//     Redis that is alive but does not answer gives a 503 at once; a
//     federated lookup is bounded by Config.LookupTimeout; ingest's own
//     calls retry with backoff.
//
// # For programs that run a node in-process
//
// Besides New, Start, Close and Run, a Node's accessors are a deliberate
// interface for a Go program that runs a node in its own process (the
// testnet harness and the benchmarks do): PeerID, P2PAddrs, APIAddr,
// Store, Ingester, ProvideStats, LearnStats, Connect, Disconnect, and FindProviders
// (bench_hooks.go: one DHT provider search, timed alone). They are valid
// after Start.
//
// # Lifecycle
//
// New starts nothing; Start binds the API's port, opens the store, starts
// the host and the DHT (p2p.Start), the Household
// (federation.StartHousehold on that host: it runs the store's Changes,
// which also track outside writers' fields), then
// ingest and the HTTP server; Close is idempotent and stops in reverse
// order (api → the Household: its goroutines, the record and
// search protocols, the provider → DHT, host → ingest → store), returning
// errors.Join of what failed. Run logs "shutting down"
// when its context ends and, once Close returned without error, "metamesh
// stopped" as its last line.
package node
