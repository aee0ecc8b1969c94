package handoff

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	dht "github.com/libp2p/go-libp2p-kad-dht"
	kb "github.com/libp2p/go-libp2p-kbucket"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/metamesh/node/protocol"
)

// Closest is how many peers hold a key's provider records: kad-dht's
// bucket size and the sweeping provider's replication factor.
const Closest = 20

// A household hands a record over when it is itself among the Closest
// to its key it knew before the change (its own records too: it holds
// them as a provider store does). Every such holder that knows of a
// newcomer sends, not only the few nearest the key: a newcomer those had
// not met yet, or a nearest never handed the record, would break the
// chain from one holder to the next. The receiver keeps one copy.

// among tells whether x is among the Closest to target of peers and x
// (x need not be in peers, and is counted once).
func among(peers []peer.ID, x peer.ID, target kb.ID) bool {
	all := slices.DeleteFunc(slices.Clone(peers), func(p peer.ID) bool { return p == x })
	return slices.Index(kb.SortClosestPeers(append(all, x), target), x) < Closest
}

// Options tune a Service; zero values take the defaults.
type Options struct {
	// Every is how often the routing table is compared with the last
	// one (default 2 s).
	Every time.Duration
	// Logger; default discards.
	Logger *slog.Logger
}

// Service hands the provider records the household holds to the peers
// that become the closest to their keys as the federation changes, and
// takes the records peers hand to it (protocol.HandoffProtocolID).
type Service struct {
	h     host.Host
	d     *dht.IpfsDHT
	held  *Held
	every time.Duration
	log   *slog.Logger

	cancel context.CancelFunc
	wg     sync.WaitGroup

	// sent remembers, for each peer, key and provider handed over, the
	// expiry sent, so a peer that leaves and re-enters the closest (a
	// routing table's churn) is not sent the same record again; a peer
	// that left the routing table is forgotten (it may come back with
	// an empty store). Only the watcher's goroutine uses it.
	sent  map[peer.ID]map[string]time.Time
	nsent int
	// mu orders the watcher's plans with the answers to peers' asks
	// (both read and write sent); answered is when each peer was last
	// answered, asked the peers the household asked (until they leave
	// its routing table; the watcher's only).
	mu       sync.Mutex
	answered map[peer.ID]time.Time
	asked    map[peer.ID]bool

	st Stats
}

// maxSent bounds the sent memory; past it, it starts afresh.
const maxSent = 1 << 20

// Stats are the service's counters since start.
type Stats struct {
	// HandedOver are the records (key and provider) sent to peers,
	// Messages the handoff messages sent.
	HandedOver atomic.Int64
	Messages   atomic.Int64
	// TakenOver are records peers handed to the household that it
	// stored; Refused those it did not (keys it is not among the
	// closest to, or its own records).
	TakenOver atomic.Int64
	Refused   atomic.Int64
	// Asks are the peers asked for records (the ones that entered the
	// household's own closest).
	Asks atomic.Int64
}

