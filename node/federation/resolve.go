package federation

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// Lookup tuning.
const (
	// lookupFanout bounds the peers asked at once for one CID.
	lookupFanout = 8
	// negativeTTL is how long a CID no peer had answers 404 at once: long
	// enough to spare the network a burst of retries, short enough that a
	// file a peer is still ingesting shows up soon.
	negativeTTL = 5 * time.Second
	// maxProviders bounds the DHT providers a lookup collects.
	maxProviders = 20
	// maxRemembered bounds the misses and answering peers kept in memory.
	maxRemembered = 10_000
	// fanoutHold is the longest a record from a peer the DHT does not
	// name as a provider waits for the walk to end (and a provider's
	// record to come) before it is taken.
	fanoutHold = 3 * time.Second
)

// resolver answers GET /api/meta/<cid>: the local store first, then the
// federation — the DHT's providers of the CID (only a canonical CID has
// provider records) and a bounded fan-out to connected and routing-table
// peers (which finds the other CIDs of a file) — then verify, merge into
// the store, answer. What peers sent stays in the store as a root known
// only from peers, so the next lookup is a local read.
type resolver struct {
	st      *store.Store
	p       *p2p.Net
	rs      *recordService
	timeout time.Duration
	log     *slog.Logger
	// scores: a peer whose record its bytes disproved is not believed
	// (shared with search).
	scores *scores
	// refreshAfter is Config.PeerRecordTTL: how old a record of a file
	// known only from peers may get before a lookup asks again.
	refreshAfter time.Duration

	mu       sync.Mutex
	negative map[string]time.Time // CID → until
	sources  map[string]source    // canonical CID → who answered
	inflight map[string]*call
}

// source is who answered for a file and who else has it.
type source struct {
	peer      peer.ID
	providers []string
}

type call struct {
	done chan struct{}
	doc  api.Document
	err  error
}

func newResolver(st *store.Store, p *p2p.Net, rs *recordService, timeout time.Duration, log *slog.Logger) *resolver {
	return &resolver{st: st, p: p, rs: rs, timeout: timeout, log: log.With("component", "resolve"), scores: newScores(),
		negative: map[string]time.Time{}, sources: map[string]source{}, inflight: map[string]*call{}}
}

// Meta answers for c (canonical form): a local file, a file peers sent
// before, or, unless local, the federation, as far as from may make the
// node ask its peers.
func (r *resolver) Meta(ctx context.Context, c string, local bool, from api.Caller) (api.Document, error) {
	doc, stale, err := r.fromStore(ctx, c)
	if err == nil && stale != "" && !local && r.p != nil {
		// What peers said is a cache: past PeerRecordTTL the peers are
		// asked again, and their fresh record replaces it. Without an
		// answer (a stranger past its limit included), the old one is
		// still better than none.
		if fresh, ferr := r.lookup(ctx, c, stale, from); ferr == nil {
			return fresh, nil
		}
		return doc, nil
	}
	if err == nil || local || !errors.Is(err, api.ErrNotFound) || r.p == nil {
		return doc, err
	}
	return r.lookup(ctx, c, "", from)
}

