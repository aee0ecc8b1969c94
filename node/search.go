package node

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

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
)

// searchIndexer keeps the store's search index in step: every root the
// change feed names (key-set changes, mints, merges, deletes) and every
// root whose searchable fields were written (store.WatchSearchFields:
// extraction, re-extraction, renames, peers' merges, outside writers) is
// re-indexed by one worker goroutine, so IndexRoot never runs twice at
// once for a root. A sweep of every root runs at start, after the feed
// was trimmed past it and after the field subscription was lost.
type searchIndexer struct {
	st  *store.Store
	log *slog.Logger

	mu      sync.Mutex
	pending map[store.RootID]bool
	sweep   bool
	wake    chan struct{}
}

func newSearchIndexer(st *store.Store, log *slog.Logger) *searchIndexer {
	return &searchIndexer{st: st, log: log.With("component", "search"), pending: map[store.RootID]bool{}, wake: make(chan struct{}, 1)}
}

// run indexes until ctx ends.
func (x *searchIndexer) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); x.follow(ctx) }()
	go func() { defer wg.Done(); x.watch(ctx) }()
	x.work(ctx)
	wg.Wait()
}

func (x *searchIndexer) add(roots ...store.RootID) {
	x.mu.Lock()
	for _, r := range roots {
		if r != "" {
			x.pending[r] = true
		}
	}
	x.mu.Unlock()
	x.poke()
}

func (x *searchIndexer) requestSweep() {
	x.mu.Lock()
	x.sweep = true
	x.mu.Unlock()
	x.poke()
}

func (x *searchIndexer) poke() {
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// follow reads the change feed from its head (the start-up sweep covers
// what came before) and queues every root an entry names.
func (x *searchIndexer) follow(ctx context.Context) {
	var f *store.Feed
	for ctx.Err() == nil {
		if f == nil {
			head, err := x.st.FeedHead(ctx)
			if err != nil {
				x.pause(ctx, "read the change feed's head", err)
				continue
			}
			x.requestSweep()
			f = x.st.Feed(head)
		}
		evs, err := f.Next(ctx, 500, 2*time.Second)
		if errors.Is(err, store.ErrFeedTrimmed) {
			x.log.Warn("the change feed was trimmed past the search indexer; sweeping the store again")
			f = nil
			continue
		}
		if err != nil {
			x.pause(ctx, "read the change feed", err)
			continue
		}
		for _, e := range evs {
			x.add(e.Root, e.Into)
		}
	}
}

// watch queues roots whose searchable fields change; after the
// subscription is lost it subscribes again and sweeps.
func (x *searchIndexer) watch(ctx context.Context) {
	first := true
	for ctx.Err() == nil {
		ready := make(chan struct{})
		lost := first
		first = false
		go func() {
			select {
			case <-ready:
				if !lost {
					x.requestSweep()
				}
			case <-ctx.Done():
			}
		}()
		err := x.st.WatchSearchFields(ctx, ready, func(roots []store.RootID) { x.add(roots...) })
		if ctx.Err() != nil {
			return
		}
		x.pause(ctx, "follow field writes", err)
	}
}

// work indexes the queued roots, and sweeps when asked.
func (x *searchIndexer) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-x.wake:
		}
		x.mu.Lock()
		sweep := x.sweep
		x.sweep = false
		roots := make([]store.RootID, 0, len(x.pending))
		for r := range x.pending {
			roots = append(roots, r)
		}
		clear(x.pending)
		x.mu.Unlock()
		if sweep {
			all, err := x.st.RootIDs(ctx)
			if err == nil {
				_, err = x.st.PruneSearchIndex(ctx)
			}
			if err != nil {
				x.requestSweep()
				x.pause(ctx, "sweep the search index", err)
				continue
			}
			roots = append(roots, all...)
		}
		for i, r := range roots {
			if err := x.st.IndexRoot(ctx, r); err != nil {
				if ctx.Err() != nil {
					return
				}
				x.add(roots[i:]...)
				x.pause(ctx, "index a root for search", err)
				break
			}
		}
	}
}

func (x *searchIndexer) pause(ctx context.Context, what string, err error) {
	if ctx.Err() != nil {
		return
	}
	x.log.Warn("cannot "+what+"; retrying", "err", err)
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
	}
}

// searchService answers /metamesh/search/1.0.0 with local files only and
// asks connected peers on it.
type searchService struct{ peerService }

func newSearchService(h host.Host, st *store.Store, key crypto.PrivKey, log *slog.Logger) *searchService {
	ss := &searchService{newPeerService(h, st, key, log, "search", protocol.SearchProtocolID)}
	h.SetStreamHandler(ss.proto, ss.handle)
	return ss
}

// handle answers one search: the signed list of local hits. Hits of roots
// known only from peers are never sent (a node vouches for its own files
// only), nor are paths.
func (ss *searchService) handle(s network.Stream) {
	serveStream(s, &ss.inbound, searchStreamTimeout, ss.log, "search", func(r *bufio.Reader) ([]byte, error) {
		req, err := protocol.ReadSearchRequest(r)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errBadRequest, err)
		}
		return ss.sealed(context.Background(), req)
	})
}

func (ss *searchService) sealed(ctx context.Context, req protocol.SearchRequest) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	page, err := ss.st.Search(ctx, req.Q, min(req.Limit, store.MaxSearchLimit), "")
	if err != nil {
		return nil, err
	}
	var hits []protocol.SearchHit
	for _, h := range page.Hits {
		if h.Source != "local" {
			continue
		}
		ph, err := protocol.NewSearchHit(h.CIDs, h.Title, h.Size, h.FileType)
		if err != nil {
			continue
		}
		hits = append(hits, ph)
	}
	return protocol.SealSearch(hits, ss.key)
}