// Start runs the service on h (the host) and d (the DHT made on
// Observe(h, held)) until Close.
func Start(h host.Host, d *dht.IpfsDHT, held *Held, o Options) *Service {
	if o.Every <= 0 {
		o.Every = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Service{h: h, d: d, held: held, every: o.Every, log: o.Logger.With("component", "handoff"), cancel: cancel,
		sent: map[peer.ID]map[string]time.Time{}, answered: map[peer.ID]time.Time{}, asked: map[peer.ID]bool{}}
	h.SetStreamHandler(libp2pproto.ID(protocol.HandoffProtocolID), s.take)
	h.SetStreamHandler(libp2pproto.ID(protocol.HandoffAskProtocolID), s.answer)
	s.wg.Add(1)
	go s.watch(ctx)
	return s
}

// Stats returns the service's counters.
func (s *Service) Stats() *Stats { return &s.st }

// Close stops the service.
func (s *Service) Close() {
	s.h.RemoveStreamHandler(libp2pproto.ID(protocol.HandoffProtocolID))
	s.h.RemoveStreamHandler(libp2pproto.ID(protocol.HandoffAskProtocolID))
	s.cancel()
	s.wg.Wait()
}

// watch compares the routing table every s.every with the one before and
// hands records over for what changed.
func (s *Service) watch(ctx context.Context) {
	defer s.wg.Done()
	t := time.NewTimer(s.every)
	defer t.Stop()
	prev := map[peer.ID]bool{}
	for _, p := range s.d.RoutingTable().ListPeers() {
		prev[p] = true
	}
	wait := s.every
	for {
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		wait = s.every
		cur := s.d.RoutingTable().ListPeers()
		now := make(map[peer.ID]bool, len(cur))
		var added, removed []peer.ID
		for _, p := range cur {
			now[p] = true
			if !prev[p] {
				added = append(added, p)
			}
		}
		for p := range prev {
			if !now[p] {
				removed = append(removed, p)
			}
		}
		prev = now
		if len(added)+len(removed) == 0 {
			continue
		}
		s.askNearest(ctx, added, removed)
		start := time.Now()
		s.mu.Lock()
		plan := s.plan(added, removed, start)
		s.mu.Unlock()
		// Planning goes over every record held: a household that holds
		// many and sees its table change often spends at most a tenth of
		// a core on it (changes meanwhile are taken together next time).
		wait = max(s.every, 9*time.Since(start))
		s.send(ctx, plan)
	}
}

// plan decides, for every record held, which peers it goes to: the peers
// that are among the Closest to its key now (in the routing table) and
// were not before the change (added peers, and peers that moved up
// because removed ones left), when the household is among the Closest
// it knew before.
func (s *Service) plan(added, removed []peer.ID, now time.Time) map[peer.ID][]protocol.HandoffRecord {
	self := s.h.ID()
	rt := s.d.RoutingTable()
	isAdded := make(map[peer.ID]bool, len(added))
	for _, p := range added {
		isAdded[p] = true
	}
	out := map[peer.ID][]protocol.HandoffRecord{}
	for _, p := range removed {
		s.nsent -= len(s.sent[p])
		delete(s.sent, p)
	}
	for to, m := range s.sent {
		for k, exp := range m {
			if !exp.After(now) {
				delete(m, k)
				s.nsent--
			}
		}
		if len(m) == 0 {
			delete(s.sent, to)
		}
	}
	if s.nsent > maxSent {
		s.sent, s.nsent = map[peer.ID]map[string]time.Time{}, 0
	}
	for _, e := range s.held.snapshot(now) {
		target := kb.ConvertKey(string(e.key))
		after := rt.NearestPeers(target, Closest)
		if !touches(after, isAdded, removed, string(e.key)) {
			continue // the change is farther from the key than its closest
		}
		// The closest before the change: the table then was this one
		// without the added peers and with the removed ones.
		var before []peer.ID
		for _, p := range rt.NearestPeers(target, Closest+len(added)) {
			if !isAdded[p] {
				before = append(before, p)
			}
		}
		before = append(before, removed...)
		before = kb.SortClosestPeers(before, target)
		before = before[:min(len(before), Closest)]
		var entering []peer.ID
		for _, p := range after {
			if p != self && !slices.Contains(before, p) {
				entering = append(entering, p)
			}
		}
		if len(entering) == 0 {
			continue
		}
		// Only the households nearest the key send: they know its
		// neighbourhood. A provider far from its key (most are) would
		// see peers "enter" a sparse corner of its table that are not
		// among the closest at all.
		if !among(before, self, target) {
			continue
		}
		for _, to := range entering {
			if rec, ok := s.record(e, to, now); ok {
				out[to] = append(out[to], rec)
			}
		}
	}
	return out
}

// addrs are the addresses to hand over with p's record: its own when p
// is the household, else the ones the peerstore keeps for it.
func (s *Service) addrs(p peer.ID) []ma.Multiaddr {
	var as []ma.Multiaddr
	if p == s.h.ID() {
		as = s.h.Addrs()
	} else {
		as = s.h.Peerstore().Addrs(p)
	}
	out := make([]ma.Multiaddr, 0, min(len(as), protocol.MaxHandoffAddrs))
	for _, a := range as {
		if len(out) < protocol.MaxHandoffAddrs && len(a.Bytes()) <= protocol.MaxHandoffAddrLen {
			out = append(out, a)
		}
	}
	return out
}

// sendTimeout bounds one handoff to one peer.
const sendTimeout = 30 * time.Second

// send hands the planned records to their peers, four peers at a time.
func (s *Service) send(ctx context.Context, plan map[peer.ID][]protocol.HandoffRecord) {
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for to, recs := range plan {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := s.sendTo(ctx, to, recs); err != nil {
				s.log.Debug("handoff: cannot hand records over", "peer", to, "records", len(recs), "err", err)
			}
		}()
	}
	wg.Wait()
}

