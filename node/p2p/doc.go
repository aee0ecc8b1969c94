// Package p2p owns a node's libp2p side: its identity, the host, the
// /metamesh Kademlia DHT, reachability and NAT traversal (AutoNAT v2,
// relays, hole punching), the addresses it tells peers, and the routing of
// libp2p's own log lines into the node's. It knows nothing of files: the
// node's protocols run on the host it gives (Net.Host, Net.DHT).
//
// # Files
//
//   - config.go: Config (the node's flags that concern the host and the
//     DHT), DefaultListen, Validate.
//   - identity.go: the node's key (DATA/identity.key), made on first use;
//     a damaged one refused with the way out (identity_test.go).
//   - p2p.go: the host (TCP and QUIC, Noise,
//     Yamux, connection and resource managers, private network, allow-list
//     gater, AutoNAT v2, the relay transport, hole punching) and the DHT;
//     the loop that keeps the --bootstrap and --relay peers connected.
//   - reach.go: reachability (verdict.go), reservations with the relays
//     the household named (and the circuit addresses they give), the DHT
//     mode that follows (--dht-mode auto), hole-punch counts.
//   - observed.go: the addresses peers report seeing the node at (named
//     peers believed at once) and which of its addresses it tells peers.
//   - named.go: behind a NAT, the named peers reached over QUIC once
//     identify shows they listen on it, so they report the UDP mapping.
//   - verdict.go: the reachability verdict from libp2p's tracker, every
//     single AutoNAT v2 answer and the outside address named peers see,
//     and what it rests on; the AutoNAT v2 service and its dial-back host.
//   - relay.go: the relay service (--relay-service, its limits and ACL),
//     and the free-port check (TCP, which stands in for no SO_REUSEPORT,
//     and QUIC's UDP) that refuses a port in use with one clear error.
//   - logs.go: go-libp2p's (slog) and kad-dht's (go-log) log lines routed
//     into the node's, one level down, the ones that repeat the node's
//     own at debug (fx's start-up failures, kad-dht's failed bootstrap
//     dials); a failed dial's reason on one line.
//   - status.go: Status (what /api/status tells of the host) and the
//     host's metamesh_ series (RegisterMetrics).
//   - verdict_test.go: the verdict, against scripted AutoNAT answers;
//     limits_test.go: the protocols' stream limits.
//
// # Goroutines and concurrency
//
// Start runs: the bootstrap loop (when --bootstrap or --relay is set),
// reach's AutoNAT subscriber and its once-a-second reservation loop (which
// also sets the DHT mode), the trusted-observation subscriber and, behind
// a NAT, the move of named peers to QUIC (named.go); the host and the DHT
// run their own. Close stops them,
// then the DHT and the host. Net's methods are safe for concurrent use; a
// Net from Wrap (a simulated household's) runs none of this and closes
// nothing.
//
// # Rules
//
//   - Nothing reaches out on its own: no mDNS, no relays but the ones
//     named (--relay, --bootstrap peers with the relay service), no public
//     bootstrap peers, no port mapping unless Config.NATPortMap.
//   - The node's own protocols get their own inbound stream limits in the
//     resource manager, below the system's and above one peer's share
//     (MaxInboundPerPeer, which the services enforce themselves).
package p2p
