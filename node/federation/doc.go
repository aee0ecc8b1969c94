// Package federation is what a household runs towards the others: the
// Household (StartHousehold, the one place its parts are wired), the record
// and search protocols, both sides, the federated resolver behind
// GET /api/meta, and the search that asks other households. It runs on a
// p2p.Net (a node's host and DHT) or on a bare host (a simulated
// household's, with a DHT of its own), and knows nothing of ingest or HTTP:
// it answers with package model's types and errors.
//
// # Files
//
//   - household.go: HouseholdConfig, StartHousehold, the Household's
//     answers (Meta, Providers, KnownProviders, SearchPage, Lookup,
//     Search, PeerNames, ProvideStats), Recheck, permit (a caller's permission to ask
//     peers) and the reprovide on a first peer.
//   - records.go: /metamesh/record/1.1.0 and 1.0.0, both sides
//     (peerService, what the record and search services share: the host,
//     the store, the signing key, the versions, the household's name, the
//     peers' names and one peer's open-stream bound).
//   - exchange.go: the asking side of one request/answer exchange, the
//     record, search and library protocols' own: a new stream (a relayed
//     one too), the request, the answer by the deadline, a reset on any
//     error, an answer a relay cut off told as errRelayCut.
//   - library.go: /metamesh/library/1.0.0, both sides: the household's
//     own films and shows (node/catalog's Shared, each file passing
//     listedToPeers: none of a private folder) answered, signed, to the peers
//     HouseholdConfig.LibraryVisible allows and refused (an empty
//     response) to the others; a friend's page asked and verified (GET
//     /api/households/<peer>/library), and every connected household
//     asked for its name and counts (GET /api/households: 8 at once,
//     within 3 s).
//   - names.go: peerNames, the household names peers claimed in their
//     verified answers (record 1.1.0, search 1.2.0, library 1.0.0), in memory, which
//     GET /api/meta's and /api/search's answers carry as "peerNames".
//   - resolve.go: the resolver: GET /api/meta from the store, else a
//     federated lookup (one per CID at a time, shared by the requests
//     that ask meanwhile), the misses remembered for 5 s; /api/providers.
//   - resolve_lookup.go: one federated lookup: each provider the DHT's
//     walk names asked the moment it is named; the fan-out, 8 at once,
//     to the connected peers then the routing table's (shuffled, those
//     that hung or lied last, distrusted ones never asked); the chosen
//     answer merged into the store, or the miss and why.
//   - resolve_choice.go: which answer a lookup takes: a provider's at
//     once; a fan-out peer's held until the walk is over and every
//     provider it named has answered or failed, or 3 s have passed.
//   - resolve_net.go: lookupNet, all a lookup touches of the network
//     (the walk's providers, the connected and routing-table peers, one
//     peer's record), and dhtNet, its libp2p and kad-dht side.
//   - learn.go: the learner (HouseholdConfig.LearnFromPeers): one local
//     video at a time, at a bounded pace, that lacks a title, plot, IMDb
//     ID or poster of its own, asked of the households that provide its
//     canonical CID (the connected peers when the DHT names none), their
//     verified records merged; a file asked again after a week, or after
//     an hour (or a household not seen before) when no one answered; a
//     private file (HouseholdConfig.Private) never.
//   - document.go: the model.Document GET /api/meta answers, built from a
//     store.Document in one place (known fields typed, exact bytes of
//     paths that are not UTF-8).
//   - search.go: /metamesh/search/1.2.0, 1.1.0 and 1.0.0 (answered with
//     local files only, signed; 1.2.0 with the household's name), the federated fan-out and GET /api/search (the
//     local page of node/search's index merged with peers' answers by
//     search.Merge). The
//     fan-out asks at most 32 connected peers, 8 at once, in an order no
//     peer can choose (shuffled for each search, peers marked in score.go
//     last), and up to 64 households the keyword index names, 8 at once,
//     whether they are connected or not; all within 3 s, each peer
//     holding its place for 1 s (2 s when it must be dialled; its answer
//     is still taken while the search asks others), the least marked of
//     those waiting first; the search ends when every household was asked
//     and each answered or is past its time (the index's households that
//     never hung are waited for within the budget). A household is
//     claimed when it is asked,
//     never before, so none is asked twice and none is kept from the
//     index's path by a place in the connected peers' queue. A peer that
//     did not answer in time, failed or sent what did not verify is
//     marked (a hang).
//   - keywords.go: the households the DHT's keyword index names for a query
//     (the providers of its words' token keys, looked up in parallel):
//     each once it provides every word, or, once the lookups that are
//     over leave few that can, all of those at once, the other lookups
//     ended; then, up to a few in all, those found providing some of
//     the words (a walk can miss a record).
//   - keywords_test.go: those rules on a twin of the DHT's lookups whose
//     walks the test releases in its order.
//   - walk.go: a word's DHT walk, ended once the peers nearest its key
//     have answered (followed through kad-dht's lookup and query events).
//   - score.go: the peers that hung or lied, each mark fading (six
//     hours' half-life): asked last by lookups and searches, a liar's
//     records not believed for a day.
//   - errors.go: RequestTimeout, and the API errors of store failures
//     (APIError, RedisDown).
//   - hostile_limits_test.go: a flood of record streams from many peers
//     against the resource manager's limits.
//   - library_test.go: the library protocol on loopback: a friend's
//     page, the refusal, the reset of a bad request, and the asking
//     side's errors (refused, failed, timed out, unknown).
//   - search_late_test.go: a household the index names that never hung
//     is heard however late within the budget; a marked one is not
//     waited for.
//   - resolvetwin_test.go: the lookup's network in memory (households
//     whose walk, peers and answers the test releases in its order) on a
//     real store.
//   - resolve_rules_test.go: the lookup's rules against it: which record
//     wins, whom it asks and in what order, when it stops, a disproved
//     lie.
//   - walk_test.go: when a walk ends, told by the peers' distance to
//     the key.
//   - search_hostile_test.go: hanging peers whose IDs sort first do not
//     blind a federated search (real hosts on loopback); the order of the
//     connected peers and of those waiting, and who is marked.
//
// # Goroutines and concurrency
//
// StartHousehold runs: the announcer (node/announce), store.Changes
// handing the store's changes to the search indexer (node/search), the
// catalog when given (node/catalog) and the announcer, in that order, and
// the learner, when on (one goroutine: it asks one file at a time);
// a watcher that reprovides when the routing table goes
// from empty to not empty, or the node gets a relay reservation afresh
// (not a renewal);
// per inbound record, search or library stream, libp2p's handler
// goroutine; GET /api/households asks on up to 8 goroutines. A
// federated lookup runs on a goroutine of its own (shared by concurrent
// requests for the same CID), which alone chooses and merges the answer;
// it walks the DHT on one goroutine, asks each provider the walk names
// on one of its own (at most 20) and fans out on 8; a federated
// search asks on up to 16 goroutines (8 for the connected peers, 8 for
// the households the index names, each path fed by one goroutine that
// hands out the least marked household waiting). Close stops them and
// the protocols' handlers, then the provider, and the DHT when
// StartHousehold made it.
// A Household's methods are safe for concurrent use.
//
// # Rules
//
//   - Record and search requests are answered for local files only (a
//     record is signed by its producer); peers' answers are verified
//     before anything of them is kept or shown.
//   - A library request is answered with local files only, to the peers
//     the household shows its list to; the answer is verified before it
//     is shown.
//   - A private file (HouseholdConfig.Private, node/privacy's rule) is
//     never announced (the announcer takes it as a root that went: no
//     provider record, no search token key), no record is answered for
//     it and its hits are left out of search answers to peers (a page
//     may then hold fewer hits than asked). Household.Recheck has the
//     announcer take every root again when what is private changed.
//   - Every record, search and library stream has a deadline, is reset on error
//     and closed on success; a peer may have at most p2p.MaxInboundPerPeer
//     open at once.
//   - Work that asks peers for a request is cleared first with the
//     permission its caller hands in (allow func() error, nil: always;
//     the node's backend takes a stranger's token there): the resolver
//     when it would start a lookup (not to join one or for a remembered
//     miss), search before a federated first page; a refusal is returned
//     as it is. What the store holds is answered without asking. The
//     package knows nothing of HTTP: its answers and errors are package
//     model's.
//   - An API request's Redis calls are bounded by RequestTimeout; a
//     federated lookup by the lookup timeout.
package federation
