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
//   - feed_test.go: the follower against a real redis-server.
//
// # Goroutines and concurrency
//
// Announcer.Run follows the feed on the caller's goroutine until its
// context ends; the sweeping provider runs its own (a reprovide schedule
// and provide workers). SetTokens and SweptTokens are called from the
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
package announce