// perMessage keeps a message under the protocol's caps: at most
// MaxHandoffRecords keys, and about 1 KiB a key at the most (20
// providers of 8 addresses would be more; such keys are rare and the
// writer refuses a message over the cap, which is then sent in halves).
const perMessage = 512

func (s *Service) sendTo(ctx context.Context, to peer.ID, recs []protocol.HandoffRecord) error {
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	st, err := s.h.NewStream(ctx, to, libp2pproto.ID(protocol.HandoffProtocolID))
	if err != nil {
		return err
	}
	_ = st.SetDeadline(time.Now().Add(sendTimeout))
	if err := s.write(st, recs); err != nil {
		st.Reset()
		return err
	}
	return st.Close()
}

// write writes recs on st in messages under the protocol's caps (at most
// MaxHandoffMessages of them; what does not fit waits for a next
// change).
func (s *Service) write(st network.Stream, recs []protocol.HandoffRecord) error {
	sent := 0
	var err error
	for len(recs) > 0 && sent < protocol.MaxHandoffMessages {
		n := min(len(recs), perMessage)
		for {
			err = protocol.WriteHandoff(st, recs[:n])
			if errors.Is(err, protocol.ErrTooLarge) && n > 1 {
				n /= 2
				continue
			}
			break
		}
		if err != nil {
			return err
		}
		sent++
		s.st.Messages.Add(1)
		for _, r := range recs[:n] {
			s.st.HandedOver.Add(int64(len(r.Providers)))
		}
		recs = recs[n:]
	}
	return nil
}

// takeTimeout bounds one inbound handoff stream.
const takeTimeout = time.Minute

// take stores the records a peer hands over for the keys the household
// is among the Closest to (in its own routing table's view), each with
// the expiry it came with, at most the DHT's validity away.
func (s *Service) take(st network.Stream) {
	_ = st.SetDeadline(time.Now().Add(takeTimeout))
	if s.receive(st) {
		_ = st.Close()
	}
}

// receive reads handoff messages from st until it ends and stores their
// records (take's rules). A stream that breaks the protocol is reset and
// receive returns false.
func (s *Service) receive(st network.Stream) bool {
	from := st.Conn().RemotePeer()
	self := s.h.ID()
	ctx, cancel := context.WithTimeout(context.Background(), takeTimeout)
	defer cancel()
	for range protocol.MaxHandoffMessages {
		recs, err := protocol.ReadHandoff(st)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.log.Debug("handoff: dropped a peer's stream", "peer", from, "err", err)
			st.Reset()
			return false
		}
		now := time.Now()
		for _, r := range recs {
			if !s.closest(r.Key) {
				s.st.Refused.Add(int64(len(r.Providers)))
				continue
			}
			for _, p := range r.Providers {
				if p.ID == self {
					s.st.Refused.Add(1)
					continue
				}
				exp := now.Add(min(time.Duration(p.TTL)*time.Second, s.held.validity))
				if !s.held.Add(r.Key, p.ID, exp) {
					continue
				}
				if err := s.d.ProviderStore().AddProvider(ctx, r.Key, peer.AddrInfo{ID: p.ID, Addrs: p.Addrs}); err != nil {
					s.log.Debug("handoff: cannot store a record", "err", err)
					continue
				}
				s.st.TakenOver.Add(1)
			}
		}
	}
	return true
}

// closest tells whether the household is among the Closest peers to key
// it knows of (itself included).
func (s *Service) closest(key []byte) bool {
	target := kb.ConvertKey(string(key))
	return among(s.d.RoutingTable().NearestPeers(target, Closest), s.h.ID(), target)
}

// touches tells whether a change can have moved the closest to key:
// a peer added is among them now (after), or a peer removed was closer
// than the farthest of them (so it was among them before).
func touches(after []peer.ID, added map[peer.ID]bool, removed []peer.ID, key string) bool {
	for _, p := range after {
		if added[p] {
			return true
		}
	}
	if len(removed) == 0 {
		return false
	}
	if len(after) < Closest {
		return true
	}
	for _, r := range removed {
		if kb.Closer(r, after[len(after)-1], key) {
			return true
		}
	}
	return false
}

