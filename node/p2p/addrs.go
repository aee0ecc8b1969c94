package p2p

import (
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	ma "github.com/multiformats/go-multiaddr"
)

// LearnProvider keeps the addresses a DHT walk gave for a provider, ai,
// for ttl, and lifts the swarm's dial backoff of ai.ID: the provider is
// about to be asked, and it may have come back (a restart, a laptop
// waking) since dials to it failed while it was away, which would
// otherwise refuse to dial it again for up to 5 minutes (the swarm's
// backoff grows with each failed dial). The cost is one dial of a
// provider still away, where the backoff would have answered at once.
func LearnProvider(h host.Host, ai peer.AddrInfo, ttl time.Duration) {
	if ai.ID == h.ID() {
		return
	}
	h.Peerstore().AddAddrs(ai.ID, ai.Addrs, ttl)
	if sw, ok := h.Network().(*swarm.Swarm); ok && h.Network().Connectedness(ai.ID) != network.Connected {
		sw.Backoff().Clear(ai.ID)
	}
}

// parseBootstrap reads /…/p2p/<id> multiaddrs, grouping a peer's
// addresses.
func parseBootstrap(addrs []string) ([]peer.AddrInfo, error) {
	return parsePeerAddrs(addrs, "--bootstrap")
}

// parsePeerAddrs reads the /…/p2p/<id> multiaddrs of flag, grouping a
// peer's addresses.
func parsePeerAddrs(addrs []string, flag string) ([]peer.AddrInfo, error) {
	mas, err := multiaddrs(addrs, flag)
	if err != nil {
		return nil, err
	}
	infos, err := peer.AddrInfosFromP2pAddrs(mas...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (want …/p2p/<peerID>)", flag, err)
	}
	return infos, nil
}

func multiaddrs(addrs []string, flag string) ([]ma.Multiaddr, error) {
	out := make([]ma.Multiaddr, 0, len(addrs))
	for _, a := range addrs {
		m, err := ma.NewMultiaddr(a)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", flag, a, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// sameListen reports whether bound is what want asked for (a port 0 or an
// unspecified IP matches what was picked).
func sameListen(want, bound ma.Multiaddr) bool {
	if want.Equal(bound) {
		return true
	}
	wc, bc := []ma.Component(want), []ma.Component(bound)
	if len(wc) != len(bc) {
		return false
	}
	for i := range wc {
		if wc[i].Protocol().Code != bc[i].Protocol().Code {
			return false
		}
		v := wc[i].Value()
		if v != bc[i].Value() && v != "0" && v != "0.0.0.0" && v != "::" {
			return false
		}
	}
	return true
}

// isQUIC reports whether m is a QUIC address.
func isQUIC(m ma.Multiaddr) bool {
	for _, c := range m {
		if c.Protocol().Code == ma.P_QUIC_V1 || c.Protocol().Code == ma.P_QUIC {
			return true
		}
	}
	return false
}

// isCircuit reports whether m goes through a relay.
func isCircuit(m ma.Multiaddr) bool {
	for _, c := range m {
		if c.Protocol().Code == ma.P_CIRCUIT {
			return true
		}
	}
	return false
}

// Relayed reports whether c goes through a relay: a limited connection,
// or one to a /p2p-circuit address.
func Relayed(c network.Conn) bool {
	return c.Stat().Limited || isCircuit(c.RemoteMultiaddr())
}
