package p2p

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/host/eventbus"
	"github.com/libp2p/go-libp2p/p2p/protocol/holepunch"
	ma "github.com/multiformats/go-multiaddr"
)

// Reachability states, as /api/status and metamesh_reachability name them.
const (
	reachPublic  = "public"
	reachPrivate = "private"
	reachUnknown = "unknown"
)

var reachStates = []string{reachPublic, reachPrivate, reachUnknown}

// reach is the node's side of NAT traversal: its reachability from
// AutoNAT v2, its reservations with the relays the household chose, the
// hole punches DCUtR made, and the DHT mode that follows reachability.
type reach struct {
	h   host.Host
	log *slog.Logger
	// candidates are the relays the node may reserve with: --relay peers,
	// and --bootstrap peers once they show the relay service (hop).
	static, boot []peer.AddrInfo
	protect      func(peer.ID)
	// dhtAuto is true when the DHT's mode follows reachability
	// (--dht-mode auto); dhtBus then carries the mode to it.
	dhtAuto bool
	dhtBus  event.Bus
	dhtEmit event.Emitter
	// behindNAT reports whether peers see the node at a public address
	// none of its interfaces has; outside is the first such address ("").
	behindNAT func() bool
	outside   func() string
	// answers are the single AutoNAT v2 answers (verdict.go).
	answers dialBacks

	mu        sync.Mutex
	state     string
	reachable []ma.Multiaddr
	basis     string
	// confirmed and refuted are libp2p's tracker's verdicts.
	confirmed, refuted []ma.Multiaddr
	relays             map[peer.ID]*relayState
	circuit            []ma.Multiaddr
	// fresh counts reservations made that were not renewals
	// (freshReservations).
	fresh int64
	// dhtMode is what the DHT was last told, once dhtSent.
	dhtMode network.Reachability
	dhtSent bool

	punchOK, punchFail atomic.Int64

	addrsEmit event.Emitter
}

func newReach(static, boot []peer.AddrInfo, dhtAuto bool, log *slog.Logger) (*reach, error) {
	// The DHT starts as a server (ModeAutoServer), as for unknown.
	r := &reach{log: log, static: static, boot: boot, dhtAuto: dhtAuto,
		state: reachUnknown, relays: map[peer.ID]*relayState{}, dhtSent: true, dhtMode: network.ReachabilityUnknown}
	for _, ai := range static {
		r.relays[ai.ID] = &relayState{}
	}
	r.dhtBus = eventbus.NewBus()
	var err error
	if r.dhtEmit, err = r.dhtBus.Emitter(new(event.EvtLocalReachabilityChanged), eventbus.Stateful); err != nil {
		return nil, fmt.Errorf("p2p: dht mode: %w", err)
	}
	return r, nil
}

// attach gives reach the host, once it is built; protect keeps the
// connection to a relay the node holds a reservation with.
func (r *reach) attach(h host.Host, protect func(peer.ID)) error {
	em, err := h.EventBus().Emitter(new(event.EvtAutoRelayAddrsUpdated), eventbus.Stateful)
	if err != nil {
		return fmt.Errorf("p2p: relay addresses: %w", err)
	}
	r.h, r.addrsEmit, r.protect = h, em, protect
	return nil
}

// start follows AutoNAT v2's results and keeps the reservations until
// stop, which waits for both to end.
func (r *reach) start() (stop func() error, err error) {
	sub, err := r.h.EventBus().Subscribe(new(event.EvtHostReachableAddrsChanged), eventbus.Name("metamesh reachability"))
	if err != nil {
		return nil, fmt.Errorf("p2p: reachability: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		defer sub.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-sub.Out():
				r.addrsChanged(e.(event.EvtHostReachableAddrsChanged))
			}
		}
	})
	wg.Go(func() { r.reserveLoop(ctx) })
	return func() error { cancel(); wg.Wait(); return nil }, nil
}