// ask sends one search to peer p and verifies the answer (signature,
// payload type, signer = p, no more hits than req.Limit, every hit valid,
// caps).
func (ss *searchService) ask(ctx context.Context, p peer.ID, req protocol.SearchRequest) ([]protocol.SearchHit, error) {
	// A relayed (limited) connection carries the protocol too; a direct
	// one, when there is one, is taken first.
	s, err := ss.h.NewStream(network.WithAllowLimitedConn(ctx, "metamesh"), p, ss.proto)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = s.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { s.Reset() })
	defer stop()
	if err := protocol.WriteSearchRequest(s, req); err != nil {
		s.Reset()
		return nil, err
	}
	if err := s.CloseWrite(); err != nil {
		s.Reset()
		return nil, err
	}
	env, err := protocol.ReadResponse(bufio.NewReader(s))
	if err != nil {
		s.Reset()
		return nil, fmt.Errorf("search answer from %s: %w", p, err)
	}
	s.Close()
	hits, err := protocol.OpenSearch(env, p, req.Limit)
	if err != nil {
		return nil, fmt.Errorf("search answer from %s: %w", p, err)
	}
	return hits, nil
}

// peerHits is one peer's verified answer.
type peerHits struct {
	peer peer.ID
	hits []protocol.SearchHit
}

// fanOut asks up to searchFanOutPeers connected peers, searchFanOutParallel
// at a time, within searchFanOutTimeout, and returns the answers that
// verified, by peer ID.
func (ss *searchService) fanOut(ctx context.Context, req protocol.SearchRequest) []peerHits {
	ctx, cancel := context.WithTimeout(ctx, searchFanOutTimeout)
	defer cancel()
	peers := ss.h.Network().Peers()
	sort.Slice(peers, func(i, j int) bool { return peers[i] < peers[j] })
	if len(peers) > searchFanOutPeers {
		peers = peers[:searchFanOutPeers]
	}
	out := make([]peerHits, len(peers))
	sem := make(chan struct{}, searchFanOutParallel)
	var wg sync.WaitGroup
	for i, p := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			hits, err := ss.ask(ctx, p, req)
			if err != nil {
				ss.log.Debug("peer's search answer dropped", "peer", p, "err", err)
				return
			}
			out[i] = peerHits{peer: p, hits: hits}
		}()
	}
	wg.Wait()
	kept := out[:0]
	for _, ph := range out {
		if ph.peer != "" {
			kept = append(kept, ph)
		}
	}
	return kept
}

// search is the node's answer to GET /api/search: the local page, then,
// federated and on the first page, peers' hits not already shown,
// attributed to every peer that sent them. Peers' new hits are at most
// limit in all, taken in turns (every peer's first hit, then every peer's
// second, …, peers by ID), so no one peer's answer fills the page. A
// federated search that from may not make now is refused whole, before
// any work: the same search without federated answers.
func (ss *searchService) search(ctx context.Context, q string, limit int, cursor string, federated bool, from api.Caller) (api.SearchResult, error) {
	var res api.SearchResult
	if federated && cursor == "" {
		if err := from.Federate(api.FederatedSearch); err != nil {
			return res, err
		}
	}
	lctx, cancel := context.WithTimeout(ctx, requestTimeout)
	page, err := ss.st.Search(lctx, q, limit, cursor)
	cancel()
	switch {
	case errors.Is(err, store.ErrInvalidCursor):
		return res, fmt.Errorf("%w: cursor: %v", api.ErrBadRequest, err)
	case err != nil && store.IsUnavailable(err):
		return res, redisDown(err)
	case err != nil:
		return res, err
	}
	res.Next = page.Next
	seen := map[string]map[string]any{}
	for _, h := range page.Hits {
		m := map[string]any{"cid": h.CID, "title": h.Title, "size": h.Size, "fileType": h.FileType, "cids": h.CIDs, "source": h.Source}
		if h.Year > 0 {
			m["year"] = h.Year
		}
		if h.Season != nil {
			m["season"] = *h.Season
		}
		if h.EpNumber != nil {
			m["episode"] = *h.EpNumber
		}
		if h.Episode != "" {
			m["episodeTitle"] = h.Episode
		}
		res.Hits = append(res.Hits, m)
		seen[h.CID] = m
	}
	if !federated || cursor != "" {
		return res, nil
	}
	req := protocol.SearchRequest{Q: q, Limit: limit}
	if err := req.Validate(); err != nil {
		return res, fmt.Errorf("%w: %v", api.ErrBadRequest, err)
	}
	answers := ss.fanOut(ctx, req)
	res.Peers = []string{}
	longest := 0
	for _, ph := range answers {
		res.Peers = append(res.Peers, ph.peer.String())
		longest = max(longest, len(ph.hits))
	}
	added := 0
	for i := range longest {
		for _, ph := range answers {
			if i >= len(ph.hits) {
				continue
			}
			h, from := ph.hits[i], ph.peer.String()
			if m, ok := seen[h.CID]; ok {
				if ps, ok := m["peers"].([]string); ok {
					if !slices.Contains(ps, from) {
						m["peers"] = append(ps, from)
					}
				} else if src, _ := m["source"].(string); src != "local" && src != from {
					m["peers"] = []string{src, from}
				}
				continue
			}
			if added == limit {
				continue
			}
			m := map[string]any{"cid": h.CID, "title": h.Title, "size": h.Size, "fileType": h.FileType, "cids": h.CIDs,
				"source": from, "peers": []string{from}}
			res.Hits = append(res.Hits, m)
			seen[h.CID] = m
			added++
		}
	}
	return res, nil
}
