package p2p

import (
	"context"
	"log/slog"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// The named peers over QUIC. Behind a NAT the node learns its outside
// addresses from what the peers it named (--bootstrap, --relay) see, one
// observation per transport: reached over TCP only, it never learns the
// UDP mapping its router gives it, so DCUtR can punch over TCP only, and
// a router that answers an unsolicited SYN with a RST (OpenWrt's
// default, any Linux router without input rules) makes every TCP punch
// fail at once. So once identify shows that a named peer reached over
// TCP listens on QUIC too, the node moves its connection to that peer
// onto QUIC (it closes the TCP one and dials again: the swarm dials QUIC
// first when it knows both); the TCP observation is kept
// (observationKept) for a TCP punch with a peer without QUIC. With a
// swarm key there is no QUIC, and nothing moves.

// namedOverQUIC moves each named peer's connection onto QUIC once, as
// above, until ctx ends; it looks every second. want reports whether the
// node should: it listens on QUIC and peers see it behind a NAT.
func namedOverQUIC(ctx context.Context, h host.Host, named []peer.ID, want func() bool, log *slog.Logger) {
	moved := map[peer.ID]bool{}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if len(moved) == len(named) {
			return // each named peer was looked at once
		}
		if !want() {
			continue
		}
		for _, id := range named {
			addrs := publicQUIC(h.Peerstore().Addrs(id))
			if moved[id] || len(addrs) == 0 || !tcpOnly(h.Network().ConnsToPeer(id)) {
				continue
			}
			moved[id] = true
			log.Info("reaching a named peer over QUIC, so it reports the node's UDP mapping too", "peer", id, "addrs", addrs)
			for _, c := range h.Network().ConnsToPeer(id) {
				if !Relayed(c) && !isQUIC(c.RemoteMultiaddr()) {
					_ = c.Close()
				}
			}
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			if err := h.Connect(dctx, peer.AddrInfo{ID: id, Addrs: addrs}); err != nil {
				log.Info("a named peer is not reachable over QUIC; staying on TCP", "peer", id, "err", dialReason(err))
			}
			cancel()
		}
	}
}

// publicQUIC are the QUIC addresses of addrs a NATed node can dial: not
// loopback, not relayed.
func publicQUIC(addrs []ma.Multiaddr) []ma.Multiaddr {
	var out []ma.Multiaddr
	for _, a := range addrs {
		if isQUIC(a) && !isCircuit(a) && !manet.IsIPLoopback(a) {
			out = append(out, a)
		}
	}
	return out
}

// tcpOnly reports whether conns hold a direct connection and every
// direct one is over TCP.
func tcpOnly(conns []network.Conn) bool {
	direct := false
	for _, c := range conns {
		if Relayed(c) {
			continue
		}
		if isQUIC(c.RemoteMultiaddr()) {
			return false
		}
		direct = true
	}
	return direct
}
