// Package kubotest runs real Kubo 0.42 daemons for tests and benchmarks:
// the node serves its files' blocks over bitswap and must interoperate
// with Kubo, so tests fetch from and serve to the real thing. It is a
// normal package so that the tests of several packages can import it;
// nothing but tests and benchmarks does.
//
// The Kubo binary is found one way for the whole project (Find): the
// METAMESH_KUBO environment variable, else .cache/kubo/ipfs under the
// module's root (scripts/kubo.sh builds it from the Go module proxy),
// else ipfs on PATH, and only a Kubo that says 0.42. Without one a test
// skips, saying how to get it (Binary); METAMESH_KUBO set to anything
// that is not Kubo 0.42 fails it instead.
//
// Every daemon keeps all its traffic on loopback (config.go lists each
// setting and why): it listens on 127.0.0.1 only, dials no one it is not
// told to, has no routing, discovery, relay, NAT mapping, AutoConf,
// telemetry or DNS that could reach out, and refuses any non-loopback
// address in its connection gater.
//
// # Files
//
//   - binary.go: Find and Binary (the Kubo binary and its version check).
//   - config.go: the loopback-only configuration and the environment of
//     every ipfs command.
//   - daemon.go: Start (a daemon in its own IPFS_PATH), the Daemon's
//     methods over the RPC API (ID, Addrs, Connect, Peers, Add, Cat,
//     TimedCat, GC), Options and NewSwarmKey.
//   - bench.go: BitswapThroughput, Kubo to Kubo bitswap of one file.
//   - kubotest_test.go: two daemons exchanging a file, in the open and on
//     a private network; the node's host (node/p2p) and Kubo on one
//     swarm key; Kubo's CID of a file against the project's; the
//     loopback-only configuration in effect; METAMESH_KUBO set to
//     something else.
//
// # Goroutines and concurrency
//
// A Daemon is one `ipfs daemon` process, with one goroutine waiting for
// its exit; its output is kept under a mutex. Its methods are safe for
// concurrent use, and parallel tests each start their own daemons (each
// in its own IPFS_PATH on ports the kernel picks). The version check of
// a binary runs once per process.
package kubotest
