// Package sim runs a simulated federation: many households in one
// process on go-libp2p's mocknet, with a latency drawn per pair of
// households, each running the node's own federation side
// (node.Household: the DHT, the announcer and its sweeping provider, the
// record and search protocols, the federated resolver) on a store of its
// own. One redis-server holds every store, one logical database per
// household. The figures it gives are the product's, not a model's; only
// the wire is simulated (mocknet delays every message by its link's
// latency and carries it in memory), and each household's provider state
// is kept in memory instead of a pebble database.
//
// A household holds synthetic files: documents written straight into its
// store (IngestBatch) with digests of random bytes, as ingest would write
// them for files of that name. Households can be killed and added
// (churn).
//
// # Files
//
//   - sim.go: Network (New, Kill, KillAll, Add, Live), its Members and
//     Options; the mocknet links, one logical Redis database per
//     household, the synthetic files.
//
// # Goroutines and concurrency
//
// Each household runs what node.Household runs (its DHT, announcer and
// protocols, with their goroutines). A Network's methods may be called
// from several goroutines: its member list is guarded by one mutex, and
// KillAll stops households concurrently.
package sim
