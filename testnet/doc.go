// Package testnet is the multi-node harness: Cluster starts n full nodes
// in one process (each with its own redis-server, data directory and
// library, libp2p on loopback), and offers Connect, Chain, Partition and
// Heal (a connection gater per node), Kill and Restart (keeping data,
// identity and address), Join (one more node, bootstrapped from earlier
// ones: a federation that grows), AddFile and WaitFor. Its tests are the
// federation scenarios. Production code never imports it.
//
// # Files
//
//   - testnet.go: Cluster and Member.
//   - *_test.go: scenarios (lookups across a chain, partitions, hostile
//     peers, reprovide cycles, a federation that grows one household at
//     a time with few connections each: growth_test.go) and the 20-node
//     benchmark.
//   - compose_test.go, nat_compose_test.go: the docker-compose testnets
//     (METAMESH_TESTNET_COMPOSE=1, `make testnet-test`); the NAT
//     testnet's probes are in nat_compose_probe_test.go.
//
// testnet/sim is the simulated network: hundreds of federation.Households in
// one process on go-libp2p's mocknet, with a latency per pair, for the
// figures at library and federation scale (`make bench`).
package testnet
