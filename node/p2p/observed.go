package p2p

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/host/eventbus"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// trustedObservations is the host's observed-address manager plus what
// the household's chosen peers (--bootstrap, --relay) report of the node's
// address. libp2p believes an observed address only once four peers in
// different networks report it, which a federation of three households,
// or a NATed one that reaches only its relay directly, never gets to; a
// peer the household named is believed at once. AutoNAT v2 then checks
// the address like any other before it counts as reachable.
type trustedObservations struct {
	inner   observedAddrs
	trusted map[peer.ID]bool

	mu sync.Mutex
	// obs holds a peer's observation of each of the node's local
	// addresses it saw (its TCP and its QUIC connection apart).
	obs map[obsKey]observation
}

// obsKey is one trusted peer's observation of one local address.
type obsKey struct {
	peer  peer.ID
	local string
}

// observedAddrs is the interface of libp2p's observed-address manager
// (basichost.ObservedAddrsManager).
type observedAddrs interface {
	Addrs(minObservers int) []ma.Multiaddr
	AddrsFor(local ma.Multiaddr) []ma.Multiaddr
}

// observation is what one trusted peer last saw: the connection's local
// address and the node's address as the peer saw it; once the peer has
// disconnected, it is believed until gone (a router's outside address
// outlives one connection, and AutoNAT's verdict on it stands meanwhile).
type observation struct {
	local, observed ma.Multiaddr
	gone            time.Time
}

// observationKept is how long a trusted peer's observation is believed
// after the peer disconnected.
const observationKept = 30 * time.Minute

func newTrustedObservations(inner observedAddrs, trusted []peer.ID) *trustedObservations {
	t := &trustedObservations{inner: inner, trusted: map[peer.ID]bool{}, obs: map[obsKey]observation{}}
	for _, id := range trusted {
		t.trusted[id] = true
	}
	return t
}

// follow records the observations of trusted peers from identify, over
// direct connections only, until ctx ends; a peer's observation goes when
// the peer disconnects.
func (t *trustedObservations) follow(ctx context.Context, h host.Host) error {
	sub, err := h.EventBus().Subscribe([]any{new(event.EvtPeerIdentificationCompleted), new(event.EvtPeerConnectednessChanged)},
		eventbus.Name("metamesh trusted observations"))
	if err != nil {
		return err
	}
	go func() {
		defer sub.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-sub.Out():
				switch e := e.(type) {
				case event.EvtPeerIdentificationCompleted:
					t.record(e)
				case event.EvtPeerConnectednessChanged:
					if e.Connectedness != network.Connected {
						t.mu.Lock()
						for k, o := range t.obs {
							if k.peer == e.Peer && o.gone.IsZero() {
								o.gone = time.Now().Add(observationKept)
								t.obs[k] = o
							}
						}
						t.mu.Unlock()
					}
				}
			}
		}
	}()
	return nil
}

func (t *trustedObservations) record(e event.EvtPeerIdentificationCompleted) {
	if !t.trusted[e.Peer] || e.Conn == nil || e.ObservedAddr == nil || e.Conn.Stat().Limited || isCircuit(e.Conn.RemoteMultiaddr()) {
		return
	}
	if !manet.IsPublicAddr(e.ObservedAddr) || isCircuit(e.ObservedAddr) {
		return
	}
	t.mu.Lock()
	local := e.Conn.LocalMultiaddr()
	t.obs[obsKey{e.Peer, string(local.Bytes())}] = observation{local: local, observed: e.ObservedAddr}
	t.mu.Unlock()
}

// AddrsFor is what others observed for the local address local.
func (t *trustedObservations) AddrsFor(local ma.Multiaddr) []ma.Multiaddr {
	var out []ma.Multiaddr
	if t.inner != nil {
		out = t.inner.AddrsFor(local)
	}
	return t.appendTrusted(out, func(o observation) bool { return sameThinWaist(local, o.local) })
}

// Addrs are every observed address seen by at least minObservers peers,
// and those the trusted peers saw.
func (t *trustedObservations) Addrs(minObservers int) []ma.Multiaddr {
	var out []ma.Multiaddr
	if t.inner != nil {
		out = t.inner.Addrs(minObservers)
	}
	return t.appendTrusted(out, func(observation) bool { return true })
}

