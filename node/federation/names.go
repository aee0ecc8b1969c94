package federation

import (
	"slices"
	"sync"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/model"
)

// maxNames bounds the peers' names a household keeps: past it, one
// learned before gives way to each new one.
const maxNames = 10_000

// peerNames are the household names peers claimed in their verified
// answers (record 1.1.0, search 1.2.0), already cleaned
// (protocol.CleanName), by peer: what the API shows instead of a peer ID.
// A name is the peer's own claim, verified by no one. They are kept in
// memory only: after a restart a peer has none until it answers again.
// Safe for concurrent use; the zero value is ready.
type peerNames struct {
	mu sync.Mutex
	m  map[peer.ID]string
}

// learn records what p answered in a version that carries a name: name,
// or that it has none ("").
func (n *peerNames) learn(p peer.ID, name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if name == "" {
		delete(n.m, p)
		return
	}
	if n.m == nil {
		n.m = make(map[peer.ID]string)
	}
	if _, ok := n.m[p]; !ok && len(n.m) >= maxNames {
		for old := range n.m {
			delete(n.m, old)
			break
		}
	}
	n.m[p] = name
}

// of returns the names of those of ids (peer IDs, text form) that have
// one, by ID; nil when none has (and on a nil n).
func (n *peerNames) of(ids ...string) map[string]string {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	var out map[string]string
	for _, s := range ids {
		if _, done := out[s]; done || s == "" || s == "local" {
			continue
		}
		id, err := peer.Decode(s)
		if err != nil {
			continue
		}
		if name, ok := n.m[id]; ok {
			if out == nil {
				out = make(map[string]string)
			}
			out[s] = name
		}
	}
	return out
}

// ofDocument returns the names of the peers d names: its source,
// providers, peers, the peers of its origin and those that vouch for
// its learned members.
func (n *peerNames) ofDocument(d model.Document) map[string]string {
	ids := append(append([]string{d.Source}, d.Providers...), d.Peers...)
	for p := range d.Origin {
		ids = append(ids, p)
	}
	for _, ps := range d.Learned {
		ids = append(ids, ps...)
	}
	return n.of(ids...)
}

// ofSearch returns the names of the peers res names: those whose answers
// it merged, and each hit's source and peers.
func (n *peerNames) ofSearch(res model.SearchResult) map[string]string {
	ids := slices.Clone(res.Peers)
	for _, h := range res.Hits {
		ids = append(append(ids, h.Source), h.Peers...)
	}
	return n.of(ids...)
}
