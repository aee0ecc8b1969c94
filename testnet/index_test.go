package testnet

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/protocol"
)

// keyOf is the DHT key of a search token, as text.
func keyOf(token string) string { return protocol.SearchTokenKey(token).String() }

// providersOf are the peers node i finds providing key.
func providersOf(c *Cluster, i int, key string) []string {
	_, m := c.Nodes[i].Get("/api/providers/" + key)
	return strs(m["providers"])
}

// federatedSearch asks node i for q, federated, and fails on anything but 200.
func federatedSearch(t *testing.T, c *Cluster, i int, q string) map[string]any {
	t.Helper()
	code, m := c.Nodes[i].Get("/api/search?federated=1&q=" + url.QueryEscape(q))
	if code != 200 {
		t.Fatalf("node %d: federated search %q = %d %v", i, q, code, m)
	}
	return m
}

// hitFrom reports whether the search answer m holds a hit of cid from peer.
func hitFrom(m map[string]any, cid, peer string) bool {
	for _, h := range hitsOf(m) {
		if h["cid"] == cid && (h["source"] == peer || slices.Contains(strs(h["peers"]), peer)) {
			return true
		}
	}
	return false
}

// TestSearch_ThroughTheKeywordIndex: households holding a title provide
// its words' keys; a federated search from a household connected to none
// of them finds them through the index. A household with
// --search-index=false provides none (and is found only when connected);
// a word no local file holds any more leaves the keystore.
func TestSearch_ThroughTheKeywordIndex(t *testing.T) {
	t.Parallel()
	c := New(t, 6, Options{Configure: func(_ *Cluster, i int, cfg *node.Config) { cfg.NoSearchIndex = i == 5 }})
	c.Chain()
	const name = "Lighthouse.Keepers.2019.mkv"
	held := map[int]string{}
	for _, i := range []int{3, 4, 5} {
		held[i] = file(t, c, i, name, 30<<10+i).IPFS
	}
	for _, i := range []int{3, 4} {
		waiting.Until(t, fmt.Sprintf("node %d to provide its title's words", i), func() string {
			st := c.Nodes[i].Node.ProvideStats()
			if st.TokenKeys == 2 && st.CIDKeys == 1 && st.Keys == 3 {
				return ""
			}
			return fmt.Sprintf("%+v", st)
		})
	}
	for _, w := range []string{"lighthouse", "keepers"} {
		waiting.Until(t, "node 0 to find nodes 3 and 4 providing "+w, func() string {
			ps := providersOf(c, 0, keyOf(w))
			if slices.Contains(ps, c.Nodes[3].PeerID) && slices.Contains(ps, c.Nodes[4].PeerID) {
				return ""
			}
			return fmt.Sprintf("providers %v", ps)
		})
	}
	if body := metricsText(t, c, 3); !strings.Contains(body, "metamesh_provide_token_keys 2\n") {
		t.Errorf("node 3's metrics lack metamesh_provide_token_keys 2")
	}
	c.WaitFor("node 5 to provide its file's CID", 30*time.Second, func() bool { return c.Nodes[5].Node.ProvideStats().CIDKeys == 1 })
	if st := c.Nodes[5].Node.ProvideStats(); st.TokenKeys != 0 || st.Keys != 1 {
		t.Errorf("node 5 (--search-index=false) provides %d token keys, %d keys in all", st.TokenKeys, st.Keys)
	}
	if ps := providersOf(c, 0, keyOf("lighthouse")); slices.Contains(ps, c.Nodes[5].PeerID) {
		t.Errorf("node 5 (--search-index=false) is a provider of a token key: %v", ps)
	}

	// Node 0 is connected to none of the holders when it searches: the
	// index names them. (A DHT walk may connect them again between
	// searches; each try cuts those connections first.)
	var m map[string]any
	waiting.Until(t, "a search from node 0, connected to no holder, to find nodes 3 and 4 through the index", func() string {
		for _, i := range []int{3, 4, 5} {
			c.Nodes[0].Node.Disconnect(mustPeer(t, c.Nodes[i].PeerID))
		}
		m = federatedSearch(t, c, 0, "lighthouse keepers 2019")
		if hitFrom(m, held[3], c.Nodes[3].PeerID) && hitFrom(m, held[4], c.Nodes[4].PeerID) && m["fromIndex"].(float64) >= 2 {
			return ""
		}
		return fmt.Sprintf("asked %v, %v from the index, answered by %v, hits %v", m["asked"], m["fromIndex"], m["peers"], hitsOf(m))
	})
	if asked := m["asked"].(float64); asked < m["fromIndex"].(float64) {
		t.Errorf("asked %v households, %v of them from the index", asked, m["fromIndex"])
	}
	// A query of words that carry no key asks nobody from the index.
	if m := federatedSearch(t, c, 0, "2019 s01e01"); m["fromIndex"].(float64) != 0 {
		t.Errorf("a query of a year and an episode mark asked %v households from the index", m["fromIndex"])
	}

	// Node 4's file changes title: its old words leave its keystore, the
	// new one comes in.
	c.AddFile(4, "Solitude.2020.mkv", randBytes(t, 31<<10))
	if err := os.Remove(filepath.Join(c.Nodes[4].Library, name)); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("node 4's keystore to hold its new file's CID and word only", 30*time.Second, func() bool {
		st := c.Nodes[4].Node.ProvideStats()
		return st.TokenKeys == 1 && st.CIDKeys == 1 && st.Keys == 2
	})
	c.WaitFor("node 0 to find node 4 providing its new word", 30*time.Second, func() bool {
		return slices.Contains(providersOf(c, 0, keyOf("solitude")), c.Nodes[4].PeerID)
	})
}

