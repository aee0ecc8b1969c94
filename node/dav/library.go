package dav

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/metamesh/node/store"
)

// Library keeps the items of every root in step with the store (a
// store.Consumer of its own: Consumer) and lays the share out from them
// when a request needs it and they changed since the last layout (Tree):
// a file the library takes in shows in the share as soon as the store's
// change reaches it.
type Library struct {
	// household names peers' households: their names, by peer ID, for
	// those that told one.
	household func(peers ...string) map[string]string

	mu    sync.Mutex
	items map[store.RootID]Item
	// peers counts the items of each peer (Item.Peer): whose names a
	// layout asks for, without a pass over the items.
	peers   map[string]int
	changed bool
	// sweeping are the roots of the sweep being taken (Take's goroutine
	// only), nil between sweeps.
	sweeping map[store.RootID]bool
	// tree is the last layout, of items as they were and of names.
	tree  *Tree
	names map[string]string
}

// NewLibrary is an empty library; household names peers' households.
func NewLibrary(household func(peers ...string) map[string]string) *Library {
	return &Library{household: household, items: map[store.RootID]Item{}, peers: map[string]int{}, changed: true}
}

// Consumer is the library as store.Changes takes it.
func (l *Library) Consumer() store.Consumer {
	return store.Consumer{Name: "the WebDAV share", Fields: Field, Take: l.Take}
}

// Take brings the items in step with one batch of changed roots. A
// sweep's batches only put; its last drops what no batch of the sweep
// named.
func (l *Library) Take(_ context.Context, b store.ChangeBatch) error {
	if b.First {
		l.sweeping = map[store.RootID]bool{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now().UTC()
	for _, r := range b.Roots {
		old, had := l.items[r.Root]
		l.drop(r.Root)
		l.changed = true
		if !r.Exists {
			continue
		}
		it := ItemOf(r.Document)
		if it.ModTime.IsZero() {
			// A peer's file has no time of its own: the time it came.
			it.ModTime = now
			if had {
				it.ModTime = old.ModTime
			}
		}
		l.items[r.Root] = it
		if !it.Local() {
			l.peers[it.Peer]++
		}
		if b.Sweep && l.sweeping != nil {
			l.sweeping[r.Root] = true
		}
	}
	if b.Last && l.sweeping != nil {
		for r := range l.items {
			if !l.sweeping[r] {
				l.drop(r)
			}
		}
		l.sweeping = nil
	}
	return nil
}

// Tree is the share as the items are now: the last layout, or a new
// one when an item changed or a household's name did.
func (l *Library) Tree() *Tree {
	l.mu.Lock()
	defer l.mu.Unlock()
	names := l.household(slices.Collect(maps.Keys(l.peers))...)
	if l.tree != nil && !l.changed && maps.Equal(names, l.names) {
		return l.tree
	}
	items := slices.Collect(maps.Values(l.items))
	l.tree = Layout(items, func(p string) string {
		if n := names[p]; n != "" {
			return n
		}
		return p
	})
	l.names, l.changed = names, false
	return l.tree
}

// drop takes root's item out; l.mu is held.
func (l *Library) drop(root store.RootID) {
	it, ok := l.items[root]
	if !ok {
		return
	}
	delete(l.items, root)
	if !it.Local() {
		if l.peers[it.Peer]--; l.peers[it.Peer] <= 0 {
			delete(l.peers, it.Peer)
		}
	}
}
