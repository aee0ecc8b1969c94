package p2p

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/host/eventbus"
	"github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/client"
	relayproto "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/proto"
	"github.com/libp2p/go-libp2p/p2p/protocol/holepunch"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
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
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

// relayState is one relay's reservation.
type relayState struct {
	rsv *client.Reservation
	// on are the IDs of the connections to the relay when the reservation
	// was made: the relay forgets it once none of them is left, however
	// quickly the node connects again.
	on      []string
	got     time.Time
	err     string
	next    time.Time
	backoff time.Duration
	warned  bool
}

// relayRetryMax caps the backoff between reservation attempts with one
// relay: a relay that comes back is used again within it.
const relayRetryMax = 30 * time.Second

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

// start follows AutoNAT v2's results and keeps the reservations.
func (r *reach) start() error {
	sub, err := r.h.EventBus().Subscribe(new(event.EvtHostReachableAddrsChanged), eventbus.Name("metamesh reachability"))
	if err != nil {
		return fmt.Errorf("p2p: reachability: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Add(2)
	go func() {
		defer r.wg.Done()
		defer sub.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-sub.Out():
				r.addrsChanged(e.(event.EvtHostReachableAddrsChanged))
			}
		}
	}()
	go func() {
		defer r.wg.Done()
		r.reserveLoop(ctx)
	}()
	return nil
}

func (r *reach) close() {
	if r.cancel != nil {
		r.cancel()
	}
	r.wg.Wait()
	if r.addrsEmit != nil {
		r.addrsEmit.Close()
	}
	r.dhtEmit.Close()
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

// reserveLoop keeps a reservation with every relay the household chose
// while the node is not public, renewing each well before it expires
// and retrying a failed one with backoff (1 s doubling to 30 s).
func (r *reach) reserveLoop(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		r.reserveOnce(ctx)
		r.decide() // what peers report of the node's address changes too
		r.updateDHTMode()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *reach) reserveOnce(ctx context.Context) {
	now := time.Now()
	state, _ := r.Reachability()
	for _, ai := range r.candidates() {
		r.mu.Lock()
		rs := r.relays[ai.ID]
		r.mu.Unlock()
		conns := r.h.Network().ConnsToPeer(ai.ID)
		connected := r.h.Network().Connectedness(ai.ID) == network.Connected
		kept := slices.ContainsFunc(conns, func(c network.Conn) bool { return slices.Contains(rs.on, c.ID()) })
		if rs.rsv != nil && (!kept || now.After(rs.rsv.Expiration) || state == reachPublic) {
			r.mu.Lock()
			rs.rsv = nil
			r.mu.Unlock()
			why := "relay disconnected"
			switch {
			case state == reachPublic:
				why = "the node is publicly reachable"
			case !kept && connected:
				why = "the connection it was made on closed (the node connected again)"
			case connected:
				why = "reservation expired"
			}
			r.log.Info("relay reservation dropped", "relay", ai.ID, "reason", why)
		}
		if state == reachPublic || !connected {
			continue
		}
		if rs.rsv != nil && time.Until(rs.rsv.Expiration) > rs.rsv.Expiration.Sub(rs.got)/4 {
			continue
		}
		if now.Before(rs.next) {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		rsv, err := client.Reserve(rctx, r.h, peer.AddrInfo{ID: ai.ID})
		cancel()
		if ctx.Err() != nil {
			return
		}
		r.mu.Lock()
		if err != nil {
			rs.backoff = min(max(rs.backoff*2, time.Second), relayRetryMax)
			rs.next = time.Now().Add(rs.backoff)
			rs.err = err.Error()
			warn := !rs.warned
			rs.warned = true
			r.mu.Unlock()
			args := []any{"relay", ai.ID, "retry in", rs.backoff, "err", err}
			if warn {
				r.log.Warn("relay refused a reservation; retrying with backoff", args...)
			} else {
				r.log.Debug("relay still refuses a reservation", args...)
			}
			continue
		}
		renewal := rs.rsv != nil
		if !renewal {
			r.fresh++
		}
		rs.rsv, rs.got, rs.err, rs.backoff, rs.warned = rsv, time.Now(), "", 0, false
		rs.on = rs.on[:0]
		for _, c := range r.h.Network().ConnsToPeer(ai.ID) {
			rs.on = append(rs.on, c.ID())
		}
		r.mu.Unlock()
		if r.protect != nil {
			r.protect(ai.ID)
		}
		if renewal {
			r.log.Debug("relay reservation renewed", "relay", ai.ID, "expires", rsv.Expiration)
		} else {
			r.log.Info("relay reservation made", "relay", ai.ID, "expires", rsv.Expiration.UTC().Format(time.RFC3339),
				"dataLimit", rsv.LimitData, "durationLimit", rsv.LimitDuration)
		}
	}
	r.updateCircuitAddrs()
}

// candidates are the static relays and the bootstrap peers that offer
// the relay service; bootstrap peers are added to relays on first sight.
func (r *reach) candidates() []peer.AddrInfo {
	out := slices.Clone(r.static)
	for _, ai := range r.boot {
		if slices.ContainsFunc(r.static, func(s peer.AddrInfo) bool { return s.ID == ai.ID }) {
			continue
		}
		if ok, _ := r.h.Peerstore().SupportsProtocols(ai.ID, relayproto.ProtoIDv2Hop); len(ok) == 0 {
			continue
		}
		r.mu.Lock()
		if r.relays[ai.ID] == nil {
			r.relays[ai.ID] = &relayState{}
		}
		r.mu.Unlock()
		out = append(out, ai)
	}
	return out
}

// updateCircuitAddrs hands the node's /p2p-circuit addresses (through
// every relay it holds a reservation with) to the host, which advertises
// them in identify and in the DHT while no direct address is confirmed
// dialable.
func (r *reach) updateCircuitAddrs() {
	var addrs []ma.Multiaddr
	r.mu.Lock()
	for id, rs := range r.relays {
		if rs.rsv != nil {
			addrs = append(addrs, circuitAddrs(r.h, id)...)
		}
	}
	slices.SortFunc(addrs, ma.Multiaddr.Compare)
	changed := !slices.EqualFunc(addrs, r.circuit, ma.Multiaddr.Equal)
	r.circuit = addrs
	r.mu.Unlock()
	if !changed {
		return
	}
	_ = r.addrsEmit.Emit(event.EvtAutoRelayAddrsUpdated{RelayAddrs: slices.Clone(addrs)})
	r.log.Info("relay addresses changed", "addrs", addrs)
}

// Relayable reports whether the node holds a reservation, so households
// can dial it through a relay.
func (r *reach) Relayable() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.circuit) > 0
}

