package federation

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/node/p2p"
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
// only from peers, so the next lookup is a local read. The lookup itself
// (one lookupRun per CID in flight) is in resolve_lookup.go, the choice of
// its answer in resolve_choice.go; it reaches the network only through
// net (resolve_net.go).
type resolver struct {
	st *store.Store
	// net is the network a lookup asks (dhtNet: the household's host,
	// DHT and record protocol); nil: no network, the store only.
	net lookupNet
	// dht is the walk /api/providers lists (kad-dht's); nil when net is.
	dht providerFinder
	// timeout bounds a federated lookup (Config.LookupTimeout).
	timeout time.Duration
	// holdFor is how long a fan-out peer's record may wait for the
	// providers' (fanoutHold; a test sets it so that only the rule it
	// checks decides).
	holdFor time.Duration
	log     *slog.Logger
	// scores: a peer whose record its bytes disproved is not believed
	// (shared with search).
	scores *scores
	// refreshAfter is Config.PeerRecordTTL: how old a record of a file
	// known only from peers may get before a lookup asks again.
	refreshAfter time.Duration
	// names are the peers' household names an answer shows (nil: none).
	names *peerNames

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

// call is one federated lookup in flight, shared by the requests that
// asked for its CID meanwhile.
type call struct {
	done chan struct{}
	doc  model.Document
	err  error
}

// newResolver is the resolver of a household on p (its host and DHT),
// asking peers on rs; p nil: the store only.
func newResolver(st *store.Store, p *p2p.Net, rs *recordService, timeout time.Duration, log *slog.Logger) *resolver {
	r := &resolver{st: st, timeout: timeout, holdFor: fanoutHold, log: log.With("component", "resolve"), scores: newScores(),
		negative: map[string]time.Time{}, sources: map[string]source{}, inflight: map[string]*call{}}
	if p != nil {
		r.net, r.dht = dhtNet{p: p, rs: rs}, p.DHT()
	}
	return r
}

// Meta answers for c (canonical form): a local file, a file peers sent
// before, or, unless local, the federation, as far as allow lets the
// node ask its peers.
func (r *resolver) Meta(ctx context.Context, c string, local bool, allow func() error) (model.Document, error) {
	doc, stale, err := r.fromStore(ctx, c)
	if err == nil && stale != "" && !local && r.net != nil {
		// What peers said is a cache: past PeerRecordTTL the peers are
		// asked again, and their fresh record replaces it. Without an
		// answer (a stranger past its limit included), the old one is
		// still better than none.
		if fresh, ferr := r.lookup(ctx, c, stale, allow); ferr == nil {
			return fresh, nil
		}
		return doc, nil
	}
	if err == nil || local || !errors.Is(err, model.ErrNotFound) || r.net == nil {
		return doc, err
	}
	return r.lookup(ctx, c, "", allow)
}

// lookup runs (or joins) the federated lookup of c; replace, when set, is
// a stale root known only from peers that a fresh answer replaces. Only
// starting one asks allow: a miss remembered or a lookup in flight asks
// no peer for this request.
func (r *resolver) lookup(ctx context.Context, c string, replace store.RootID, allow func() error) (model.Document, error) {
	cl, err := r.join(c, replace, allow)
	if err != nil {
		return model.Document{}, err
	}
	select {
	case <-cl.done:
		return cl.doc, cl.err
	case <-ctx.Done():
		return model.Document{}, ctx.Err()
	}
}

// join is the lookup of c in flight, or a new one once allow lets it
// start; a miss remembered is model.ErrNotFound at once.
func (r *resolver) join(c string, replace store.RootID, allow func() error) (*call, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if until, ok := r.negative[c]; ok && time.Now().Before(until) {
		return nil, fmt.Errorf("%w: no file with CID %s here or on the peers asked (cached for %s)", model.ErrNotFound, c, negativeTTL)
	}
	if cl, ok := r.inflight[c]; ok {
		return cl, nil
	}
	if err := permit(allow); err != nil {
		return nil, err
	}
	cl := &call{done: make(chan struct{})}
	r.inflight[c] = cl
	go r.run(cl, c, replace)
	return cl, nil
}

// run runs the lookup of c for the requests waiting on cl, and remembers
// a miss.
func (r *resolver) run(cl *call, c string, replace store.RootID) {
	cl.doc, cl.err = r.federated(c, replace)
	r.mu.Lock()
	delete(r.inflight, c)
	if errors.Is(cl.err, model.ErrNotFound) {
		r.rememberMiss(c)
	}
	r.mu.Unlock()
	close(cl.done)
}

// rememberMiss answers c with a 404 for negativeTTL, while fewer than
// maxRemembered misses are (those past their time go first). r.mu is
// held.
func (r *resolver) rememberMiss(c string) {
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

// rememberSource keeps who answered for the file of canonical CID c, for
// its answers from the store (a cache: the store still has the files).
func (r *resolver) rememberSource(c string, src source) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.sources) >= maxRemembered {
		clear(r.sources)
	}
	r.sources[c] = src
}

// fromStore reads c's document (present). stale is the root of a file
// known only from peers whose record is older than refreshAfter.
func (r *resolver) fromStore(ctx context.Context, c string) (model.Document, store.RootID, error) {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	doc, err := r.st.DocumentByCID(ctx, c)
	if err != nil {
		return model.Document{}, "", APIError(err, c)
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
func (r *resolver) present(doc store.Document, c string) model.Document {
	if doc.Local() {
		var providers []string
		if r.net != nil {
			if ps, ok := doc.Learned[c]; ok {
				// Only peers vouch for c: this node answers peers' requests
				// for it with nothing, those peers answer.
				providers = append([]string{}, ps...)
			} else {
				providers = append([]string{r.net.self().String()}, doc.Peers...)
			}
		}
		a := newDocument(doc, "local", providers)
		a.PeerNames = r.names.ofDocument(a)
		// A local file's answer depends on nothing but the document and
		// c: a cached document keeps its encoded answer (store.Memo), and
		// only that, until the document changes; GET /api/meta answers
		// it as it is (backend.CachedAnswer), with the peers' names as
		// they were when it was encoded. The typed Document is built
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
	a := newDocument(doc, source, providers)
	a.PeerNames = r.names.ofDocument(a)
	return a
}

// Providers lists the peers the DHT returns for c.
func (r *resolver) Providers(ctx context.Context, c string) ([]string, error) {
	if r.dht == nil {
		return []string{}, nil
	}
	id, err := cid.Decode(c)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", model.ErrBadRequest, err)
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	out := []string{}
	for ai := range r.dht.FindProvidersAsync(ctx, id, maxProviders) {
		out = append(out, ai.ID.String())
	}
	sort.Strings(out)
	return out, nil
}
