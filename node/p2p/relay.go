package p2p

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	relayv2 "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/relay"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
	"github.com/prometheus/client_golang/prometheus"
)

// relayResources are the limits of the relay service: libp2p's circuit
// relay v2 defaults (a reservation lasts 1 h; at most 128 reservations,
// 1 per peer, 8 per IP and 32 per ASN; at most 16 circuits per peer; a
// circuit carries at most 128 KiB each way and lasts at most 2 min).
func relayResources() relayv2.Resources {
	return relayv2.DefaultResources()
}

// relayLimits describes rc for the start log.
func relayLimits(rc relayv2.Resources) string {
	return fmt.Sprintf("%d reservations of %s (%d per IP), %d circuits per peer, %d KiB and %s per circuit",
		rc.MaxReservations, rc.ReservationTTL, rc.MaxReservationsPerIP, rc.MaxCircuits,
		rc.Limit.Data>>10, rc.Limit.Duration)
}

// startRelayService runs circuit relay v2 on h (--relay-service) at once:
// the household says the node is publicly reachable, so it does not wait
// for AutoNAT to agree (which never happens on a LAN of private
// addresses). With --allow-peer it relays only between allowed peers;
// with --swarm-key only peers of the private network can connect to it
// at all, so it relays only inside it.
func startRelayService(h host.Host, allow *allowGater, reg prometheus.Registerer) (*relayv2.Relay, error) {
	opts := []relayv2.Option{
		relayv2.WithResources(relayResources()),
		relayv2.WithMetricsTracer(relayv2.NewMetricsTracer(relayv2.WithRegisterer(reg))),
	}
	if allow != nil {
		opts = append(opts, relayv2.WithACL(allowACL{allow}))
	}
	r, err := relayv2.New(h, opts...)
	if err != nil {
		return nil, fmt.Errorf("p2p: relay service: %w", err)
	}
	return r, nil
}

// allowACL relays only between peers on the allow-list.
type allowACL struct{ g *allowGater }

func (a allowACL) AllowReserve(p peer.ID, _ ma.Multiaddr) bool { return a.g.allow[p] }
func (a allowACL) AllowConnect(src peer.ID, _ ma.Multiaddr, dest peer.ID) bool {
	return a.g.allow[src] && a.g.allow[dest]
}

// portsFree refuses listen addresses whose port another process holds,
// with one clear error instead of libp2p's: the TCP transport listens
// with SO_REUSEPORT (hole punching dials from the listen port), and with
// it a second node could bind the port of a running one and take half its
// connections; a plain bind first fails on a port in use, whether or not
// its holder set SO_REUSEPORT. QUIC's UDP port is checked the same way:
// libp2p.New would fail on it too, but through fx's start-up hooks, whose
// error only says it could not listen on any address.
func portsFree(listen []ma.Multiaddr) error {
	for _, a := range listen {
		network, addr, err := manet.DialArgs(a)
		if err != nil {
			continue
		}
		if _, port, _ := net.SplitHostPort(addr); port == "0" {
			continue
		}
		switch network {
		case "tcp4", "tcp6":
			l, err := net.Listen(network, addr)
			if err != nil {
				return listenError(a, err)
			}
			l.Close()
		case "udp4", "udp6":
			c, err := net.ListenPacket(network, addr)
			if err != nil {
				return listenError(a, err)
			}
			c.Close()
		}
	}
	return nil
}

// listenError says that a listen address cannot be bound and why, in the
// system's words ("address already in use") rather than the net
// package's "listen tcp4 0.0.0.0:4681: bind: address already in use".
func listenError(a ma.Multiaddr, err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		err = errno
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		// Most often another node's port: say how to choose another.
		return fmt.Errorf("p2p: cannot listen on %s (--listen): %w; another node? give this one a port of its own with --listen (env METAMESH_LISTEN; make run LISTEN=…)", a, err)
	}
	return fmt.Errorf("p2p: cannot listen on %s (--listen): %w", a, err)
}