// TestSearch_HostileIndexHousehold: a household that provides every token
// key is asked once per search, even though it is connected too; the
// first search does not wait on it past its budget (the other
// households' hits come back while its stream is still held open), and
// its forged answer to the second is dropped like any other.
func TestSearch_HostileIndexHousehold(t *testing.T) {
	t.Parallel()
	c := New(t, 3)
	c.Chain()
	held := file(t, c, 2, "Lighthouse.Keepers.2019.mkv", 33<<10).IPFS

	key, _, _ := crypto.GenerateEd25519Key(nil)
	h, err := libp2p.New(libp2p.Identity(key), libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	var asked, held0 atomic.Int64 // searches asked; streams held open now
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	// Its first answer never comes; its later ones are a hit of a file it
	// does not hold, signed by another key.
	other, _, _ := crypto.GenerateEd25519Key(nil)
	forged := func() []byte {
		hit, _ := protocol.NewSearchHit([]string{held}, "Lighthouse Keepers forged", 1, "video")
		b, _ := protocol.SealSearch([]protocol.SearchHit{hit}, other)
		return b
	}
	for _, v := range protocol.SearchProtocols {
		h.SetStreamHandler(libp2pproto.ID(v), func(s network.Stream) {
			if asked.Add(1) > 1 {
				_, _ = protocol.ReadSearchRequest(s)
				_ = protocol.WriteResponse(s, forged())
				s.Close()
				return
			}
			held0.Add(1)
			defer held0.Add(-1)
			<-release
			s.Reset()
		})
	}
	d, err := dht.New(h, dht.ProtocolPrefix(p2p.DHTPrefix), dht.Mode(dht.ModeServer))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	for _, m := range c.Nodes {
		ai, err := peer.AddrInfoFromString(m.Addr)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Connect(t.Context(), *ai); err != nil {
			t.Fatal(err)
		}
	}
	c.WaitFor("the hostile household's routing table", 30*time.Second, func() bool { return d.RoutingTable().Size() >= 3 })
	for _, w := range []string{"lighthouse", "keepers", "solitude", "night", "train"} {
		if err := d.Provide(t.Context(), protocol.SearchTokenKey(w), true); err != nil {
			t.Fatal(err)
		}
	}
	c.WaitFor("node 0 to find the hostile household and node 2 providing the title's words", 30*time.Second, func() bool {
		ps := providersOf(c, 0, keyOf("keepers"))
		return slices.Contains(ps, h.ID().String()) && slices.Contains(ps, c.Nodes[2].PeerID)
	})
	for k := int64(1); k <= 2; k++ {
		m := federatedSearch(t, c, 0, "lighthouse keepers")
		if !hitFrom(m, held, c.Nodes[2].PeerID) {
			t.Errorf("search %d: node 2's hit missing: %v", k, hitsOf(m))
		}
		if got := asked.Load(); got != k {
			t.Errorf("after %d searches the hostile household was asked %d times", k, got)
		}
		if held0.Load() != 1 {
			t.Errorf("search %d: the hostile household's first stream is not held open (%d are)", k, held0.Load())
		}
		if slices.Contains(strs(m["peers"]), h.ID().String()) {
			t.Errorf("search %d: the hostile household is named as answering", k)
		}
		for _, hit := range hitsOf(m) {
			if hit["title"] == "Lighthouse Keepers forged" || slices.Contains(strs(hit["peers"]), h.ID().String()) {
				t.Errorf("search %d: the forged answer made it in: %v", k, hit)
			}
		}
	}
}

func mustPeer(t *testing.T, s string) peer.ID {
	t.Helper()
	id, err := peer.Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
