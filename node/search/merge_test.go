package search

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// TestMerge: a page's local hits keep their place; peers' new hits follow
// in turns (every peer's first, then every peer's second, …), at most
// limit of them; a hit shown already names each further peer that sent
// it, unless it is a local file's or the peer it is known from.
func TestMerge(t *testing.T) {
	local := func(c, source string) store.SearchHit {
		return store.SearchHit{Summary: store.Summary{CID: c, Title: "t " + c, Source: source}}
	}
	from := func(peer string, cids ...string) Answer {
		a := Answer{Peer: peer}
		for _, c := range cids {
			a.Hits = append(a.Hits, protocol.SearchHit{CID: c, Title: "t " + c})
		}
		return a
	}
	tests := []struct {
		name    string
		local   []store.SearchHit
		answers []Answer
		limit   int
		// want is each hit as "cid source peer,peer".
		want []string
	}{
		{"nothing", nil, nil, 10, nil},
		{"local only", []store.SearchHit{local("l1", "local"), local("l2", "P")}, nil, 10,
			[]string{"l1 local ", "l2 P "}},
		{"turns across peers", []store.SearchHit{local("l1", "local")},
			[]Answer{from("A", "a1", "a2", "a3"), from("B", "b1"), from("C", "c1", "c2")}, 10,
			[]string{"l1 local ", "a1 A A", "b1 B B", "c1 C C", "a2 A A", "c2 C C", "a3 A A"}},
		{"the limit on peers' new hits", []store.SearchHit{local("l1", "local"), local("l2", "local"), local("l3", "local")},
			[]Answer{from("A", "a1", "a2", "a3"), from("B", "b1", "b2")}, 3,
			[]string{"l1 local ", "l2 local ", "l3 local ", "a1 A A", "b1 B B", "a2 A A"}},
		{"a local hit never names a peer", []store.SearchHit{local("x", "local")},
			[]Answer{from("A", "x"), from("B", "x")}, 10,
			[]string{"x local "}},
		{"a peer's root of the local index names the other peers", []store.SearchHit{local("x", "P")},
			[]Answer{from("A", "x"), from("B", "x"), from("P", "x")}, 10,
			[]string{"x P P,A,B"}},
		{"a peer's hit shown already names the next peer once", nil,
			[]Answer{from("A", "x", "x"), from("B", "y", "x"), from("C", "x")}, 10,
			[]string{"x A A,C,B", "y B B"}},
		{"a hit shown already is named past the limit", nil,
			[]Answer{from("A", "a1", "a2"), from("B", "b1", "a1")}, 2,
			[]string{"a1 A A,B", "b1 B B"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, h := range Merge(tt.local, tt.answers, tt.limit) {
				if h.Title != "t "+h.CID {
					t.Errorf("hit %s titled %q", h.CID, h.Title)
				}
				got = append(got, fmt.Sprintf("%s %s %s", h.CID, h.Source, strings.Join(h.Peers, ",")))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Merge = %q, want %q", got, tt.want)
			}
		})
	}
}
