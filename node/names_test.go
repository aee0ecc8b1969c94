package node_test

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// A household's name crosses to the asker: in the record a lookup merged
// (GET /api/meta's peerNames), in a federated search's answer
// (/api/search's peerNames), beside the connected peer (/api/peers); the
// node shows its own in /api/status. A household that answers records
// in 1.0.0 alone (as before names) is still believed, and has no name
// until its search answer (1.2.0) tells it.
func TestNames_FromPeers(t *testing.T) {
	t.Parallel()
	const alice = "Alice's NAS"
	libA := t.TempDir()
	film := make([]byte, 200<<10)
	rand.Read(film)
	writeOld(t, filepath.Join(libA, "Some.Film.2001.mkv"), film)
	a := startNodeWith(t, libA, func(c *node.Config) { c.Name = alice })

	libOld := t.TempDir()
	other := make([]byte, 100<<10)
	rand.Read(other)
	writeOld(t, filepath.Join(libOld, "Other.Film.1999.mkv"), other)
	old := startNodeWith(t, libOld, func(c *node.Config) { c.Name = "Old House" })
	old.AnswerRecordsAsV10()

	b := p2pNode(t, func(c *node.Config) { c.Name = "Bob" })
	for _, n := range []*node.Node{a, old} {
		if err := connect(b, n); err != nil {
			t.Fatal(err)
		}
	}

	var st api.Status
	getJSON(t, a, "/api/status", &st)
	if st.Name != alice {
		t.Errorf("A's /api/status name = %q, want %q", st.Name, alice)
	}

	for _, tc := range []struct {
		name     string
		house    *node.Node
		file     string
		wantName string
	}{
		{"a named household", a, filepath.Join(libA, "Some.Film.2001.mkv"), alice},
		{"a household of 1.0.0", old, filepath.Join(libOld, "Other.Film.1999.mkv"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var doc api.Document
			getJSON(t, b, "/api/meta/"+canonicalOf(t, tc.file), &doc)
			if doc.Source != tc.house.PeerID() {
				t.Fatalf("source %q, want %s", doc.Source, tc.house.PeerID())
			}
			name, ok := doc.PeerNames[tc.house.PeerID()]
			if name != tc.wantName || ok != (tc.wantName != "") {
				t.Errorf("meta peerNames = %v, want %s named %q", doc.PeerNames, tc.house.PeerID(), tc.wantName)
			}
		})
	}

	var res api.SearchResult
	waiting.Until(t, "B's federated search to hold both households' hits", func() string {
		res = api.SearchResult{}
		getJSON(t, b, "/api/search?q=film&federated=1", &res)
		from := map[string]bool{}
		for _, h := range res.Hits {
			from[h.Source] = true
		}
		if from[a.PeerID()] && from[old.PeerID()] {
			return ""
		}
		return fmt.Sprintf("hits %+v from %v", res.Hits, res.Peers)
	})
	// The old household's name came with its search answer (1.2.0), as
	// its records carry none.
	want := map[string]string{a.PeerID(): alice, old.PeerID(): "Old House"}
	for id, name := range want {
		if got := res.PeerNames[id]; got != name {
			t.Errorf("search peerNames[%s] = %q, want %q (all: %v)", id, got, name, res.PeerNames)
		}
	}

	var peers api.PeersAnswer
	getJSON(t, b, "/api/peers", &peers)
	for _, p := range peers.Peers {
		if p.ID == a.PeerID() && p.Name != alice {
			t.Errorf("/api/peers: A named %q, want %q", p.Name, alice)
		}
	}

	// The page shows the households by name, the whole ID in the title;
	// the node's own name heads it.
	t.Run("page", func(t *testing.T) {
		chromiumPath(t)
		p := openPage(t, b)
		p.navigate("/?view=peers")
		p.waitList("the files from other households, named", `l.entries.length === 2 && document.getElementById("header-name").textContent === "Bob"`)
		got := p.eval("read the sources", `[...document.querySelectorAll('#entries li[data-source=peer] .source [data-peer]')].map((e) => e.textContent + "|" + e.title).sort().join("\n")`)
		want := []string{alice + " …" + a.PeerID()[len(a.PeerID())-8:] + "|" + a.PeerID(), "Old House …" + old.PeerID()[len(old.PeerID())-8:] + "|" + old.PeerID()}
		slices.Sort(want)
		if got != strings.Join(want, "\n") {
			t.Errorf("sources shown:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
		}
	})
}