// addrsChanged derives the node's reachability from AutoNAT v2's verdicts
// on its addresses: public when one is confirmed dialable, private when
// none is and some are confirmed not to be, unknown otherwise (AutoNAT
// servers only probe public addresses, so a node whose addresses are all
// private, on a home LAN or loopback, stays unknown).
func (r *reach) addrsChanged(e event.EvtHostReachableAddrsChanged) {
	r.mu.Lock()
	r.confirmed, r.refuted = slices.Clone(e.Reachable), slices.Clone(e.Unreachable)
	r.mu.Unlock()
	r.decide()
}

// answered records one AutoNAT v2 answer on addr.
func (r *reach) answered(addr ma.Multiaddr, reachable bool) {
	r.answers.add(addr, reachable, time.Now())
	r.log.Debug("dial-back answered", "addr", addr, "reachable", reachable)
	r.decide()
}

// decide makes the verdict again from what the node knows (verdict.go).
func (r *reach) decide() {
	in := verdictInput{answers: r.answers.current(time.Now())}
	if r.outside != nil {
		in.outside = r.outside()
	}
	if r.h != nil {
		ifaces, _ := r.h.Network().InterfaceListenAddresses()
		in.publicIface = publicIfaceOf(ifaces)
	}
	r.mu.Lock()
	in.confirmed, in.refuted = r.confirmed, r.refuted
	state, reachable, basis := verdict(in)
	old := r.state
	r.state, r.reachable, r.basis = state, reachable, basis
	r.mu.Unlock()
	if state != old {
		r.log.Info("reachability changed", "from", old, "to", state, "because", basis, "reachable", reachable)
		r.updateDHTMode()
	}
}

// updateDHTMode tells the DHT (--dht-mode auto, kad-dht's
// ModeAutoServer) whether to serve: it is a client while the node is
// private, or while its reachability is unknown but it is plainly behind
// a NAT (peers it named see it at a public address none of its
// interfaces has: AutoNAT's verdict can take minutes in a small
// federation, and never comes behind some NATs), and a server otherwise.
// So public nodes serve, and a federation of private addresses, where
// AutoNAT never concludes and nobody reports a public address, keeps a
// DHT of all its nodes.
func (r *reach) updateDHTMode() {
	if !r.dhtAuto {
		return
	}
	state, _ := r.Reachability()
	rch, why := network.ReachabilityUnknown, "reachability unknown"
	switch {
	case state == reachPublic:
		rch, why = network.ReachabilityPublic, "publicly reachable"
	case state == reachPrivate:
		rch, why = network.ReachabilityPrivate, "private"
	case r.behindNAT != nil && r.behindNAT():
		rch, why = network.ReachabilityPrivate, "behind NAT (seen at an outside address), reachability not yet known"
	}
	r.mu.Lock()
	same := r.dhtSent && r.dhtMode == rch
	r.dhtSent, r.dhtMode = true, rch
	r.mu.Unlock()
	if same {
		return
	}
	mode := "server"
	if rch == network.ReachabilityPrivate {
		mode = "client"
	}
	r.log.Info("dht mode follows reachability", "mode", mode, "why", why)
	_ = r.dhtEmit.Emit(event.EvtLocalReachabilityChanged{Reachability: rch})
}

// Reachability is the current state and the confirmed addresses.
func (r *reach) Reachability() (string, []ma.Multiaddr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state, slices.Clone(r.reachable)
}

// Basis is what the current reachability rests on, in words.
func (r *reach) Basis() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.basis
}

// Trace counts and logs DCUtR's hole punches (holepunch.EventTracer).
func (r *reach) Trace(e *holepunch.Event) {
	end, ok := e.Evt.(*holepunch.EndHolePunchEvt)
	if !ok {
		return
	}
	if end.Success {
		r.punchOK.Add(1)
		r.log.Info("hole punch succeeded: direct connection", "peer", e.Remote, "took", end.EllapsedTime)
		return
	}
	r.punchFail.Add(1)
	r.log.Info("hole punch failed: the connection stays relayed", "peer", e.Remote, "took", end.EllapsedTime, "err", end.Error)
}
