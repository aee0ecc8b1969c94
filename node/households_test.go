package node_test

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/node/privacy"
)

// households answers GET /api/households on n, by peer ID.
func households(t *testing.T, n *node.Node) map[string]api.Household {
	t.Helper()
	var res api.HouseholdsAnswer
	getJSON(t, n, "/api/households", &res)
	out := map[string]api.Household{}
	for _, h := range res.Households {
		out[h.Peer] = h
	}
	return out
}

// friendLibrary answers GET /api/households/<peer>/library?query on n.
func friendLibrary(t *testing.T, n *node.Node, p, query string) api.HouseholdLibrary {
	t.Helper()
	var page api.HouseholdLibrary
	getJSON(t, n, "/api/households/"+p+"/library?"+query, &page)
	return page
}

// householdsOfThree: A, which shows its list to the peers it connected
// to, with two films and a show of two seasons; B, A's friend; C, which
// shows its list to no one; and D, which connected to A on its own:
//
//   - B lists A by name with its counts, and C as refusing;
//   - B pages A's films (not the one of A's private folder), searches them, and opens A's show, its seasons
//     and a season's episodes, each file with its CID, size and A as its
//     source;
//   - C refuses B (403), A refuses D, a stranger (403);
//   - an unknown peer is a 404, a peer ID that is none a 400.
func TestHouseholds_FriendsLibrary(t *testing.T) {
	t.Parallel()
	libA, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// A film of a private folder is never listed to peers.
	writeOld(t, filepath.Join(libA, "Private", privacy.PrivateMarker), nil)
	writeLibrary(t, libA, "Private/Secret.Garden.2013.mkv", "Movies/Alien.1979.mkv", "Movies/Heat.1995.mkv",
		"TV/The Office/The.Office.S01E01.mkv", "TV/The Office/The.Office.S01E02.mkv", "TV/The Office/The.Office.S02E01.mkv")
	libC := t.TempDir()
	writeLibrary(t, libC, "Movies/Zulu.1964.mkv")
	a := startNodeWith(t, libA, func(c *node.Config) { c.Name = "Alice's NAS" })
	b := p2pNode(t, func(c *node.Config) { c.Name = "Bob" })
	c := startNodeWith(t, libC, func(c *node.Config) { c.Name = "Carol"; c.LibraryVisible = node.LibraryVisibleNone })
	d := p2pNode(t, func(c *node.Config) { c.Name = "Dave"; c.LibraryVisible = node.LibraryVisibleEveryone })
	waiting.Until(t, "A's catalog", func() string {
		if m, s := library(t, a, "view=movies"), library(t, a, "view=shows"); m.Total != 3 || s.Total != 1 {
			return fmt.Sprintf("films %q, shows %q", lines(m), lines(s))
		}
		return ""
	})
	// A and C name B by connecting to it; D connects to A on its own.
	for _, pair := range [][2]*node.Node{{a, b}, {c, b}, {d, a}} {
		if err := connect(pair[0], pair[1]); err != nil {
			t.Fatal(err)
		}
	}
	idA, idC := a.PeerID(), c.PeerID()

	waiting.Until(t, "B lists A and C", func() string {
		hs := households(t, b)
		if hs[idA].Library != "shared" || hs[idC].Library != "refused" {
			return fmt.Sprintf("%+v", hs)
		}
		return ""
	})
	hs := households(t, b)
	if got, want := hs[idA], (api.Household{Peer: idA, Name: "Alice's NAS", Library: "shared", Films: 2, Shows: 1}); got != want {
		t.Errorf("A as B lists it: %+v, want %+v", got, want)
	}
	if got := hs[idC]; got.Films != 0 || got.Shows != 0 {
		t.Errorf("C, which refuses, has counts: %+v", got)
	}

	_, pub, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := peer.IDFromPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	alien := canonicalOf(t, libA+"/Movies/Alien.1979.mkv")
	for _, tt := range []struct {
		query string
		want  []string
		pages int
		view  string
	}{
		{"view=movies&limit=1", []string{"Alien (1979) from " + idA}, 2, "movies"},
		{"view=movies&limit=1&page=2", []string{"Heat (1995) from " + idA}, 2, "movies"},
		{"view=movies&q=hea", []string{"Heat (1995) from " + idA}, 1, "movies"},
		{"view=movies&q=office", []string{}, 0, "movies"},
		{"view=shows", []string{"The Office: 2 seasons, 3 episodes"}, 1, "shows"},
		{"show=the+office", []string{"The Office season 1, 2 episodes", "The Office season 2, 1 episodes"}, 1, "seasons"},
		{"show=the+office&season=1", []string{"The Office S01E01 from " + idA, "The Office S01E02 from " + idA}, 1, "episodes"},
		{"show=lost", []string{}, 0, "seasons"},
	} {
		t.Run(tt.query, func(t *testing.T) {
			p := friendLibrary(t, b, idA, tt.query)
			got := []string{}
			for _, e := range p.Entries {
				got = append(got, line(e))
			}
			if !slices.Equal(got, tt.want) || p.Pages != tt.pages || p.View != tt.view || p.Name != "Alice's NAS" || p.Films != 2 || p.Shows != 1 {
				t.Errorf("%q (%d pages, view %s, %+v), want %q (%d pages, view %s)", got, p.Pages, p.View, p, tt.want, tt.pages, tt.view)
			}
			for _, e := range p.Entries {
				if e.Kind == "file" && (e.CID == "" || e.Size == 0) {
					t.Errorf("file entry %+v: want its CID and size", e)
				}
			}
		})
	}
	if p := friendLibrary(t, b, idA, "view=movies"); len(p.Entries) == 0 || p.Entries[0].CID != alien {
		t.Errorf("A's first film: %+v, want Alien as %s", p.Entries, alien)
	}

	for _, tt := range []struct {
		who    *node.Node
		path   string
		status int
		says   string
	}{
		{b, "/api/households/" + idC + "/library", 403, "does not show its list"},
		{d, "/api/households/" + idA + "/library", 403, "does not show its list"},
		{b, "/api/households/not-a-peer/library", 400, "not a peer ID"},
		{b, "/api/households/" + stranger.String() + "/library", 404, "no household"},
		{b, "/api/households/" + idA + "/library?view=other", 400, "view"},
		{b, "/api/households/" + idA + "/library?limit=101", 400, "limit"},
		{b, "/api/households/" + idA + "/library?show=x&q=y", 400, "without show"},
	} {
		resp, body := do(t, tt.who, "GET", tt.path, nil)
		if resp.StatusCode != tt.status || !jsonErrorSays(body, tt.says) {
			t.Errorf("GET %s: %s %s, want %d saying %q", tt.path, resp.Status, body, tt.status, tt.says)
		}
	}
	// D lists A as refusing it.
	waiting.Until(t, "D lists A as refusing", func() string {
		if h := households(t, d)[idA]; h.Library != "refused" {
			b, _ := json.Marshal(h)
			return string(b)
		}
		return ""
	})
}
