package federation

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	dht "github.com/libp2p/go-libp2p-kad-dht"
	kb "github.com/libp2p/go-libp2p-kbucket"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/routing"
)

// walkStep is one event of a DHT walk, told by the peers' ranks in
// distance to the key (0 the nearest of byDistance).
type walkStep struct {
	seeds       []int // the lookup's seeding: heard
	answer      int   // a peer's answer (a query event), -1 none
	names       []int // the peers that answer names
	queried     []int // the lookup's queried (a lookup event)
	unreachable []int
	// ends is whether the walk is over after this step.
	ends bool
}

func TestNearWalk_EndsOnceTheNearestAnswered(t *testing.T) {
	const key = "a search word's key"
	target := kb.ConvertKey(key)
	peers := byDistance(target, 12)
	at := func(ranks []int) []*dht.PeerKadID {
		var out []*dht.PeerKadID
		for _, r := range ranks {
			out = append(out, dht.NewPeerKadID(peers[r]))
		}
		return out
	}
	cases := []struct {
		name    string
		nearest int
		steps   []walkStep
	}{
		{"the far answers first, then the three nearest", 3, []walkStep{
			{seeds: []int{0, 1, 2, 8, 9, 10}, answer: -1},
			{answer: 10}, {answer: 9}, {answer: 8}, {answer: 2}, {answer: 1},
			{answer: 0, ends: true},
		}},
		{"an answer names a nearer peer, which must answer too", 3, []walkStep{
			{seeds: []int{1, 2, 3, 9}, answer: -1},
			{answer: 9}, {answer: 3}, {answer: 2, names: []int{0}},
			{answer: 1},
			{answer: 0, ends: true},
		}},
		{"answers seen as the lookup's queried count", 2, []walkStep{
			{seeds: []int{0, 1, 5}, answer: -1},
			{answer: -1, queried: []int{5, 1}},
			{answer: -1, queried: []int{0}, ends: true},
		}},
		{"a peer that cannot be reached does not count", 2, []walkStep{
			{seeds: []int{0, 1, 2}, answer: -1},
			{answer: 2}, {answer: 1},
			{answer: -1, unreachable: []int{0}, ends: true},
		}},
		{"fewer reachable peers than the nearest: walked to its end", 4, []walkStep{
			{seeds: []int{0, 1, 2, 3}, answer: -1},
			{answer: 0}, {answer: 1}, {answer: 2},
			{answer: -1, unreachable: []int{3}},
		}},
		{"ended once", 1, []walkStep{
			{seeds: []int{0}, answer: -1},
			{answer: 0, ends: true},
			{answer: 0, names: []int{4}},
			{answer: 4},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newNearWalk(target, tc.nearest)
			for i, s := range tc.steps {
				var ended bool
				if len(s.seeds)+len(s.queried)+len(s.unreachable) > 0 {
					up := &dht.LookupUpdateEvent{Heard: at(s.seeds), Queried: at(s.queried), Unreachable: at(s.unreachable)}
					ended = w.lookup(&dht.LookupEvent{Response: up})
				}
				if s.answer >= 0 {
					var named []*peer.AddrInfo
					for _, r := range s.names {
						named = append(named, &peer.AddrInfo{ID: peers[r]})
					}
					ended = w.query(&routing.QueryEvent{Type: routing.PeerResponse, ID: peers[s.answer], Responses: named}) || ended
				}
				if ended != s.ends {
					t.Fatalf("step %d: ended %v, want %v", i, ended, s.ends)
				}
			}
		})
	}
}

// byDistance makes n peer IDs and orders them by their distance to
// target, the nearest first.
func byDistance(target kb.ID, n int) []peer.ID {
	var ps []peer.ID
	for i := range n {
		ps = append(ps, peer.ID(fmt.Sprintf("household %d", i)))
	}
	slices.SortFunc(ps, func(a, b peer.ID) int {
		return bytes.Compare(kb.Xor(kb.ConvertPeerID(a), target), kb.Xor(kb.ConvertPeerID(b), target))
	})
	return ps
}
