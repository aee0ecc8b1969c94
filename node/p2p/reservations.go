package p2p

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/client"
	relayproto "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/proto"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

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