// freshReservations counts the reservations made that were not renewals:
// the first with a relay, and every one after a reservation was lost (the
// relay restarted, the connection to it closed, it expired).
func (r *reach) freshReservations() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fresh
}

// circuitAddrs are the node's addresses through relay id: the relay's
// direct addresses (only its public ones when it has any) with
// /p2p/<relay>/p2p-circuit.
func circuitAddrs(h host.Host, id peer.ID) []ma.Multiaddr {
	var direct, public []ma.Multiaddr
	for _, a := range h.Peerstore().Addrs(id) {
		if isCircuit(a) || manet.IsIPUnspecified(a) {
			continue
		}
		direct = append(direct, a)
		if manet.IsPublicAddr(a) {
			public = append(public, a)
		}
	}
	if len(public) > 0 {
		direct = public
	}
	circuit := ma.StringCast("/p2p/" + id.String() + "/p2p-circuit")
	out := make([]ma.Multiaddr, 0, len(direct))
	for _, a := range direct {
		out = append(out, a.Encapsulate(circuit))
	}
	return out
}

// RelayInfo is one relay's state for /api/status.
type RelayInfo struct {
	ID       peer.ID
	Reserved bool
	Expires  time.Time
	Addrs    []ma.Multiaddr
	Err      string
}

// Relays lists the relays the node may use, by ID.
func (r *reach) Relays() []RelayInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]RelayInfo, 0, len(r.relays))
	for id, rs := range r.relays {
		ri := RelayInfo{ID: id, Err: rs.err}
		if rs.rsv != nil {
			ri.Reserved, ri.Expires = true, rs.rsv.Expiration
			ri.Addrs = circuitAddrs(r.h, id)
		}
		out = append(out, ri)
	}
	slices.SortFunc(out, func(a, b RelayInfo) int { return strings.Compare(a.ID.String(), b.ID.String()) })
	return out
}

// Reservations counts the relays the node holds a reservation with.
func (r *reach) Reservations() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, rs := range r.relays {
		if rs.rsv != nil {
			n++
		}
	}
	return n
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

// isCircuit reports whether m goes through a relay.
func isCircuit(m ma.Multiaddr) bool {
	for _, c := range m {
		if c.Protocol().Code == ma.P_CIRCUIT {
			return true
		}
	}
	return false
}

// dhtHost is the host as the DHT sees it: the same host, but the
// reachability events it switches modes on (--dht-mode auto) come from
// reach, which derives them from AutoNAT v2, and not from AutoNAT v1.
type dhtHost struct {
	host.Host
	bus event.Bus
}

func (h dhtHost) EventBus() event.Bus { return h.bus }

// splitBus takes subscriptions to EvtLocalReachabilityChanged from own
// and every other event from the host's bus.
type splitBus struct {
	event.Bus
	own event.Bus
}

func (b splitBus) Subscribe(eventType any, opts ...event.SubscriptionOpt) (event.Subscription, error) {
	types, ok := eventType.([]any)
	if !ok {
		types = []any{eventType}
	}
	var rest []any
	mine := false
	for _, t := range types {
		if _, is := t.(*event.EvtLocalReachabilityChanged); is {
			mine = true
			continue
		}
		rest = append(rest, t)
	}
	if !mine {
		return b.Bus.Subscribe(eventType, opts...)
	}
	own, err := b.own.Subscribe(new(event.EvtLocalReachabilityChanged), opts...)
	if err != nil {
		return nil, err
	}
	if len(rest) == 0 {
		return own, nil
	}
	other, err := b.Bus.Subscribe(rest, opts...)
	if err != nil {
		own.Close()
		return nil, err
	}
	return mergeSubs(own, other), nil
}

// mergedSub delivers the events of several subscriptions on one channel.
type mergedSub struct {
	subs []event.Subscription
	out  chan any
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func mergeSubs(subs ...event.Subscription) *mergedSub {
	m := &mergedSub{subs: subs, out: make(chan any, 16), done: make(chan struct{})}
	for _, s := range subs {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			for {
				select {
				case <-m.done:
					return
				case e, ok := <-s.Out():
					if !ok {
						return
					}
					select {
					case m.out <- e:
					case <-m.done:
						return
					}
				}
			}
		}()
	}
	return m
}

func (m *mergedSub) Out() <-chan any { return m.out }
func (m *mergedSub) Name() string    { return "metamesh dht" }

func (m *mergedSub) Close() error {
	var errs []error
	m.once.Do(func() {
		close(m.done)
		for _, s := range m.subs {
			errs = append(errs, s.Close())
		}
		m.wg.Wait()
		close(m.out)
	})
	return errors.Join(errs...)
}

// relayed reports whether c goes through a relay: a limited connection,
// or one to a /p2p-circuit address.
func Relayed(c network.Conn) bool {
	return c.Stat().Limited || isCircuit(c.RemoteMultiaddr())
}
