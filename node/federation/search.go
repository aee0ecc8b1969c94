package federation

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/node/search"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// searchProtocolIDs are the search protocol's versions, newest first, as
// NewStream takes them.
var searchProtocolIDs = func() []libp2pproto.ID {
	out := make([]libp2pproto.ID, len(protocol.SearchProtocols))
	for i, v := range protocol.SearchProtocols {
		out[i] = libp2pproto.ID(v)
	}
	return out
}()

// Limits of federated search.
const (
	// searchStreamTimeout bounds one inbound search exchange.
	searchStreamTimeout = 5 * time.Second
	// searchFanOutTimeout bounds a federated search's wait for peers.
	searchFanOutTimeout = 3 * time.Second
	// searchFanOutPeers bounds the peers one federated search asks, and
	// searchFanOutParallel how many at once.
	searchFanOutPeers    = 32
	searchFanOutParallel = 8
	// searchIndexHouseholds bounds the households one federated search
	// asks because the DHT's keyword index names them (beside the
	// connected peers), searchIndexParallel how many of them at once.
	searchIndexHouseholds = 64
	searchIndexParallel   = 8
	// searchIndexProviders is the most providers one word's lookup takes:
	// a word with more is "long" and stops being asked for more.
	searchIndexProviders = 256
	// searchPeerTimeout is how long a federated search waits for one
	// household's answer on a connection it has (direct or relayed)
	// before it gives that place to the next household; one it has to
	// dial first gets searchDialTimeout more (a dial through a relay
	// takes a few round trips). An answer is one round trip and one read
	// of the household's store: tens of milliseconds nearby, a few
	// hundred over a relay across the world; 1 s is several times that.
	// A peer that hangs holds one of the 8 places for a third of the 3 s
	// budget, so the connected peers' places reach at least 24 peers
	// however many hang, and the index's at least 12 households that
	// must be dialled.
	searchPeerTimeout = time.Second
	searchDialTimeout = time.Second
)

// searchService answers /metamesh/search/1.2.0, 1.1.0 and 1.0.0 with
// local files only (and, in 1.2.0, the household's name), and asks the
// connected peers and the households the DHT's keyword index names
// (keywords.go), 1.2.0 first.
type searchService struct {
	peerService
	providers providerFinder
	text      *search.TextIndex
	// scores order the peers a federated search asks, and it marks
	// those that hang, fail or lie (shared with the resolver).
	scores *scores
	// peerTimeout and dialTimeout are searchPeerTimeout and
	// searchDialTimeout (a test shortens them).
	peerTimeout, dialTimeout time.Duration
	// awaiting, when set (by a test), is called when a federated search
	// has asked every household and waits only for the index's late ones.
	awaiting func()
}

// providerFinder finds a key's providers on the DHT (kad-dht's).
type providerFinder interface {
	FindProvidersAsync(ctx context.Context, key cid.Cid, count int) <-chan peer.AddrInfo
}

// newSearchService answers on h; name is the household's (checked by
// protocol.CheckName), "" for none.
func newSearchService(h host.Host, d providerFinder, st *store.Store, text *search.TextIndex, key crypto.PrivKey, name string, log *slog.Logger) *searchService {
	ss := &searchService{peerService: newPeerService(h, st, key, log, "search", protocol.SearchProtocols),
		providers: d, text: text, scores: newScores(), peerTimeout: searchPeerTimeout, dialTimeout: searchDialTimeout}
	ss.name = name
	ss.listen(ss.handle)
	return ss
}

// handle answers one search: the signed list of local hits, in the
// version the stream speaks. Hits of roots known only from peers are
// never sent (a node vouches for its own files only), nor are paths.
func (ss *searchService) handle(s network.Stream) {
	version := string(s.Protocol())
	serveStream(s, &ss.inbound, searchStreamTimeout, ss.log, "search", func(r *bufio.Reader) ([]byte, error) {
		req, err := protocol.ReadSearchRequest(r)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errBadRequest, err)
		}
		return ss.sealed(context.Background(), version, req)
	})
}

// local is one page of a search of the household's own index: its hits
// read from the store in one round trip, in the index's order, and the
// cursor of the next page.
func (ss *searchService) local(ctx context.Context, q string, limit int, cursor string) ([]store.SearchHit, string, error) {
	res, err := ss.text.Search(q, limit, cursor)
	if err != nil {
		return nil, "", err
	}
	roots := make([]store.RootID, len(res.Matches))
	for i, m := range res.Matches {
		roots[i] = m.Root
	}
	hits, err := ss.st.SearchHits(ctx, roots)
	return hits, res.Next, err
}

