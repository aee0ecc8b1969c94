package p2p

import (
	"bytes"
	"fmt"
	"os"

	"github.com/libp2p/go-libp2p/core/connmgr"
	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/pnet"
	ma "github.com/multiformats/go-multiaddr"
)

// gate is who may connect with the host: the private network's key (nil
// without --swarm-key), the allow-list (nil without --allow-peer), which
// the relay service keeps too, and every gater the host asks, the
// allow-list's and Config.Gater.
type gate struct {
	psk    pnet.PSK
	allow  *allowGater
	gaters gaterChain
}

// newGate reads the swarm key and the allow-list of cfg.
func newGate(cfg Config) (gate, error) {
	var g gate
	var err error
	if cfg.SwarmKeyFile != "" {
		if g.psk, err = readSwarmKey(cfg.SwarmKeyFile); err != nil {
			return gate{}, err
		}
	}
	if len(cfg.AllowPeers) > 0 {
		if g.allow, err = newAllowGater(cfg.AllowPeers); err != nil {
			return gate{}, err
		}
		g.gaters = append(g.gaters, g.allow)
	}
	if cfg.Gater != nil {
		g.gaters = append(g.gaters, cfg.Gater)
	}
	return g, nil
}

// readSwarmKey reads a private network key in the standard
// /key/swarm/psk/1.0.0/ format.
func readSwarmKey(path string) (pnet.PSK, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--swarm-key: %w", err)
	}
	psk, err := pnet.DecodeV1PSK(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("--swarm-key %s: %w (want the /key/swarm/psk/1.0.0/ format)", path, err)
	}
	return psk, nil
}

// allowGater refuses every peer not on the allow-list.
type allowGater struct{ allow map[peer.ID]bool }

func newAllowGater(ids []string) (*allowGater, error) {
	g := &allowGater{allow: map[peer.ID]bool{}}
	for _, s := range ids {
		id, err := peer.Decode(s)
		if err != nil {
			return nil, fmt.Errorf("--allow-peer %q: %w", s, err)
		}
		g.allow[id] = true
	}
	return g, nil
}

func (g *allowGater) InterceptPeerDial(p peer.ID) bool                 { return g.allow[p] }
func (g *allowGater) InterceptAddrDial(p peer.ID, _ ma.Multiaddr) bool { return g.allow[p] }
func (g *allowGater) InterceptAccept(network.ConnMultiaddrs) bool      { return true }
func (g *allowGater) InterceptSecured(_ network.Direction, p peer.ID, _ network.ConnMultiaddrs) bool {
	return g.allow[p]
}
func (g *allowGater) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) {
	return true, 0
}

// gaterChain lets a connection through only when every gater does.
type gaterChain []connmgr.ConnectionGater

func (c gaterChain) InterceptPeerDial(p peer.ID) bool {
	for _, g := range c {
		if !g.InterceptPeerDial(p) {
			return false
		}
	}
	return true
}

func (c gaterChain) InterceptAddrDial(p peer.ID, a ma.Multiaddr) bool {
	for _, g := range c {
		if !g.InterceptAddrDial(p, a) {
			return false
		}
	}
	return true
}

func (c gaterChain) InterceptAccept(a network.ConnMultiaddrs) bool {
	for _, g := range c {
		if !g.InterceptAccept(a) {
			return false
		}
	}
	return true
}

func (c gaterChain) InterceptSecured(d network.Direction, p peer.ID, a network.ConnMultiaddrs) bool {
	for _, g := range c {
		if !g.InterceptSecured(d, p, a) {
			return false
		}
	}
	return true
}

func (c gaterChain) InterceptUpgraded(conn network.Conn) (bool, control.DisconnectReason) {
	for _, g := range c {
		if ok, r := g.InterceptUpgraded(conn); !ok {
			return false, r
		}
	}
	return true, 0
}
