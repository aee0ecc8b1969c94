// Package announce owns what a household provides on the DHT, and when:
// the sweeping provider with its persisted keystore and schedule, the
// announcer that gives it keys from the store's changes.
//
// # Files
//
//   - announce.go: the Announcer. It provides two kinds of keys: the CID
//     of every local root that the store announces, and the search token key
//     of every word the local files hold (protocol.SearchTokenKey of
//     search.KeyTokens of each root's document), both from the batches
//     of changed roots store.Changes hands it (Take; its Consumer's
//     Fields are search.KeyField's, when it provides token keys). Stats
//     are its and the provider's figures, as /api/status.provide gives
//     them.
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
//   - regions_test.go: the ledger's regions and rotation;
//     findable_test.go: real hosts on loopback: checks before and after
//     the closest peers lose their records, regions provided and
//     reprovided.
//
// # Goroutines and concurrency
//
// Announcer.Take runs on store.Changes' delivering goroutine. Announcer.Run
// runs the findability check loop on the caller's (a check at a time: Sweeper.checking; its GET_PROVIDERS to the closest peers
// run at once, under a minute's bound); the sweeping provider runs its
// own (a reprovide schedule and provide workers), which note their
// provides in the ledger (its own lock, taken last). One lock (ks) orders every keystore write
// (a reset, a start, a stop) with the maps those writes are computed
// from; a second (mu), taken after it, guards the maps and the counters
// Stats reads. Close stops the provider; Run must have returned.
//
// # Rules
//
//   - Only the node's own files are ever provided: their announced CID,
//     and the keyed words of their titles, IDs and genres; never a root
//     known only from peers, never a file name, never a private file's
//     (New's private: node/privacy's rule, asked of each root's path as
//     its batch is taken; a private root is taken as one that went).
//   - At start and after a feed trim the keystore is reset to exactly what
//     the store holds, once a whole sweep was taken (before it, changes
//     are only noted), so nothing stale is reprovided.
//   - The ledger holds the keystore's keys and no other: every keystore
//     write updates it, and each check reads the keystore again. Its
//     times are since the node started.
//   - A check's messages are counted apart (checkMessages): the
//     provider's messages are its own.
package announce
