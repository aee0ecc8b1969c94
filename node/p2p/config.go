package p2p

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/libp2p/go-libp2p/core/connmgr"
	"github.com/libp2p/go-libp2p/core/metrics"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// Config is what the host and the DHT are built from: node.Config.P2P,
// which cmd/metamesh fills from the node's flags, whose names its errors
// give. Every field but ProviderRecordTTL, Gater and BandwidthReporter
// has a flag and an environment twin.
type Config struct {
	// Listen are the libp2p listen multiaddrs (--listen). Default
	// DefaultListen (TCP and QUIC on 4681, every interface).
	Listen []string
	// Bootstrap peers, /…/p2p/<peerID> multiaddrs (--bootstrap), redialled
	// with backoff whenever the node is not connected to them. There are
	// no default (public) bootstrap peers.
	Bootstrap []string
	// Announce replaces the addresses the node tells peers (--announce),
	// for a node behind NAT or in a container.
	Announce []string
	// NATPortMap asks the household router for a port mapping (UPnP,
	// NAT-PMP) (--nat-portmap). Off: the node never reaches out on its own.
	NATPortMap bool
	// SwarmKeyFile makes the federation private (--swarm-key): only nodes
	// with the same /key/swarm/psk/1.0.0/ key connect. QUIC cannot run a
	// private network, so the default QUIC address is dropped and a QUIC
	// --listen is refused.
	SwarmKeyFile string
	// AllowPeers, when set, is the only peers the node connects with
	// (--allow-peer).
	AllowPeers []string
	// DHTMode is auto (default), server or client (--dht-mode). Auto is a
	// DHT server unless AutoNAT v2 finds the node private (behind NAT,
	// its addresses confirmed undialable), or, until AutoNAT concludes,
	// the peers it named see it at an outside address (reach.go), then a
	// client: the DHT is made of reachable nodes, and a federation of
	// private addresses (a home LAN, where AutoNAT servers probe nothing)
	// keeps all its nodes in it.
	DHTMode string
	// Relays are static relays, /…/p2p/<peerID> multiaddrs (--relay): the
	// node keeps a reservation with each while it is not publicly
	// reachable, as with the --bootstrap peers that offer the relay
	// service. No other relay is ever used for the node's own addresses.
	Relays []string
	// RelayService makes the node a circuit relay v2 for others
	// (--relay-service), with libp2p's default limits (relay.go).
	RelayService bool
	// NoHolePunching turns DCUtR off (--hole-punching=false): connections
	// that start over a relay stay relayed.
	NoHolePunching bool
	// ConnLow and ConnHigh are the connection manager's watermarks
	// (--conn-low, --conn-high; default 100 and 400).
	ConnLow, ConnHigh int
	// ProviderRecordTTL is how long provider records the node stores for
	// others stay valid; 0 keeps kad-dht's default (48h). It has no flag:
	// tests shorten it.
	ProviderRecordTTL time.Duration
	// Gater, when set, also decides which peers the host may connect with
	// (after AllowPeers). It has no flag: programs that embed a node (the
	// testnet harness cutting partitions) set it.
	Gater connmgr.ConnectionGater
	// BandwidthReporter, when set, is told every byte the host's streams
	// send and receive (libp2p.BandwidthReporter). It has no flag:
	// benchmarks set it.
	BandwidthReporter metrics.Reporter
}

// DefaultListen are the libp2p addresses a node listens on by default:
// not 4001, so it runs beside Kubo.
var DefaultListen = []string{"/ip4/0.0.0.0/tcp/4681", "/ip4/0.0.0.0/udp/4681/quic-v1"}

// SetDefaults fills zero fields: DefaultListen, --dht-mode auto, the
// watermarks 100 and 400. Start takes cfg as it is.
func (c *Config) SetDefaults() {
	if len(c.Listen) == 0 {
		c.Listen = DefaultListen
	}
	if c.DHTMode == "" {
		c.DHTMode = "auto"
	}
	if c.ConnLow == 0 {
		c.ConnLow = 100
	}
	if c.ConnHigh == 0 {
		c.ConnHigh = 400
	}
}

