// Package node wires a MetaMesh node together and runs it: configuration,
// the store (with its managed redis-server), ingest of the libraries, the
// libp2p host with its /metamesh DHT, the announcer, the record protocol,
// the federated resolver and the HTTP API. It holds no business rules of
// its own: those live in protocol, store and ingest.
//
// # Files
//
//   - config.go: Config, defaults, Validate.
//   - datadir.go: the data directory every command shares
//     (DefaultDataDir, CheckDataDir) and DATA/api.url, where a running
//     node tells the client commands its API.
//   - node.go: New, Start, Close, Run: a Node is a Household plus
//     ingest plus the HTTP API.
//   - node/p2p (its own package): the identity, the libp2p host with its
//     DHT, reachability, relays, observed addresses and log routing.
//   - node/announce (its own package): the change-feed follower, the
//     announcer and the sweeping provider.
//   - household.go: Household, the federation side (DHT, announcer,
//     record and search protocols, search indexer, resolver, reprovide on
//     a first peer), wired in one place (startHousehold): a Node runs one
//     on its host, testnet/sim runs hundreds through StartHousehold.
//   - records.go: /metamesh/record/1.0.0, both sides.
//   - resolve.go: federated GET /api/meta and /api/providers.
//   - document.go: the api.Document GET /api/meta answers, built from
//     a store.Document in one place (known fields typed, exact bytes of
//     paths that are not UTF-8).
//   - node/catalog (its own package): the search indexer and the
//     catalog, the library's lists in memory (GET /api/library).
//   - search.go: /metamesh/search/1.1.0 and 1.0.0 (answered with local files only,
//     signed), the federated fan-out (at most 32 connected peers, 8 at
//     once, and up to 64 households the keyword index names, 8 at once,
//     all within 3 s, none asked twice) and GET /api/search.
//   - index.go: the households the DHT's keyword index names for a
//     query (the providers of its words' token keys, looked up in
//     parallel).
//   - backend.go: the api.Backend the HTTP API calls (documents, status,
//     files opened through os.Root, the event stream with root IDs mapped
//     to canonical CIDs).
//   - auth.go: the API's access rules and bearer token file.
//   - metrics.go: the Prometheus registry (metamesh_ series read at scrape
//     time from ingest, the announcer and the host; lookup counters).
//   - scan.go: one-shot scan
//     and fsck. bench_hooks.go: FindProviders alone, for the benchmark.
//
// # Goroutines
//
// Start runs: the HTTP server; store.Follow (outside writers' fields);
// the Household's: the announcer (a feed reader; the sweeping provider
// runs its own), the search indexer (a feed reader, a field-write
// subscriber and one worker that alone calls IndexRoot and writes the
// catalog, which API handlers read under its lock) and
// a watcher that reprovides when the routing table goes from empty to not
// empty, or the node gets its first relay reservation; the bootstrap loop
// (when --bootstrap or --relay is set); reach's AutoNAT subscriber and
// its once-a-second reservation loop (which also sets the DHT mode); the
// trusted-observation subscriber; and, per inbound
// record stream, libp2p's handler goroutine. A federated lookup runs on a
// goroutine of its own (shared by concurrent requests for the same CID)
// with up to 8 fetches in parallel. The DHT and the host run their own.
//
// # Rules
//
//   - The node never reaches out on its own: no mDNS, no relays but the
//     ones named (--relay, --bootstrap peers with the relay service), no
//     public bootstrap peers, no port mapping unless Config.NATPortMap.
//   - Only the node's own files are ever provided: store.Announced, one
//     CID per local root, from the node's own bytes, and the search token
//     keys of their titles, IDs and genres (node/announce). Peer-only
//     roots are never announced, and record and search requests are
//     answered for local files only (a record is signed by its producer).
//   - Every record stream has a deadline, is reset on error and closed on
//     success; a peer may have at most 8 open at once.
//   - Work that asks peers for an API request is cleared with the
//     request's api.Caller first (Federate: a stranger's token bucket):
//     the resolver when it would start a lookup (not to join one or for
//     a remembered miss), search before a federated first page. What the
//     store holds is answered without asking.
//   - Every API request bounds its Redis calls to requestTimeout (1 s,
//     go-redis retries included), so a Redis that is alive but does not
//     answer gives a 503 at once; a federated lookup is bounded by
//     Config.LookupTimeout; ingest's own calls retry with backoff.
//
// # Lifecycle
//
// New starts nothing; Start binds the API's port, opens the store, starts
// the host and the DHT, store.Follow, the Household (startHousehold), then
// ingest and the HTTP server; Close is idempotent and stops in reverse
// order (api → Follow, the Household: its goroutines, the record and
// search protocols, the provider → DHT, host → ingest → store), returning
// errors.Join of what failed. Run logs "shutting down"
// when its context ends and, once Close returned without error, "metamesh
// stopped" as its last line.
package node