func (ss *searchService) sealed(ctx context.Context, version string, req protocol.SearchRequest) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	page, _, err := ss.local(ctx, req.Q, min(req.Limit, store.MaxSearchLimit), "")
	if err != nil {
		return nil, err
	}
	var hits []protocol.SearchHit
	for _, h := range page {
		if h.Source != "local" || (ss.private != nil && ss.private(h.Path)) {
			continue
		}
		if h.Own != nil {
			// What peers filled in is shown here, never signed as this
			// household's word.
			h.Summary = *h.Own
		}
		ph, err := protocol.NewSearchHit(h.CIDs, h.Title, h.Size, h.FileType)
		if err != nil {
			continue
		}
		withDetails(&ph, h)
		hits = append(hits, ph)
	}
	return protocol.SealSearchAnswer(version, protocol.SearchAnswer{Name: ss.name, Hits: hits}, ss.key)
}

// withDetails adds what 1.1.0 hits carry beyond 1.0.0's to ph, from the
// index's hit h. When one of them is of a shape the protocol refuses (an
// out-of-range number, an IMDb ID of another shape: an outside writer's
// field), the hit goes without details rather than not at all.
func withDetails(ph *protocol.SearchHit, h store.SearchHit) {
	bare := *ph
	ph.Year, ph.Season, ph.Episode, ph.EpisodeTitle, ph.IMDbID = h.Year, h.Season, h.Episode, h.EpisodeTitle, h.IMDbID
	if ph.Validate() != nil {
		*ph = bare
	}
}

// ask sends one search to peer p and verifies the answer (signature,
// payload type, signer = p, no more hits than req.Limit, every hit valid,
// caps); a 1.2.0 answer's name (or its absence) is remembered as p's. An
// answer a relay cut off is asked again once over a fresh circuit.
func (ss *searchService) ask(ctx context.Context, p peer.ID, req protocol.SearchRequest) ([]protocol.SearchHit, error) {
	return onFreshCircuit(ctx, ss.h, p, func() ([]protocol.SearchHit, error) { return ss.askOnce(ctx, p, req) })
}