// Validate checks the addresses, peer IDs and modes, naming the flag of
// whatever is wrong.
func (c *Config) Validate() error {
	// multiaddrs, parseBootstrap and newAllowGater name the flag.
	if _, err := multiaddrs(c.Listen, "--listen"); err != nil {
		return err
	}
	for _, a := range c.Bootstrap { // one by one, to name the bad one
		m, err := multiaddrs([]string{a}, "--bootstrap")
		if err != nil {
			return err
		}
		if _, err := peer.AddrInfoFromP2pAddr(m[0]); err != nil {
			return fmt.Errorf("--bootstrap %q: %w (want …/p2p/<peerID>)", a, err)
		}
	}
	if _, err := parseBootstrap(c.Bootstrap); err != nil {
		return err
	}
	for _, a := range c.Relays {
		m, err := multiaddrs([]string{a}, "--relay")
		if err != nil {
			return err
		}
		if _, err := peer.AddrInfoFromP2pAddr(m[0]); err != nil {
			return fmt.Errorf("--relay %q: %w (want …/p2p/<peerID>)", a, err)
		}
		if isCircuit(m[0]) {
			return fmt.Errorf("--relay %q goes through another relay; give the relay's own address", a)
		}
	}
	if c.hasPSK() {
		for _, f := range []struct {
			name  string
			addrs []string
		}{{"--bootstrap", c.Bootstrap}, {"--relay", c.Relays}} {
			infos, err := parsePeerAddrs(f.addrs, f.name)
			if err != nil {
				return err
			}
			for _, ai := range infos {
				for _, a := range ai.Addrs {
					if isQUIC(a) {
						return fmt.Errorf("%s %s/p2p/%s is QUIC, which cannot run a private network (--swarm-key); give its TCP address", f.name, a, ai.ID)
					}
				}
			}
		}
	}
	ann, err := multiaddrs(c.Announce, "--announce")
	if err != nil {
		return err
	}
	if len(c.Relays) > 0 {
		// The announced addresses replace every address the node tells,
		// the circuit addresses its relay gives included.
		for i, m := range ann {
			if !isCircuit(m) {
				return fmt.Errorf("--announce %q with --relay: the announced addresses replace the relay's circuit addresses, so no household could reach this node through its relay; leave --announce out, or announce /p2p-circuit addresses only", c.Announce[i])
			}
		}
	}
	if c.hasPSK() && !c.defaultListen() {
		for _, a := range c.Listen {
			if m, _ := multiaddrs([]string{a}, "--listen"); isQUIC(m[0]) {
				return fmt.Errorf("--listen %q is QUIC, and QUIC cannot run a private network (--swarm-key); listen on TCP only", a)
			}
		}
	}
	if _, err := newAllowGater(c.AllowPeers); err != nil {
		return err
	}
	switch c.DHTMode {
	case "server", "client", "auto":
	default:
		return fmt.Errorf("--dht-mode %q: want auto, server or client", c.DHTMode)
	}
	if c.ConnLow < 0 {
		return fmt.Errorf("--conn-low %d: may not be negative", c.ConnLow)
	}
	if c.ConnHigh <= c.ConnLow {
		return fmt.Errorf("--conn-high %d: must be above --conn-low %d", c.ConnHigh, c.ConnLow)
	}
	return nil
}

func (c *Config) hasPSK() bool { return c.SwarmKeyFile != "" }

func (c *Config) defaultListen() bool {
	return len(c.Listen) == len(DefaultListen) && c.Listen[0] == DefaultListen[0] && c.Listen[1] == DefaultListen[1]
}

// listenAddrs are the libp2p listen addresses; with a swarm key the
// default QUIC address is dropped (QUIC cannot run a private network), and
// the log says so.
func (c *Config) listenAddrs(log *slog.Logger) ([]ma.Multiaddr, error) {
	addrs, err := multiaddrs(c.Listen, "--listen")
	if err != nil {
		return nil, err
	}
	if !c.hasPSK() {
		return addrs, nil
	}
	out := addrs[:0]
	for _, a := range addrs {
		if isQUIC(a) {
			log.Info("private federation (--swarm-key): not listening on QUIC, which cannot run a private network", "addr", a.String())
			continue
		}
		out = append(out, a)
	}
	return out, nil
}
