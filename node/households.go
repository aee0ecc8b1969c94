package node

import (
	"context"
	"fmt"
	"sync"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/model"
)

// The values of Config.LibraryVisible (--library-visible).
const (
	LibraryVisibleEveryone = "everyone"
	LibraryVisibleFriends  = "friends"
	LibraryVisibleNone     = "none"
)

// friends are the peers a household shows its list to under
// LibraryVisibleFriends: those it named (--bootstrap, --allow-peer) and
// those it connected to on its own word (Node.Connect), remembered until
// the node stops. Peers the DHT, a relay or a hole punch connected it to,
// and peers that connected to it, are not friends: they became peers by
// no choice of the household's. Safe for concurrent use.
type friends struct {
	mu    sync.Mutex
	named map[peer.ID]bool
}

// newFriends are the peers cfg names: each --bootstrap address's peer and
// each --allow-peer ID (Validate checked them).
func newFriends(cfg Config) *friends {
	f := &friends{named: map[peer.ID]bool{}}
	for _, a := range cfg.P2P.Bootstrap {
		if ai, err := peer.AddrInfoFromString(a); err == nil {
			f.named[ai.ID] = true
		}
	}
	for _, s := range cfg.P2P.AllowPeers {
		if id, err := peer.Decode(s); err == nil {
			f.named[id] = true
		}
	}
	return f
}

// add makes p a friend.
func (f *friends) add(p peer.ID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.named[p] = true
}

// has reports whether p is a friend.
func (f *friends) has(p peer.ID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.named[p]
}

// isFriend reports whether the peer of ID s is a friend: the store
// shows a friend's value of a field first when as many households give
// another (store.Options.Friends).
func (n *Node) isFriend(s string) bool {
	id, err := peer.Decode(s)
	return err == nil && n.friends.has(id)
}

// libraryVisible is Config.LibraryVisible as the federation asks it: may
// p see the household's list?
func (n *Node) libraryVisible(p peer.ID) bool {
	switch n.cfg.LibraryVisible {
	case LibraryVisibleEveryone:
		return true
	case LibraryVisibleFriends:
		return n.friends.has(p)
	}
	return false
}

// Households answers GET /api/households.
func (b *backend) Households(ctx context.Context) (api.HouseholdsAnswer, error) {
	return model.HouseholdsAnswer{Households: b.n.hh.Households(ctx)}, nil
}

// HouseholdLibrary answers GET /api/households/<peer>/library.
func (b *backend) HouseholdLibrary(ctx context.Context, q api.HouseholdQuery) (api.HouseholdLibrary, error) {
	p, err := peer.Decode(q.Peer)
	if err != nil {
		return api.HouseholdLibrary{}, fmt.Errorf("%w: %.80q is not a peer ID: %v", model.ErrBadRequest, q.Peer, err)
	}
	return b.n.hh.HouseholdLibrary(ctx, p, q)
}
