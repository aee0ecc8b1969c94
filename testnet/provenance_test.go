package testnet

import (
	"context"
	"crypto/sha256"
	"net/url"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/protocol"
)

// madeUpBefore is a dag-pb CID of no bytes at all that would win the
// election over c as a vouched member.
func madeUpBefore(t *testing.T, c string) string {
	t.Helper()
	for i := 0; ; i++ {
		sum := sha256.Sum256(randBytes(t, 32))
		mh, err := multihash.Encode(sum[:], multihash.SHA2_256)
		if err != nil {
			t.Fatal(err)
		}
		if d := cid.NewCidV1(cid.DagProtobuf, mh).String(); protocol.Canonical([]string{c, d}) == d {
			return d
		}
	}
}

// The relabelling attack on three real nodes: A holds a file, M (a
// hostile host) pairs the file's sha2-256 with a dag-pb CID it made up,
// one that would win the election over the file's canonical CID, and C
// asks A. A merges
// M's record when a lookup of the made-up CID reaches M; A keeps its own
// canonical CID, lists M as the only peer vouching for the made-up one,
// and neither its record nor its search hits carry it to C. A lookup of
// the made-up CID from C is answered by M, not by A.
func TestProvenance_NoPeerRelabelsAFile(t *testing.T) {
	t.Parallel()
	c := New(t, 2, Options{LookupTimeout: 3 * time.Second})
	a, asker := c.Nodes[0], c.Nodes[1]
	h := file(t, c, 0, "Relabel.Target.2019.mkv", 6000)
	fab := madeUpBefore(t, h.Canonical)

	asked := make(chan string, 16)
	m, _ := hostile(t, func(s network.Stream, key crypto.PrivKey, got string) {
		asked <- got
		defer s.Close()
		if got != fab {
			_ = protocol.WriteResponse(s, nil)
			return
		}
		id, _ := peer.IDFromPrivateKey(key)
		rec, err := protocol.NewRecord([]string{h.SHA256, fab}, map[string]string{"title": "Relabelled"}, id, time.Now())
		if err != nil {
			t.Error(err)
			return
		}
		env, err := protocol.SealRecord(rec, key)
		if err != nil {
			t.Error(err)
			return
		}
		_ = protocol.WriteResponse(s, env)
	})
	mAddr, _ := peer.AddrInfoFromString(m.Addrs()[0].String() + "/p2p/" + m.ID().String())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, n := range []*Member{a, asker} {
		if err := n.Node.Connect(ctx, *mAddr); err != nil {
			t.Fatal(err)
		}
	}
	c.Connect(0, 1)

	// A's lookup of the made-up CID reaches M, whose record A merges.
	code, doc := a.Get("/api/meta/" + url.PathEscape(fab))
	if code != 200 {
		t.Fatalf("A's lookup of the made-up CID = %d %v", code, doc)
	}
	if doc["source"] != "local" || doc["canonical_cid"] != h.Canonical || !slices.Contains(strs(doc["cids"]), fab) {
		t.Errorf("A's document after M's record: source %v canonical %v cids %v; want local, %s, with %s in the key-set",
			doc["source"], doc["canonical_cid"], doc["cids"], h.Canonical, fab)
	}
	if want := []string{m.ID().String()}; !reflect.DeepEqual(strs(doc["providers"]), want) {
		t.Errorf("A names providers %v for the made-up CID, want only M %v", doc["providers"], want)
	}
	learned, _ := doc["learned"].(map[string]any)
	if len(learned) != 1 || !reflect.DeepEqual(strs(learned[fab]), []string{m.ID().String()}) {
		t.Errorf("A's learned = %v, want %s from M only", doc["learned"], fab)
	}
	_, own := a.Get("/api/meta/" + h.SHA256 + "?local=1")
	if own["canonical_cid"] != h.Canonical {
		t.Errorf("A's canonical CID of its file is %v, want %s", own["canonical_cid"], h.Canonical)
	}

	// C asks A for the file: A's signed record carries what A vouches for.
	code, cdoc := asker.Get("/api/meta/" + h.SHA256)
	if code != 200 || cdoc["source"] != a.PeerID {
		t.Fatalf("C's lookup of the file = %d, source %v; want A %s", code, cdoc["source"], a.PeerID)
	}
	if slices.Contains(strs(cdoc["cids"]), fab) || cdoc["canonical_cid"] != h.Canonical {
		t.Errorf("C's view of A's file: canonical %v cids %v; it carries M's member %s", cdoc["canonical_cid"], cdoc["cids"], fab)
	}
	// A's hit, from C's store (it merged A's record) or from A's answer to
	// a federated search; a loaded machine may drop the first answer.
	var hit map[string]any
	c.WaitFor("C's search to find A's file", 30*time.Second, func() bool {
		code, res := asker.Get("/api/search?federated=1&q=relabel+target")
		hits, _ := res["hits"].([]any)
		for _, x := range hits {
			hm, _ := x.(map[string]any)
			if code == 200 && slices.Contains(strs(hm["cids"]), h.SHA256) {
				hit = hm
				return true
			}
		}
		return false
	})
	if slices.Contains(strs(hit["cids"]), fab) || hit["cid"] != h.Canonical {
		t.Errorf("C's search hit of A's file: cid %v cids %v", hit["cid"], hit["cids"])
	}

	// C asks for the made-up CID: A answers nothing, M answers.
	for len(asked) > 0 {
		<-asked
	}
	code, fdoc := asker.Get("/api/meta/" + url.PathEscape(fab))
	if code != 200 || fdoc["source"] != m.ID().String() {
		t.Fatalf("C's lookup of the made-up CID = %d, source %v; want M %s", code, fdoc["source"], m.ID())
	}
	if ps := strs(fdoc["providers"]); slices.Contains(ps, a.PeerID) {
		t.Errorf("C names A among the providers of the made-up CID: %v", ps)
	}
	if len(asked) == 0 {
		t.Errorf("C's lookup of the made-up CID did not reach M")
	}
}
