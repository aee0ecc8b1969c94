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
// them for files of that name. Households can be killed, added and
// brought back on their identity, database and provider datastore
// (churn), and a federation can grow one household at a time with few
// connections each (JoinOptions.Connect). Each household's host counts
// the DHT messages it sends.
//
// # Files
//
//   - sim.go: Network (New, Join, JoinWith, Rejoin, Kill, KillAll, Live),
//     its Members, Options and JoinOptions; the mocknet links, one
//     logical Redis database per household, the synthetic files.
//   - count.go: the household's host that counts the DHT messages it
//     sends (Member.DHTMessages) and the streams of other protocols it
//     opens (Member.Streams).
//   - bench_test.go: BenchmarkSimNetwork, a federation whose households
//     all exist before anyone provides.
//   - growth_test.go, growth_bench_test.go: a federation that grows one
//     household at a time (degree 2) with early holders, and the reach
//     of their files measured as it grows and churns (TestGrowth_Reach,
//     BenchmarkSimGrowth), with the DHT messages it costs.
//
// # Goroutines and concurrency
//
// Each household runs what node.Household runs (its DHT, announcer and
// protocols, with their goroutines). A Network's methods may be called
// from several goroutines: its member list is guarded by one mutex, and
// KillAll stops households concurrently. A household killed is cut off
// as a machine that went away: its links go first (a closed mocknet host
// still takes dials, and connections made to it would outlive its
// return, leading to a host that has stopped). Rejoin gives a Member a
// new Host, Store and HH, linked again: nothing may use the old ones
// meanwhile.
package sim
