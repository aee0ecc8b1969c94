package testnet

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/core/record"

	"github.com/metamesh/node/protocol"
)

// searchPayload seals any bytes as a search answer.
type searchPayload []byte

func (searchPayload) Domain() string                    { return protocol.SearchDomain }
func (searchPayload) Codec() []byte                     { return []byte(protocol.SearchProtocolID) }
func (p searchPayload) MarshalRecord() ([]byte, error)  { return p, nil }
func (p *searchPayload) UnmarshalRecord(b []byte) error { *p = b; return nil }

// hostileSearcher is a peer that answers every search with answer(key).
func hostileSearcher(t *testing.T, answer func(key crypto.PrivKey) []byte) peer.AddrInfo {
	t.Helper()
	key, _, _ := crypto.GenerateEd25519Key(nil)
	h, err := libp2p.New(libp2p.Identity(key), libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	h.SetStreamHandler(libp2pproto.ID(protocol.SearchProtocolID), func(s network.Stream) {
		if _, err := protocol.ReadSearchRequest(s); err != nil {
			s.Reset()
			return
		}
		_ = protocol.WriteResponse(s, answer(key))
		s.Close()
	})
	return peer.AddrInfo{ID: h.ID(), Addrs: h.Addrs()}
}

func TestSearch_FederatedFindsPeersTitle(t *testing.T) {
	t.Parallel()
	c := New(t, 2)
	c.Connect(0, 1)
	h := file(t, c, 1, "Zebra.Crossing.2019.mkv", 40<<10)
	local := file(t, c, 0, "Local.Zebra.Notes.mkv", 30<<10)

	search := func(i int, q string) map[string]any {
		code, m := c.Nodes[i].Get("/api/search?" + q)
		if code != 200 {
			t.Fatalf("GET /api/search?%s = %d %v", q, code, m)
		}
		return m
	}
	// Node 1 finds its own file once indexed; node 0 does not have it.
	c.WaitFor("node 1 to index its file", 10*time.Second, func() bool {
		return len(hitsOf(search(1, "q=crossing"))) == 1
	})
	if hs := hitsOf(search(0, "q=crossing")); len(hs) != 0 {
		t.Fatalf("node 0 found %v locally", hs)
	}

	// Hostile peers connected to node 0: a wrong signer, a bad
	// signature, an oversized frame. Their answers are dropped.
	good := func(key crypto.PrivKey) []byte {
		hit, _ := protocol.NewSearchHit([]string{h.SHA256}, "Zebra Crossing forged", 1, "video")
		b, _ := protocol.SealSearch([]protocol.SearchHit{hit}, key)
		return b
	}
	other, _, _ := crypto.GenerateEd25519Key(nil)
	bad := []peer.AddrInfo{
		hostileSearcher(t, func(crypto.PrivKey) []byte { return good(other) }),
		hostileSearcher(t, func(key crypto.PrivKey) []byte {
			b := good(key)
			b[len(b)-1] ^= 1
			return b
		}),
		hostileSearcher(t, func(key crypto.PrivKey) []byte {
			env, _ := record.Seal(ptr(searchPayload(make([]byte, protocol.MaxSearchMessage))), key)
			b, _ := env.Marshal()
			return b
		}),
	}
	for _, ai := range bad {
		if err := c.Nodes[0].Node.Connect(t.Context(), ai); err != nil {
			t.Fatal(err)
		}
	}

	m := search(0, "q="+url.QueryEscape("zebra crossing")+"&federated=1")
	hs := hitsOf(m)
	if len(hs) != 2 {
		t.Fatalf("federated hits = %v, want the local one then node 1's", hs)
	}
	if hs[0]["source"] != "local" || hs[0]["cid"] != local.IPFS {
		t.Errorf("first hit = %v, want the local file", hs[0])
	}
	got := hs[1]
	if got["source"] != c.Nodes[1].PeerID || got["cid"] != h.IPFS || got["title"] == "Zebra Crossing forged" {
		t.Errorf("peer hit = %v, want %s from %s", got, h.IPFS, c.Nodes[1].PeerID)
	}
	if peers := strs(m["peers"]); !slices.Equal(peers, []string{c.Nodes[1].PeerID}) {
		t.Errorf("peers = %v, want only node 1 (hostile answers dropped)", peers)
	}
	if _, ok := got["filePath"]; ok {
		t.Errorf("a peer's hit carries a path: %v", got)
	}
	// Without federated=1 only the local hit.
	if hs := hitsOf(search(0, "q=zebra")); len(hs) != 1 {
		t.Errorf("local search = %v", hs)
	}
	// An IMDb ID written on node 1 (an outside writer's, a tool's) finds
	// the file there and, federated, from node 0.
	st := c.Nodes[1].Node.Store()
	root, err := st.GetByCID(t.Context(), h.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetFields(t.Context(), root, map[string]string{"imdbid": "tt7654321"}); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("node 1 to index the IMDb ID", 10*time.Second, func() bool {
		return len(hitsOf(search(1, "q=tt7654321"))) == 1
	})
	if hs := hitsOf(search(0, "q=tt7654321&federated=1")); len(hs) != 1 || hs[0]["cid"] != h.IPFS || hs[0]["source"] != c.Nodes[1].PeerID {
		t.Errorf("federated search by IMDb ID = %v, want node 1's file", hs)
	}
	// Errors.
	for _, q := range []string{"", "q=", "q=a&limit=0", "q=a&limit=101", "q=a&cursor=zz", "q=a&bogus=1", "q=a&federated=maybe"} {
		if code, m := c.Nodes[0].Get("/api/search?" + q); code != 400 || m["error"] == nil {
			t.Errorf("GET /api/search?%s = %d %v, want 400 with an error", q, code, m)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func hitsOf(m map[string]any) []map[string]any {
	raw, _ := m["hits"].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, x := range raw {
		if h, ok := x.(map[string]any); ok {
			out = append(out, h)
		}
	}
	return out
}

// Search protocol versions, both ways: node to node over 1.1.0 (the hit
// carries season, episode, episode title and IMDb ID), a node asking a
// peer that speaks 1.0.0 only (its hit comes without them), and peers
// asking a node in each version alone.
func TestSearch_Versions(t *testing.T) {
	t.Parallel()
	c := New(t, 2)
	c.Connect(0, 1)
	h := file(t, c, 1, "Breaking.Bad.S05E14.Ozymandias.720p.HDTV.mkv", 20<<10)
	st := c.Nodes[1].Node.Store()
	root, err := st.GetByCID(t.Context(), h.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetFields(t.Context(), root, map[string]string{"imdbid": "tt2301451"}); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("node 1 to index the IMDb ID", 10*time.Second, func() bool {
		_, m := c.Nodes[1].Get("/api/search?q=tt2301451")
		return len(hitsOf(m)) == 1
	})

	// A peer that speaks 1.0.0 alone, holding another file with the word.
	oldHit, _ := protocol.NewSearchHit([]string{file(t, c, 0, "scratch.bin", 1<<10).SHA256}, "Ozymandias Poems", 99, "text")
	oldPeer := hostileSearcher(t, func(key crypto.PrivKey) []byte {
		b, _ := protocol.SealSearch([]protocol.SearchHit{oldHit}, key)
		return b
	})
	if err := c.Nodes[0].Node.Connect(t.Context(), oldPeer); err != nil {
		t.Fatal(err)
	}
	_, m := c.Nodes[0].Get("/api/search?q=ozymandias&federated=1")
	byCID := map[string]map[string]any{}
	for _, hit := range hitsOf(m) {
		byCID[hit["cid"].(string)] = hit
	}
	got := byCID[h.IPFS]
	if got == nil || got["season"] != 5.0 || got["episode"] != 14.0 || got["episodeTitle"] != "Ozymandias" || got["imdbid"] != "tt2301451" {
		t.Errorf("node 1's hit over 1.1.0 = %v, want season 5, episode 14, its title and IMDb ID", got)
	}
	gotOld := byCID[oldHit.CID]
	if gotOld == nil || gotOld["source"] != oldPeer.ID.String() || gotOld["season"] != nil || gotOld["imdbid"] != nil {
		t.Errorf("the 1.0.0 peer's hit = %v, want its hit without details", gotOld)
	}

	// Askers of one version each, against node 1.
	asker, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { asker.Close() })
	ai, err := peer.AddrInfoFromString(c.Nodes[1].Node.P2PAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := asker.Connect(t.Context(), *ai); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{protocol.SearchProtocolID, protocol.SearchProtocolV11} {
		s, err := asker.NewStream(t.Context(), ai.ID, libp2pproto.ID(v))
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if err := protocol.WriteSearchRequest(s, protocol.SearchRequest{Q: "ozymandias", Limit: 5}); err != nil {
			t.Fatal(err)
		}
		s.CloseWrite()
		env, err := protocol.ReadResponse(s)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		s.Close()
		hits, err := protocol.OpenSearchAs(v, env, ai.ID, 5)
		if err != nil || len(hits) != 1 || hits[0].CID != h.IPFS {
			t.Fatalf("%s: %+v, %v; want node 1's file", v, hits, err)
		}
		detailed := hits[0].Season != nil && *hits[0].Season == 5 && hits[0].IMDbID == "tt2301451"
		if detailed != (v == protocol.SearchProtocolV11) {
			t.Errorf("%s: hit %+v (details only in 1.1.0)", v, hits[0])
		}
	}
}

// A household finds a peer's film by its IMDb ID (from the peer's NFO),
// and reads the film's poster's record from the peer by the CID the
// film's record links.
func TestSidecars_PosterRecordFromPeer(t *testing.T) {
	t.Parallel()
	c := New(t, 2)
	c.Connect(0, 1)
	c.AddFile(1, "Movies/Heat (1995)/poster.jpg", randBytes(t, 6<<10))
	c.AddFile(1, "Movies/Heat (1995)/Heat.1995.nfo", []byte(`<movie><title>Heat</title><uniqueid type="imdb">tt0113277</uniqueid></movie>`))
	film := file(t, c, 1, "Movies/Heat (1995)/Heat.1995.mkv", 50<<10)
	c.WaitFor("node 1 to link the poster and index the IMDb ID", 15*time.Second, func() bool {
		_, m := c.Nodes[1].Get("/api/search?q=tt0113277")
		art, _ := lookup(t, c, 1, film.SHA256)["art"].(map[string]any)
		return len(hitsOf(m)) == 1 && art["poster"] != nil
	})
	_, m := c.Nodes[0].Get("/api/search?q=tt0113277&federated=1")
	hs := hitsOf(m)
	if len(hs) != 1 || hs[0]["source"] != c.Nodes[1].PeerID || hs[0]["imdbid"] != "tt0113277" {
		t.Fatalf("federated search by IMDb ID = %v, want node 1's film", hs)
	}
	doc := lookup(t, c, 0, hs[0]["cid"].(string))
	art, _ := doc["art"].(map[string]any)
	poster, _ := art["poster"].(string)
	if doc["source"] != c.Nodes[1].PeerID || poster == "" {
		t.Fatalf("the film's record from node 1 = %v, want its poster's CID", doc)
	}
	pdoc := lookup(t, c, 0, poster)
	if pdoc["source"] != c.Nodes[1].PeerID || pdoc["canonical_cid"] != poster {
		t.Errorf("the poster's record = %v, want it from node 1", pdoc)
	}
}

// An NFO and a poster symlinked out of a household's library give its
// film nothing: a second household's lookup of the film returns neither
// the outside NFO's title and plot nor a poster, and a search for the
// outside title finds nothing.
func TestSidecars_NothingFromOutsideTheLibraryReachesAPeer(t *testing.T) {
	t.Parallel()
	c := New(t, 2)
	c.Connect(0, 1)
	outside := t.TempDir()
	nfo := filepath.Join(outside, "secret.nfo")
	if err := os.WriteFile(nfo, []byte("<movie><title>Zephyrsecret</title><plot>not for peers</plot></movie>"), 0o644); err != nil {
		t.Fatal(err)
	}
	jpg := filepath.Join(outside, "poster.jpg")
	if err := os.WriteFile(jpg, randBytes(t, 4<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(c.Nodes[1].Library, "Movies", "Leak (1977)")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for target, name := range map[string]string{nfo: "Leak (1977).nfo", jpg: "poster.jpg"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	film := file(t, c, 1, "Movies/Leak (1977)/Leak (1977).mkv", 40<<10)
	doc := lookup(t, c, 0, film.Canonical)
	if doc["source"] != c.Nodes[1].PeerID {
		t.Fatalf("the film's record came from %v, want node 1", doc["source"])
	}
	if s := fmt.Sprint(doc); strings.Contains(s, "Zephyrsecret") || strings.Contains(s, "not for peers") || doc["art"] != nil {
		t.Errorf("node 0 got what lies outside node 1's library: %v", doc)
	}
	if _, m := c.Nodes[0].Get("/api/search?q=zephyrsecret&federated=1"); len(hitsOf(m)) != 0 {
		t.Errorf("a search for the outside NFO's title found %v", hitsOf(m))
	}
}

// TestSearch_FederatedForgivesAndCompletes: the household a federated
// search asks answers by the same rules as a local search: a word's
// prefix, a typo, NxMM and a leading article find its episode, and its
// subtitle is never a hit of its own.
func TestSearch_FederatedForgivesAndCompletes(t *testing.T) {
	t.Parallel()
	c := New(t, 2)
	c.Connect(0, 1)
	ep := file(t, c, 1, "Lighthouse.Keepers.S01E02.mkv", 40<<10)
	sub := file(t, c, 1, "Lighthouse.Keepers.S01E02.en.srt", 2<<10)
	c.WaitFor("node 1 to index its episode", 10*time.Second, func() bool {
		_, m := c.Nodes[1].Get("/api/search?q=lighthouse")
		return hitFrom(m, ep.IPFS, "local")
	})
	for _, q := range []string{"lighth", "lighthuose keepers", "keepers 1x02", "the lighthouse keepers"} {
		m := federatedSearch(t, c, 0, q)
		if !hitFrom(m, ep.IPFS, c.Nodes[1].PeerID) {
			t.Errorf("%q: node 1's episode is not among %v", q, hitsOf(m))
		}
		for _, h := range hitsOf(m) {
			if h["cid"] == sub.IPFS {
				t.Errorf("%q: the subtitle is a hit of its own: %v", q, h)
			}
		}
	}
}