func (ss *searchService) askOnce(ctx context.Context, p peer.ID, req protocol.SearchRequest) ([]protocol.SearchHit, error) {
	from := fmt.Sprintf("search answer from %s", p)
	version, env, err := exchange{protos: searchProtocolIDs, write: func(w io.Writer) error { return protocol.WriteSearchRequest(w, req) },
		from: from}.run(ctx, ss.h, p)
	if err != nil {
		return nil, err
	}
	a, err := protocol.OpenSearchAnswer(version, env, p, req.Limit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	if version == protocol.SearchProtocolV12 {
		ss.names.learn(p, a.Name)
	}
	return a.Hits, nil
}

// peerHits is one peer's verified answer.
type peerHits struct {
	peer peer.ID
	hits []protocol.SearchHit
}

// fanOutResult is what a federated search's asking brought: the answers
// that verified, by peer ID; how many households were asked, and how many
// of them by the keyword index's path.
type fanOutResult struct {
	answers          []peerHits
	asked, fromIndex int
}

// fanOut asks, within searchFanOutTimeout, up to searchFanOutPeers
// connected peers (searchFanOutParallel at a time, in connectedOrder) and
// the households the keyword index names for the query's words
// (indexCandidates; up to searchIndexHouseholds, searchIndexParallel at a
// time), each within its own deadline (searchPeerTimeout). On both paths
// the least marked of the households waiting is asked first. A household
// is claimed when it is asked, not before: one the index names is asked
// by the index's path when the connected peers' path has not reached it
// yet. No household is asked twice, however many ways it is named.
func (ss *searchService) fanOut(ctx context.Context, req protocol.SearchRequest) fanOutResult {
	ctx, cancel := context.WithTimeout(ctx, searchFanOutTimeout)
	defer cancel()
	a := &asking{ss: ss, req: req, asked: map[peer.ID]bool{ss.h.ID(): true}}
	// wg: the paths' workers and the index's feeder; a.late: requests
	// past their household's deadline, heard while the search goes on.
	var wg sync.WaitGroup
	a.pool(ctx, &wg, searchFanOutParallel, connectedOrder(ss.scores, ss.h.Network().Peers(), ss.h.ID()), nil, false)
	named := make(chan peer.ID)
	a.pool(ctx, &wg, searchIndexParallel, nil, named, true)
	wg.Go(func() {
		defer close(named)
		n := 0
		for ai := range ss.indexCandidates(ctx, req.Q) {
			if n == searchIndexHouseholds || a.wasAsked(ai.ID) {
				continue // drained: the lookups end with ctx
			}
			n++
			p2p.LearnProvider(ss.h, ai, time.Minute)
			select {
			case named <- ai.ID:
			case <-ctx.Done():
			}
		}
	})
	wg.Wait()
	// Every household was asked and each answered or is past its own
	// deadline; the index's that are late and never hung are waited for
	// within the budget; then the search ends, those still silent are
	// cut off.
	a.waitAwaited(ctx)
	cancel()
	a.late.Wait()
	// By peer ID: the merge's turns do not depend on who answered first.
	sort.Slice(a.res.answers, func(i, j int) bool { return a.res.answers[i].peer < a.res.answers[j].peer })
	return a.res
}

// connectedOrder is the connected peers a federated search asks, at most
// searchFanOutPeers of them, in an order none of them can choose
// (scores.order: shuffled anew for every search, the marked ones last, so
// a peer that hung is asked after the others and left out when there are
// more than searchFanOutPeers). self is not among them.
func connectedOrder(s *scores, connected []peer.ID, self peer.ID) []peer.ID {
	ps := s.order(slices.DeleteFunc(slices.Clone(connected), func(p peer.ID) bool { return p == self }))
	return ps[:min(len(ps), searchFanOutPeers)]
}

// asking is one federated search's asking: the households asked on
// either path, and what it brought.
type asking struct {
	ss  *searchService
	req protocol.SearchRequest

	mu    sync.Mutex
	asked map[peer.ID]bool // and the node itself
	res   fanOutResult
	// late are the requests still open past their household's deadline;
	// awaited tell the end of those the search waits for before it ends.
	late    sync.WaitGroup
	awaited []chan struct{}
}

// waitAwaited waits, until ctx ends, for the requests of the households
// the keyword index named that were not marked when they were asked:
// the index says they hold a match, and they never hung, so one that is
// slow (a busy small board, a federation that just grew) is heard within
// the search's budget however soon every other household answered. A
// household that makes the search wait this way to the end of its
// budget is marked, so it is not waited for again.
func (a *asking) waitAwaited(ctx context.Context) {
	a.mu.Lock()
	awaited := a.awaited
	a.mu.Unlock()
	told := false
	for _, done := range awaited {
		select {
		case <-done:
			continue
		default:
		}
		if !told && a.ss.awaiting != nil {
			a.ss.awaiting()
			told = true
		}
		select {
		case <-done:
		case <-ctx.Done():
			return
		}
	}
}

// pool asks, parallel at a time, the households of first, then those
// from in (nil: none), until they are all asked or ctx ends: the least
// marked of those waiting first (leastMarkedFirst), each only when no
// path has asked it yet.
func (a *asking) pool(ctx context.Context, wg *sync.WaitGroup, parallel int, first []peer.ID, in <-chan peer.ID, indexed bool) {
	next := make(chan peer.ID)
	wg.Go(func() { leastMarkedFirst(ctx, a.ss.scores, first, in, next) })
	for range parallel {
		wg.Go(func() {
			for p := range next {
				if a.claim(ctx, p, indexed) {
					a.ask(ctx, p, indexed)
				}
			}
		})
	}
}

// leastMarkedFirst sends on out, whenever it is taken, the least marked
// household of those waiting (first, then whatever in brings; the first
// to wait among equals), and closes out when none waits and in is closed
// (or nil), or ctx ends.
func leastMarkedFirst(ctx context.Context, s *scores, first []peer.ID, in <-chan peer.ID, out chan<- peer.ID) {
	defer close(out)
	waiting := slices.Clone(first)
	for in != nil || len(waiting) > 0 {
		var send chan<- peer.ID
		var next peer.ID
		i := s.least(waiting)
		if i >= 0 {
			send, next = out, waiting[i]
		}
		select {
		case p, ok := <-in:
			if !ok {
				in = nil
				continue
			}
			waiting = append(waiting, p)
		case send <- next:
			waiting = slices.Delete(waiting, i, i+1)
		case <-ctx.Done():
			return
		}
	}
}

// wasAsked reports whether p was asked already (or is the node).
func (a *asking) wasAsked(p peer.ID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asked[p]
}

// claim takes p to be asked, on the index's path when indexed: false
// when it was asked already or the search's budget is over.
func (a *asking) claim(ctx context.Context, p peer.ID, indexed bool) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.asked[p] || ctx.Err() != nil {
		return false
	}
	a.asked[p] = true
	a.res.asked++
	if indexed {
		a.res.fromIndex++
	}
	return true
}

