package testnet

import (
	"net/url"
	"slices"
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