// appendTrusted adds to out the addresses of the trusted peers'
// current observations that match, each once.
func (t *trustedObservations) appendTrusted(out []ma.Multiaddr, match func(observation) bool) []ma.Multiaddr {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, o := range t.current() {
		if match(o) && !slices.ContainsFunc(out, o.observed.Equal) {
			out = append(out, o.observed)
		}
	}
	return out
}

// current are the observations still believed, the expired ones
// dropped; t.mu is held.
func (t *trustedObservations) current() map[obsKey]observation {
	now := time.Now()
	for id, o := range t.obs {
		if !o.gone.IsZero() && now.After(o.gone) {
			delete(t.obs, id)
		}
	}
	return t.obs
}

// sameThinWaist reports whether conn, a connection's local address, is
// on listen: the same IP version, transport and port, and the same IP
// unless listen's is unspecified.
func sameThinWaist(listen, conn ma.Multiaddr) bool {
	if len(listen) < 2 || len(conn) < 2 {
		return false
	}
	l0, c0 := listen[0], conn[0]
	if l0.Protocol().Code != c0.Protocol().Code || listen[1].Protocol().Code != conn[1].Protocol().Code ||
		listen[1].Value() != conn[1].Value() {
		return false
	}
	if l0.Value() != c0.Value() && !manet.IsIPUnspecified(ma.Multiaddr{l0}) {
		return false
	}
	// QUIC and TCP share the IP and port components' shape: the rest of
	// the address (quic-v1, webtransport, …) must agree too.
	lq, cq := isQUIC(listen), isQUIC(conn)
	return lq == cq
}

// advertised are the addresses the node tells peers (identify, the DHT)
// out of addrs, all it knows: a public address that is not one of its
// interfaces' (one peers reported, the router's outside address behind
// NAT) only once AutoNAT v2 confirmed it dialable, so peers never dial
// into a NAT before a hole punch (a plain dial left pending there holds
// the very port pair the punch needs); loopback addresses only when the
// node has no other. Relayed and private addresses go as they are.
func advertised(addrs []ma.Multiaddr, ifaces func() ([]ma.Multiaddr, error), reachable []ma.Multiaddr) []ma.Multiaddr {
	outside := outsideOf(ifaces)
	out := make([]ma.Multiaddr, 0, len(addrs))
	loopbackOnly := true
	for _, a := range addrs {
		if !manet.IsIPLoopback(a) {
			loopbackOnly = false
		}
	}
	for _, a := range addrs {
		if manet.IsIPLoopback(a) && !loopbackOnly {
			continue
		}
		if outside(a) && !slices.ContainsFunc(reachable, a.Equal) {
			continue
		}
		out = append(out, a)
	}
	return out
}

// outsideOf returns whether an address is an outside one: public, not
// relayed, at an IP none of the node's interfaces (ifaces) has.
func outsideOf(ifaces func() ([]ma.Multiaddr, error)) func(ma.Multiaddr) bool {
	own, _ := ifaces()
	ips := map[string]bool{}
	for _, a := range own {
		if ip, err := manet.ToIP(a); err == nil {
			ips[ip.String()] = true
		}
	}
	return func(a ma.Multiaddr) bool {
		if !manet.IsPublicAddr(a) || isCircuit(a) {
			return false
		}
		ip, err := manet.ToIP(a)
		return err == nil && !ips[ip.String()]
	}
}

// behindNAT reports whether peers see the node at an outside address.
func (t *trustedObservations) behindNAT(ifaces func() ([]ma.Multiaddr, error)) bool {
	return slices.ContainsFunc(t.Addrs(1), outsideOf(ifaces))
}

// outside is the first address the peers see the node at that none of
// its interfaces has, or "".
func (t *trustedObservations) outside(ifaces func() ([]ma.Multiaddr, error)) string {
	addrs := t.Addrs(1)
	if i := slices.IndexFunc(addrs, outsideOf(ifaces)); i >= 0 {
		return addrs[i].String()
	}
	return ""
}
