// Package p2p owns a node's libp2p side: its identity, the host, the
// /metamesh Kademlia DHT, reachability and NAT traversal (AutoNAT v2,
// relays, hole punching), the addresses it tells peers, and the routing of
// libp2p's own log lines into the node's. It knows nothing of files: the
// node's protocols run on the host it gives (Net.Host, Net.DHT).
//
// # Files
//
//   - config.go: Config (the node's flags that concern the host and the
//     DHT; node.Config holds it as P2P), DefaultListen, SetDefaults,
//     Validate.
//   - identity.go: the node's key (DATA/identity.key), made on first use;
//     a damaged one refused with the way out (identity_test.go).
//   - p2p.go: Net (its accessors, Close), the cleanup stack (closers),
//     Wrap, the DHT's options.
//   - start.go: Start, as a sequence of small steps, each putting the
//     close of what it built on the Net's one stack: the addresses given,
//     the host (TCP and QUIC, Noise, Yamux, AutoNAT v2, the relay
//     transport, hole punching, the addresses it tells), what runs on it
//     (reachability, observed addresses, the connection log, the relay
//     service), the DHT, the loops; a failed or cancelled start closes
//     what it built, and Close all of it (start_test.go).
//   - limits.go: the connection and resource managers, the protocols'
//     own stream limits (limits_test.go).
//   - access.go: who may connect: the private network's key
//     (--swarm-key), the allow-list gater (--allow-peer), the gater
//     chain.
//   - bootstrap.go: the loop that keeps the --bootstrap and --relay peers
//     connected, redialling past the swarm's backoff.
//   - addrs.go: reading the flags' multiaddrs, and what an address or a
//     connection is (QUIC, relayed).
//   - reach.go: reachability (verdict.go), the DHT mode that follows
//     (--dht-mode auto), hole-punch counts.
//   - reservations.go: reservations with the relays the household named
//     (and the circuit addresses they give), what /api/status tells of
//     them.
//   - dhtbus.go: the host as the DHT sees it, its reachability events
//     from reach (--dht-mode auto).
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
//   - verdict_test.go: the verdict, against scripted AutoNAT answers.
//
// # Goroutines and concurrency
//
// Start runs: the bootstrap loop (when --bootstrap or --relay is set),
// reach's AutoNAT subscriber and its once-a-second reservation loop (which
// also sets the DHT mode), the trusted-observation subscriber and, behind
// a NAT, the move of named peers to QUIC (named.go); the host and the DHT
// run their own. Close runs the cleanup stack: it stops the loops, then
// the DHT, reach, the relay service and the host, in the reverse of the
// order Start built them. Net's methods are safe for concurrent use,
// Close excepted (a second Close closes nothing). A Net from Wrap (a simulated
// household's) runs none of this; its Close closes the DHT and the host
// it was given.
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