// lookup runs (or joins) the federated lookup of c; replace, when set, is
// a stale root known only from peers that a fresh answer replaces. Only
// starting one costs from a token: a miss remembered or a lookup in
// flight asks no peer for this request.
func (r *resolver) lookup(ctx context.Context, c string, replace store.RootID, from api.Caller) (api.Document, error) {
	r.mu.Lock()
	if until, ok := r.negative[c]; ok && time.Now().Before(until) {
		r.mu.Unlock()
		return api.Document{}, fmt.Errorf("%w: no file with CID %s here or on the peers asked (cached for %s)", api.ErrNotFound, c, negativeTTL)
	}
	cl, ok := r.inflight[c]
	if !ok {
		if err := from.Federate(api.FederatedLookup); err != nil {
			r.mu.Unlock()
			return api.Document{}, err
		}
		cl = &call{done: make(chan struct{})}
		r.inflight[c] = cl
		go func() {
			cl.doc, cl.err = r.federated(c, replace)
			r.mu.Lock()
			delete(r.inflight, c)
			if errors.Is(cl.err, api.ErrNotFound) {
				if len(r.negative) >= maxRemembered {
					now := time.Now()
					for k, until := range r.negative {
						if now.After(until) {
							delete(r.negative, k)
						}
					}
				}
				if len(r.negative) < maxRemembered {
					r.negative[c] = time.Now().Add(negativeTTL)
				}
			}
			r.mu.Unlock()
			close(cl.done)
		}()
	}
	r.mu.Unlock()
	select {
	case <-cl.done:
		return cl.doc, cl.err
	case <-ctx.Done():
		return api.Document{}, ctx.Err()
	}
}

// fromStore reads c's document (present). stale is the root of a file
// known only from peers whose record is older than refreshAfter.
func (r *resolver) fromStore(ctx context.Context, c string) (api.Document, store.RootID, error) {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	doc, err := r.st.DocumentByCID(ctx, c)
	if err != nil {
		return api.Document{}, "", APIError(err, c)
	}
	var stale store.RootID
	if !doc.Local() && r.refreshAfter > 0 {
		if at, err := r.st.PeerRootTouched(ctx, doc.Root); err == nil && !at.IsZero() && time.Since(at) > r.refreshAfter {
			stale = doc.Root
		}
	}
	return r.present(doc, c), stale, nil
}

// present is the answer for c of the store's document doc: source
// "local" for a local file, with this node and then the peers whose
// records of it it merged as providers; for a file known only from peers,
// the peer that answered the lookup and the providers it found, or else
// the peers that sent it.
func (r *resolver) present(doc store.Document, c string) api.Document {
	if doc.Local() {
		var providers []string
		if r.p != nil {
			if ps, ok := doc.Learned[c]; ok {
				// Only peers vouch for c: this node answers peers' requests
				// for it with nothing, those peers answer.
				providers = append([]string{}, ps...)
			} else {
				providers = append([]string{r.p.Host().ID().String()}, doc.Peers...)
			}
		}
		a := newDocument(doc, "local", providers)
		// A local file's answer depends on nothing but the document and
		// c: a cached document keeps its encoded answer (store.Memo), and
		// only that, until the document changes; GET /api/meta answers
		// it as it is (backend.CachedAnswer). The typed Document is built
		// again for the rarer readers: kept for 100,000 files it was most
		// of the Go heap the garbage collector went through.
		if m := doc.Memo(); m != nil && m.Load() == nil && a.Encode() == nil {
			m.Store(bytes.Clone(a.Encoded()))
		}
		return a
	}
	r.mu.Lock()
	src, ok := r.sources[doc.CanonicalCID()]
	r.mu.Unlock()
	source, providers := "", []string{}
	if ok {
		source, providers = src.peer.String(), append(providers, src.providers...)
	} else if len(doc.Peers) > 0 {
		source, providers = doc.Peers[0], append(providers, doc.Peers...)
	}
	return newDocument(doc, source, providers)
}