// askNearest asks the peers that entered the household's own Closest
// (by its peer ID) for the records it should hold, once each until they
// leave its routing table. The keys a household should hold are near
// it, and so are their holders: a holder whose table is full where the
// household is may never meet it, but the household meets its nearest
// peers at once (its DHT's first walk is for itself).
func (s *Service) askNearest(ctx context.Context, added, removed []peer.ID) {
	for _, p := range removed {
		delete(s.asked, p)
	}
	if len(added) == 0 {
		return
	}
	self := s.h.ID()
	near := s.d.RoutingTable().NearestPeers(kb.ConvertPeerID(self), Closest)
	for _, p := range added {
		if s.asked[p] || !slices.Contains(near, p) {
			continue
		}
		s.asked[p] = true
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.ask(ctx, p); err != nil {
				s.log.Debug("handoff: cannot ask a peer for records", "peer", p, "err", err)
			}
		}()
	}
}

// ask asks p for the records the household should hold, and stores what
// it answers (take's rules).
func (s *Service) ask(ctx context.Context, p peer.ID) error {
	ctx, cancel := context.WithTimeout(ctx, takeTimeout)
	defer cancel()
	st, err := s.h.NewStream(ctx, p, libp2pproto.ID(protocol.HandoffAskProtocolID))
	if err != nil {
		return err
	}
	_ = st.SetDeadline(time.Now().Add(takeTimeout))
	s.st.Asks.Add(1)
	if err := st.CloseWrite(); err != nil {
		st.Reset()
		return err
	}
	if s.receive(st) {
		return st.Close()
	}
	return errors.New("the answer broke the protocol")
}

// answerEvery: a peer's asks are answered at most this often.
const answerEvery = 30 * time.Second

// answer hands the asker the records it should hold: those it would be
// among the Closest to (this household's routing table, with the asker
// in it), when this household is among the Closest it knows without the
// asker. The asker writes nothing.
func (s *Service) answer(st network.Stream) {
	from := st.Conn().RemotePeer()
	now := time.Now()
	s.mu.Lock()
	if last, ok := s.answered[from]; ok && now.Sub(last) < answerEvery {
		s.mu.Unlock()
		st.Reset()
		return
	}
	if len(s.answered) > maxSent/64 {
		clear(s.answered)
	}
	s.answered[from] = now
	recs := s.planFor(from, now)
	s.mu.Unlock()
	_ = st.SetDeadline(time.Now().Add(sendTimeout))
	if err := s.write(st, recs); err != nil {
		s.log.Debug("handoff: cannot answer a peer's ask", "peer", from, "err", err)
		st.Reset()
		return
	}
	_ = st.Close()
}

// planFor is plan for one peer that asked: the records it would be among
// the Closest to if this household's table held it. s.mu is held.
func (s *Service) planFor(to peer.ID, now time.Time) []protocol.HandoffRecord {
	self := s.h.ID()
	rt := s.d.RoutingTable()
	var out []protocol.HandoffRecord
	for _, e := range s.held.snapshot(now) {
		target := kb.ConvertKey(string(e.key))
		var known []peer.ID
		for _, p := range rt.NearestPeers(target, Closest+1) {
			if p != to {
				known = append(known, p)
			}
		}
		known = known[:min(len(known), Closest)]
		if !among(known, to, target) || !among(known, self, target) {
			continue // the asker would not be among the closest, or this household is not
		}
		if rec, ok := s.record(e, to, now); ok {
			out = append(out, rec)
		}
	}
	return out
}

// record is e as handed to peer to: its providers but to itself, each
// not sent to it before with this expiry (noted as sent now). s.mu is
// held.
func (s *Service) record(e entry, to peer.ID, now time.Time) (protocol.HandoffRecord, bool) {
	rec := protocol.HandoffRecord{Key: e.key}
	for _, p := range e.provs {
		if p.id == to || len(rec.Providers) == protocol.MaxHandoffProviders {
			continue
		}
		ttl := int64(p.exp.Sub(now) / time.Second)
		if ttl < 1 {
			continue
		}
		memo := string(e.key) + "\x00" + string(p.id)
		was, had := s.sent[to][memo]
		if had && !was.Before(p.exp) {
			continue // sent before, with this expiry
		}
		if s.sent[to] == nil {
			s.sent[to] = map[string]time.Time{}
		}
		if !had {
			s.nsent++
		}
		s.sent[to][memo] = p.exp
		rec.Providers = append(rec.Providers, protocol.HandoffProvider{
			ID: p.id, Addrs: s.addrs(p.id), TTL: min(ttl, protocol.MaxHandoffTTL)})
	}
	return rec, len(rec.Providers) > 0
}
