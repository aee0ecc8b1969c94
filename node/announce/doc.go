// Package announce owns what a household provides on the DHT, and when:
// the sweeping provider with its persisted keystore and schedule, the
// announcer that gives it keys, and the change-feed follower the announcer
// and the node's search indexer share.
//
// # Files
//
//   - feed.go: FeedFollower, the loop that follows the store's change feed
//     (meta:events): a resync at start and after every trim, batches in
//     order, a pause and a retry on Redis errors (Pause, RetryPause).
//   - announce.go: the Announcer. It provides two kinds of keys: the CID
//     of every local root that the store announces (store.Announced), from
//     the change feed, and the search token key of every word the local
//     files hold (protocol.SearchTokenKey), as the search indexer reports
//     them (SetTokens, SweptTokens). Stats are its and the provider's
//     figures, as /api/status.provide gives them.
//   - provide.go: the Sweeper: kad-dht's sweeping provider, its keystore
//     and schedule persisted in a pebble datastore (DATA/provider; a
//     derived.Pebble: moved aside and made anew when damaged, then
//     filled by the announcer), and the walk and message counters
//     (CountingSender).
//   - regions.go: the ledger: for every key of the keystore, when a peer
//     last accepted an ADD_PROVIDER for it (provideRecorder, on the
//     provider's message sender), grouped into keyspace regions by the
//     first bits of kad-dht's key (SHA-256 of the multihash), as many as
//     the provider's mean prefix length rounded down; and each region's
//     latest findability check.
//   - findable.go: the findability check: every CheckEvery while the
//     provider is online, a random key of the next region in rotation,
//     the peers closest to it now (a DHT walk) and a GET_PROVIDERS to
//     each, which names this household or does not.
//   - feed_test.go: the follower against a real redis-server;
//     regions_test.go: the ledger's regions and rotation;
//     findable_test.go: real hosts on loopback: checks before and after
//     the closest peers lose their records, regions provided and
//     reprovided.
//
// # Goroutines and concurrency
//
// Announcer.Run follows the feed on the caller's goroutine until its
// context ends, and runs the findability check loop on one more (a check
// at a time: Sweeper.checking; its GET_PROVIDERS to the closest peers
// run at once, under a minute's bound); the sweeping provider runs its
// own (a reprovide schedule and provide workers), which note their
// provides in the ledger (its own lock, taken last). SetTokens and SweptTokens are called from the
// search indexer's one worker. One lock (ks) orders every keystore write
// (a reset, a start, a stop) with the maps those writes are computed
// from; a second (mu), taken after it, guards the maps and the counters
// Stats reads. Close stops the provider; Run must have returned.
//
// # Rules
//
//   - Only the node's own files are ever provided: their announced CID,
//     and the keyed words of their titles, IDs and genres; never a root
//     known only from peers, never a file name.
//   - At start and after a feed trim the keystore is reset to exactly what
//     the store holds (once the indexer's first sweep is in; before it,
//     only missing CIDs are added), so nothing stale is reprovided.
//   - The ledger holds the keystore's keys and no other: every keystore
//     write updates it, and each check reads the keystore again. Its
//     times are since the node started.
//   - A check's messages are counted apart (checkMessages): the
//     provider's messages are its own.
package announce