// ask asks p and keeps its verified answer. Past p's own deadline
// (searchPeerTimeout, and searchDialTimeout more when p must be dialled
// first) its place goes to the next household, but its request stays
// open (under a.late) and its answer is taken while the search goes on:
// a household slowed down (a busy small board) is heard if the search
// is still asking others, or, when the index named it (indexed) and it
// was not marked, until the budget ends (waitAwaited); a hanging one
// holds no place. A peer that
// failed, sent what did not verify, or was past its deadline and did
// not answer by the search's end is marked (weightHang): it is asked
// last next time. One the search's end cut off within its deadline is
// not.
func (a *asking) ask(ctx context.Context, p peer.ID, indexed bool) {
	limit := a.ss.peerTimeout
	if c := a.ss.h.Network().Connectedness(p); c != network.Connected && c != network.Limited {
		limit += a.ss.dialTimeout
	}
	var late atomic.Bool
	done := make(chan struct{})
	if indexed && a.ss.scores.of(p) == 0 {
		a.mu.Lock()
		a.awaited = append(a.awaited, done)
		a.mu.Unlock()
	}
	a.late.Go(func() {
		defer close(done)
		hits, err := a.ss.ask(ctx, p, a.req)
		if err != nil {
			if ctx.Err() == nil || late.Load() {
				a.ss.scores.add(p, weightHang)
			}
			a.ss.log.Debug("peer's search answer dropped", "peer", p, "late", late.Load(), "err", err)
			return
		}
		a.mu.Lock()
		a.res.answers = append(a.res.answers, peerHits{peer: p, hits: hits})
		a.mu.Unlock()
	})
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		late.Store(true)
	case <-ctx.Done():
	}
}

// search is the node's answer to GET /api/search: the local page, then,
// federated and on the first page, peers' hits not already shown,
// attributed to every peer that sent them, merged by search.Merge (peers'
// new hits at most limit in all, taken in turns, peers by ID). A
// federated search that allow refuses (nil allows all) is refused whole,
// with allow's error, before any work: the same search without federated
// answers.
func (ss *searchService) search(ctx context.Context, q string, limit int, cursor string, federated bool, allow func() error) (model.SearchResult, error) {
	var res model.SearchResult
	federated = federated && cursor == ""
	var asked chan fanOutResult
	if federated {
		if err := permit(allow); err != nil {
			return res, err
		}
		req := protocol.SearchRequest{Q: q, Limit: limit}
		if err := req.Validate(); err != nil {
			return res, fmt.Errorf("%w: %v", model.ErrBadRequest, err)
		}
		// Peers are asked while the household's own index is read: the
		// keyword lookups' DHT walks, which most searches wait for, start
		// at once.
		fctx, stop := context.WithCancel(ctx)
		defer stop()
		asked = make(chan fanOutResult, 1)
		go func() { asked <- ss.fanOut(fctx, req) }()
	}
	lctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	page, next, err := ss.local(lctx, q, limit, cursor)
	cancel()
	switch {
	case errors.Is(err, search.ErrInvalidCursor):
		return res, fmt.Errorf("%w: cursor: %v", model.ErrBadRequest, err)
	case err != nil && store.IsUnavailable(err):
		return res, RedisDown(err)
	case err != nil:
		return res, err
	}
	res.Next = next
	if !federated {
		res.Hits = search.Merge(page, nil, limit)
		res.PeerNames = ss.names.ofSearch(res)
		return res, nil
	}
	fo := <-asked
	res.Asked, res.FromIndex = fo.asked, fo.fromIndex
	res.Peers = []string{}
	answers := make([]search.Answer, 0, len(fo.answers))
	for _, ph := range fo.answers {
		res.Peers = append(res.Peers, ph.peer.String())
		answers = append(answers, search.Answer{Peer: ph.peer.String(), Hits: ph.hits})
	}
	res.Hits = search.Merge(page, answers, limit)
	res.PeerNames = ss.names.ofSearch(res)
	return res, nil
}