// federated asks the network for c within the lookup timeout.
func (r *resolver) federated(c string, replace store.RootID) (api.Document, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	id, err := cid.Decode(c)
	if err != nil {
		return api.Document{}, fmt.Errorf("%w: %v", api.ErrBadRequest, err)
	}
	self := r.p.Host().ID()
	type answer struct {
		from peer.ID
		rec  protocol.Record
	}
	var provMu sync.Mutex
	var providers []string      // as the answer names them
	named := map[peer.ID]bool{} // the same, for the checks
	isProvider := func(p peer.ID) bool {
		provMu.Lock()
		defer provMu.Unlock()
		return named[p]
	}
	answers := make(chan answer, lookupFanout)
	var askers sync.WaitGroup
	asked := map[peer.ID]bool{}
	settled := map[peer.ID]bool{} // asked, and its answer (if any) sent on answers
	var askedMu sync.Mutex
	var cut atomic.Int64 // answers a relay broke off
	// changed says that a peer was settled or named a provider.
	changed := make(chan struct{}, 1)
	poke := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	settle := func(p peer.ID) {
		askedMu.Lock()
		settled[p] = true
		askedMu.Unlock()
		poke()
	}
	// ask asks p for c's record, unless it was asked already; true when
	// it answered with one.
	ask := func(p peer.ID) bool {
		askedMu.Lock()
		dup := asked[p]
		asked[p] = true
		askedMu.Unlock()
		if dup {
			return false
		}
		defer settle(p)
		if r.scores.distrusted(p) {
			// Its bytes disproved a record it signed: not believed.
			r.log.Debug("not asking a peer whose record its bytes disproved", "peer", p, "cid", c)
			return false
		}
		rec, err := r.rs.fetch(ctx, p, c)
		if err != nil {
			switch {
			case errors.Is(err, errRelayCut) && ctx.Err() == nil:
				cut.Add(1)
				r.log.Info("a peer's record did not come through its relay", "peer", p, "cid", c, "err", err)
			case !errors.Is(err, errNoRecord) && ctx.Err() == nil:
				r.log.Debug("peer gave no usable record", "peer", p, "cid", c, "err", err)
			}
			return false
		}
		select {
		case answers <- answer{p, rec}:
		case <-ctx.Done():
		}
		return true
	}

	// The DHT's providers of the CID are asked the moment the walk names
	// them, each at once (at most maxProviders): they hold the file, and
	// the fan-out's peers most likely do not, so none of them waits
	// behind the fan-out.
	walked := make(chan struct{})
	askers.Add(1)
	go func() {
		defer askers.Done()
		defer close(walked)
		for ai := range r.p.DHT().FindProvidersAsync(ctx, id, maxProviders) {
			if ai.ID == self {
				continue
			}
			r.p.Host().Peerstore().AddAddrs(ai.ID, ai.Addrs, time.Minute)
			provMu.Lock()
			providers = append(providers, ai.ID.String())
			named[ai.ID] = true
			provMu.Unlock()
			poke() // a held answer may be this provider's
			askers.Add(1)
			go func() {
				defer askers.Done()
				ask(ai.ID)
			}()
		}
	}()
	// The fan-out, lookupFanout peers at once: connected peers, then the
	// routing table (it finds a file by its other CIDs, which have no
	// provider records). A worker stops at its first answer.
	cands := make(chan peer.ID, 64)
	askers.Add(1)
	go func() {
		defer askers.Done()
		defer close(cands)
		// In an order no peer can choose, those that hung or lied last.
		for _, p := range append(r.scores.order(r.p.Host().Network().Peers()), r.scores.order(r.p.DHT().RoutingTable().ListPeers())...) {
			if p == self {
				continue
			}
			select {
			case cands <- p:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range lookupFanout {
		askers.Add(1)
		go func() {
			defer askers.Done()
			for p := range cands {
				if ask(p) {
					return
				}
			}
		}()
	}
	go func() { askers.Wait(); close(answers) }()

	// A record from a household the DHT names as holding the file is
	// taken at once. One from a fan-out peer (unsolicited: any connected
	// peer may answer for any CID, and a hostile one answers first) is
	// held until the walk is over and every provider it named has
	// answered or failed, or fanoutHold has passed, so a holder's record
	// outranks the fastest answer.
	providersSettled := func() bool {
		provMu.Lock()
		ps := slices.Collect(maps.Keys(named))
		provMu.Unlock()
		askedMu.Lock()
		defer askedMu.Unlock()
		for _, p := range ps {
			if !settled[p] {
				return false
			}
		}
		return true
	}
	var held []answer
	var hold <-chan time.Time
	walkOver, expired := false, false
	next := func() (answer, bool) {
		for {
			if len(held) > 0 {
				released := expired || (walkOver && providersSettled())
				if released {
					// What a settled provider sent is on answers by now.
					for drained := false; !drained; {
						select {
						case a, ok := <-answers:
							if ok {
								held = append(held, a)
							} else {
								drained = true
							}
						default:
							drained = true
						}
					}
				}
				for i, a := range held {
					if isProvider(a.from) {
						held = slices.Delete(held, i, i+1)
						return a, true
					}
				}
				if released {
					a := held[0]
					held = held[1:]
					return a, true
				}
			}
			select {
			case a, ok := <-answers:
				if !ok {
					if len(held) == 0 {
						return answer{}, false
					}
					expired = true
					continue
				}
				if isProvider(a.from) || expired || (walkOver && providersSettled()) {
					return a, true
				}
				held = append(held, a)
				if hold == nil {
					hold = time.After(fanoutHold)
				}
			case <-changed:
			case <-walked:
				walkOver, walked = true, nil
			case <-hold:
				expired, hold = true, nil
			}
		}
	}
	refused := 0 // answers whose records link local files of different content
	for {
		a, ok := next()
		if !ok {
			break
		}
		if replace != "" {
			// The stale record goes; the fresh one takes its place.
			if err := r.st.DeleteRoot(ctx, replace); err != nil && !errors.Is(err, store.ErrNotFound) {
				r.log.Warn("cannot drop a stale peer record", "cid", c, "err", err)
			}
			replace = ""
		}
		res, err := r.st.MergeRecord(ctx, a.from.String(), a.rec.CIDs, a.rec.Meta)
		if err != nil {
			r.log.Warn("cannot merge a peer's record", "peer", a.from, "cid", c, "err", err)
			continue
		}
		if res.Conflict {
			refused++
			continue
		}
		provMu.Lock()
		provs := append([]string{}, providers...)
		provMu.Unlock()
		if !contains(provs, a.from.String()) {
			provs = append(provs, a.from.String())
		}
		sort.Strings(provs)
		r.mu.Lock()
		if len(r.sources) >= maxRemembered {
			clear(r.sources) // a cache: the store still has the files
		}
		r.sources[a.rec.CID] = source{peer: a.from, providers: provs}
		r.mu.Unlock()
		cancel() // the others may stop
		doc, _, err := r.fromStore(context.Background(), c)
		return doc, err
	}
	askedMu.Lock()
	n := len(asked)
	askedMu.Unlock()
	why := ""
	if refused > 0 {
		why = fmt.Sprintf(" (%d answered with a record this node refused: it pairs files held here whose bytes differ)", refused)
	}
	if n := cut.Load(); n > 0 {
		why += fmt.Sprintf(" (%d answered over a relay that cut the record off: a relayed connection carries at most 128 KiB each way; it comes through once the connection is direct)", n)
	}
	err = fmt.Errorf("%w: no file with CID %s here or on the %d peers asked%s", api.ErrNotFound, c, n, why)
	if ctx.Err() != nil && why == "" {
		err = fmt.Errorf("%w: no file with CID %s here, and none of the %d peers asked had it within %s", api.ErrNotFound, c, n, r.timeout)
	}
	provMu.Lock()
	found := len(providers)
	provMu.Unlock()
	// One line per miss (a miss is remembered for a few seconds): a
	// household whose relay is down sees its relayed lookups fail here.
	r.log.Info("lookup: no peer answered with the file", "cid", c, "asked", n, "providers", found, "err", err)
	return api.Document{}, err
}

// Providers lists the peers the DHT returns for c.
func (r *resolver) Providers(ctx context.Context, c string) ([]string, error) {
	if r.p == nil {
		return []string{}, nil
	}
	id, err := cid.Decode(c)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", api.ErrBadRequest, err)
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	out := []string{}
	for ai := range r.p.DHT().FindProvidersAsync(ctx, id, maxProviders) {
		out = append(out, ai.ID.String())
	}
	sort.Strings(out)
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
