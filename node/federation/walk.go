package federation

import (
	"bytes"
	"context"
	"slices"

	"github.com/ipfs/go-cid"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	kb "github.com/libp2p/go-libp2p-kbucket"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/routing"
)

// walkNearest is how many of the peers nearest a search word's key, of
// those its DHT walk has heard of, must have answered before the walk
// ends. A word's provider records sit on the peers nearest its key (the
// 20 nearest when it was provided, handed to newer nearer ones since:
// node/handoff), so once the nearest have answered, the rest of the walk
// (kad-dht asks every one of the 20 nearest it has not asked yet, and
// waits for the slowest) finds no provider those did not name. Measured
// on 200 walks of a growing and churning federation of 300 households
// (docs/figures.md): with the 10 nearest no provider came after the walk
// would have ended, with 8 two did, with 3 nine; the walk ends at about
// the median 0.36 s instead of 0.65 s.
const walkNearest = 10

// findNear finds key's providers on f as f.FindProvidersAsync does, and
// ends the DHT walk once the nearest peers it has heard of have answered
// (nearest of them; see walkNearest), following the walk through kad-dht's
// lookup and query events. The channel it returns closes when the walk
// ends (or ctx does). A finder that sends no events is walked to its end.
func findNear(ctx context.Context, f providerFinder, key cid.Cid, count, nearest int) <-chan peer.AddrInfo {
	walk, cancel := context.WithCancel(ctx)
	walk, lookups := dht.RegisterForLookupEvents(walk)
	walk, queries := routing.RegisterForQueryEvents(walk)
	w := newNearWalk(kb.ConvertKey(string(key.Hash())), nearest)
	found := f.FindProvidersAsync(walk, key, count)
	go func() {
		for lookups != nil || queries != nil {
			select {
			case ev, ok := <-lookups:
				if !ok {
					lookups = nil
				} else if w.lookup(ev) {
					cancel()
				}
			case ev, ok := <-queries:
				if !ok {
					queries = nil
				} else if w.query(ev) {
					cancel()
				}
			}
		}
	}()
	out := make(chan peer.AddrInfo)
	go func() {
		defer close(out)
		defer cancel()
		// Every provider the walk found is sent, those of a walk ended
		// early too: only the caller's ctx ending drops them (the walk
		// closes found once it sees that).
		for ai := range found {
			select {
			case out <- ai:
			case <-ctx.Done():
				for range found {
				}
				return
			}
		}
	}()
	return out
}

// nearWalk follows one DHT walk's peers by their distance to its key.
type nearWalk struct {
	target  kb.ID
	nearest int
	peers   map[peer.ID]*walkPeer
	done    bool
}

// walkPeer is a peer a walk heard of: its distance to the key, and
// whether it answered, or cannot be reached (and then does not count).
type walkPeer struct {
	dist        []byte
	answered    bool
	unreachable bool
}

func newNearWalk(target kb.ID, nearest int) *nearWalk {
	return &nearWalk{target: target, nearest: nearest, peers: map[peer.ID]*walkPeer{}}
}

// lookup takes one of the walk's lookup events (its seeds and every
// peer it hears of, queries and cannot reach) and says whether the
// nearest have now answered.
func (w *nearWalk) lookup(ev *dht.LookupEvent) bool {
	for _, u := range []*dht.LookupUpdateEvent{ev.Request, ev.Response} {
		if u == nil {
			continue
		}
		for _, p := range u.Heard {
			w.heard(p.Peer)
		}
		for _, p := range u.Queried {
			w.heard(p.Peer).answered = true
		}
		for _, p := range u.Unreachable {
			w.heard(p.Peer).unreachable = true
		}
	}
	return w.check()
}

// query takes one of the walk's query events: a peer's answer (the
// follow-up round's answers come only this way) and the peers it named.
func (w *nearWalk) query(ev *routing.QueryEvent) bool {
	switch ev.Type {
	case routing.PeerResponse:
		w.heard(ev.ID).answered = true
		for _, ai := range ev.Responses {
			w.heard(ai.ID)
		}
	case routing.QueryError:
		if ev.ID != "" {
			w.heard(ev.ID).unreachable = true
		}
	default:
		return false
	}
	return w.check()
}

func (w *nearWalk) heard(p peer.ID) *walkPeer {
	wp := w.peers[p]
	if wp == nil {
		wp = &walkPeer{dist: kb.Xor(kb.ConvertPeerID(p), w.target)}
		w.peers[p] = wp
	}
	return wp
}

// check says, once, whether the nearest reachable peers heard of have
// all answered: it takes at least w.nearest of them (a smaller
// federation is walked to its end).
func (w *nearWalk) check() bool {
	if w.done {
		return false
	}
	var reach []*walkPeer
	for _, p := range w.peers {
		if !p.unreachable {
			reach = append(reach, p)
		}
	}
	if len(reach) < w.nearest {
		return false
	}
	slices.SortFunc(reach, func(a, b *walkPeer) int { return bytes.Compare(a.dist, b.dist) })
	for _, p := range reach[:w.nearest] {
		if !p.answered {
			return false
		}
	}
	w.done = true
	return true
}
