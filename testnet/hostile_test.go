package testnet

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/core/record"
	"github.com/multiformats/go-varint"

	"github.com/metamesh/node/protocol"
)

// rawPayload is a record payload of the test's own making, sealed as a
// record envelope (domain and payload type of the record protocol).
type rawPayload []byte

func (rawPayload) Domain() string                    { return protocol.RecordDomain }
func (rawPayload) Codec() []byte                     { return []byte(protocol.RecordProtocolID) }
func (r rawPayload) MarshalRecord() ([]byte, error)  { return r, nil }
func (r *rawPayload) UnmarshalRecord(b []byte) error { *r = b; return nil }

// hostile is a raw libp2p host on loopback whose record handler misbehaves.
func hostile(t *testing.T, handler func(s network.Stream, key crypto.PrivKey, asked string)) (host.Host, crypto.PrivKey) {
	t.Helper()
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	h, err := libp2p.New(libp2p.Identity(key), libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	h.SetStreamHandler(libp2pproto.ID(protocol.RecordProtocolID), func(s network.Stream) {
		asked, _ := protocol.ReadRequest(bufio.NewReader(s))
		handler(s, key, asked)
	})
	return h, key
}

// randomCID is a sha2-256 CID of random bytes: a file nobody has.
func randomCID(t *testing.T) string {
	sum := sha256.Sum256(randBytes(t, 32))
	c, err := protocol.SHA256CID(sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return c.String()
}

func sealRaw(t *testing.T, key crypto.PrivKey, payload any) []byte {
	b, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	env, err := record.Seal((*rawPayload)(&b), key)
	if err != nil {
		t.Fatal(err)
	}
	out, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Hostile answers to a lookup: each is rejected within the lookup
// deadline, the lookup answers 404 and nothing is stored.
func TestHostilePeers_Records(t *testing.T) {
	t.Parallel()
	const other = "bafkreie5cvv4h45wf6mwg6ffzrjewplktv5pdfqkbkfhjzucgqpi7pc3uu"
	const v0 = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG"
	now := time.Now().UTC().Format(time.RFC3339)
	honest := func(key crypto.PrivKey, cids []string, canon string) map[string]any {
		id, _ := peer.IDFromPrivateKey(key)
		return map[string]any{"cid": canon, "cids": cids, "meta": map[string]string{}, "peer": id.String(), "time": now}
	}
	write := func(s network.Stream, b []byte) {
		_ = protocol.WriteResponse(s, b)
		s.Close()
	}
	cases := []struct {
		name    string
		handler func(t *testing.T, s network.Stream, key crypto.PrivKey, asked string)
	}{
		{"oversized message", func(t *testing.T, s network.Stream, _ crypto.PrivKey, asked string) {
			s.Write(varint.ToUvarint(2 << 20))
			s.Write(make([]byte, 64<<10))
			s.Close()
		}},
		{"truncated varint", func(t *testing.T, s network.Stream, _ crypto.PrivKey, asked string) {
			s.Write([]byte{0xff, 0xff})
			s.Close()
		}},
		{"bad signature", func(t *testing.T, s network.Stream, key crypto.PrivKey, asked string) {
			env := sealRaw(t, key, honest(key, []string{asked}, asked))
			env[len(env)-5] ^= 0xff
			write(s, env)
		}},
		{"signer is not the stream's peer", func(t *testing.T, s network.Stream, _ crypto.PrivKey, asked string) {
			other, _, _ := crypto.GenerateEd25519Key(rand.Reader)
			write(s, sealRaw(t, other, honest(other, []string{asked}, asked)))
		}},
		{"record without the asked CID", func(t *testing.T, s network.Stream, key crypto.PrivKey, asked string) {
			write(s, sealRaw(t, key, honest(key, []string{other}, other)))
		}},
		{"non-canonical CID", func(t *testing.T, s network.Stream, key crypto.PrivKey, asked string) {
			write(s, sealRaw(t, key, honest(key, []string{asked, v0}, asked)))
		}},
		{"invalid CID", func(t *testing.T, s network.Stream, key crypto.PrivKey, asked string) {
			write(s, sealRaw(t, key, honest(key, []string{asked, "bafkreinotacid"}, asked)))
		}},
		{"cid is not the canonical of cids", func(t *testing.T, s network.Stream, key crypto.PrivKey, asked string) {
			cids := []string{asked, other}
			wrong := asked
			if protocol.Canonical(cids) == asked {
				wrong = other
			}
			write(s, sealRaw(t, key, honest(key, cids, wrong)))
		}},
		{"meta key the store cannot keep", func(t *testing.T, s network.Stream, key crypto.PrivKey, asked string) {
			rec := honest(key, []string{asked}, asked)
			rec["meta"] = map[string]string{"title": "Forged", "a//b": "x", "/lead": "x", "trail/": "x"}
			write(s, sealRaw(t, key, rec))
		}},
		{"never answers", func(t *testing.T, s network.Stream, _ crypto.PrivKey, asked string) {
			time.Sleep(time.Minute)
		}},
	}
	c := New(t, 1, Options{LookupTimeout: 2 * time.Second})
	target := c.Nodes[0]
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			asked := randomCID(t)
			var calls atomic.Int32
			h, _ := hostile(t, func(s network.Stream, key crypto.PrivKey, got string) {
				calls.Add(1)
				tc.handler(t, s, key, got)
			})
			ai, _ := peer.AddrInfoFromString(h.Addrs()[0].String() + "/p2p/" + h.ID().String())
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := target.Node.Connect(ctx, *ai); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			code, m := target.Get("/api/meta/" + asked)
			took := time.Since(start)
			if code != 404 {
				t.Errorf("lookup = %d %v, want 404", code, m)
			}
			if calls.Load() == 0 {
				t.Fatal("the hostile peer was never asked")
			}
			t.Logf("rejected; the lookup answered after %s (deadline 2s)", took)
			if n, err := target.Node.Store().Roots(context.Background()); err != nil || n != 0 {
				t.Errorf("roots after a hostile answer: %d %v", n, err)
			}
			target.Node.Disconnect(h.ID())
		})
	}
}

// A peer that floods the record protocol gets its extra streams reset,
// and the node keeps answering others.
func TestHostilePeers_StreamFlood(t *testing.T) {
	t.Parallel()
	c := New(t, 2, Options{LookupTimeout: 3 * time.Second})
	c.Chain()
	h := file(t, c, 0, "film.bin", 5000)
	h2, _ := hostile(t, func(network.Stream, crypto.PrivKey, string) {})
	ai, _ := peer.AddrInfoFromString(c.Nodes[0].Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h2.Connect(ctx, *ai); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	reset := 0
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := h2.NewStream(ctx, ai.ID, libp2pproto.ID(protocol.RecordProtocolID))
			if err != nil {
				return
			}
			// Never send the request: the stream stays open on the node
			// until its deadline, unless it was refused at once.
			s.SetReadDeadline(time.Now().Add(2 * time.Second))
			buf := make([]byte, 1)
			if _, err := s.Read(buf); errors.Is(err, network.ErrReset) {
				mu.Lock()
				reset++
				mu.Unlock()
			}
			s.Reset()
		}()
	}
	wg.Wait()
	if reset == 0 {
		t.Error("no flooding stream was reset")
	}
	t.Logf("%d of 64 flooding streams were reset", reset)
	// An honest peer still gets its answer.
	doc := lookup(t, c, 1, h.Canonical)
	if doc["source"] != c.Nodes[0].PeerID {
		t.Errorf("honest lookup during a flood: %v", doc["source"])
	}
}

// A peer that answers a search with more hits than it was asked for is
// dropped whole; the hits of peers that keep to the limit are merged, at
// most limit of them in all, and one peer's answer does not crowd out
// another's.
func TestHostilePeers_SearchTooManyHits(t *testing.T) {
	t.Parallel()
	c := New(t, 2)
	c.Connect(0, 1)
	h := file(t, c, 1, "Zebra.Crossing.2019.mkv", 40<<10)
	c.WaitFor("node 1 to index its file", 10*time.Second, func() bool {
		_, m := c.Nodes[1].Get("/api/search?q=crossing")
		return len(hitsOf(m)) == 1
	})
	const flood = 5
	var asked atomic.Int32
	forged := hostileSearcher(t, func(key crypto.PrivKey) []byte {
		asked.Add(1)
		var hits []protocol.SearchHit
		for i := range flood {
			hit, err := protocol.NewSearchHit([]string{randomCID(t)}, fmt.Sprintf("Zebra Crossing forged %d", i), 1, "video")
			if err != nil {
				t.Error(err)
			}
			hits = append(hits, hit)
		}
		b, err := protocol.SealSearch(hits, key)
		if err != nil {
			t.Error(err)
		}
		return b
	})
	if err := c.Nodes[0].Node.Connect(t.Context(), forged); err != nil {
		t.Fatal(err)
	}
	search := func(limit int) (hits []map[string]any, peers []string) {
		t.Helper()
		q := fmt.Sprintf("/api/search?q=%s&federated=1&limit=%d", url.QueryEscape("zebra crossing"), limit)
		code, m := c.Nodes[0].Get(q)
		if code != 200 {
			t.Fatalf("GET %s = %d %v", q, code, m)
		}
		return hitsOf(m), strs(m["peers"])
	}
	// Asked for 1, it sends 5: nothing of it is merged.
	hits, peers := search(1)
	if asked.Load() == 0 {
		t.Fatal("the hostile peer was never asked")
	}
	if len(hits) != 1 || hits[0]["cid"] != h.IPFS || hits[0]["source"] != c.Nodes[1].PeerID {
		t.Errorf("limit 1: hits = %v, want only node 1's file", hits)
	}
	if !slices.Equal(peers, []string{c.Nodes[1].PeerID}) {
		t.Errorf("limit 1: peers = %v, want only node 1 (the answer over the limit dropped)", peers)
	}
	// Asked for 5, it sends 5: both answers verify, 6 distinct hits, and
	// the page keeps 5 of them, node 1's among them.
	hits, peers = search(flood)
	if len(hits) != flood {
		t.Errorf("limit %d: %d hits, want %d (peers' hits capped at the limit)", flood, len(hits), flood)
	}
	found := false
	for _, hit := range hits {
		found = found || hit["cid"] == h.IPFS
	}
	if !found {
		t.Errorf("limit %d: node 1's hit crowded out by the other peer's: %v", flood, hits)
	}
	if want := []string{c.Nodes[1].PeerID, forged.ID.String()}; !slices.Equal(sorted(peers), sorted(want)) {
		t.Errorf("limit %d: peers = %v, want %v", flood, peers, want)
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// A peer that trickles its request (one byte per 500 ms) has its stream
// reset once the request's own deadline passes, though the request would
// be complete well within the whole exchange's deadline; an honest lookup
// meanwhile still gets its answer.
func TestHostilePeers_SlowRequest(t *testing.T) {
	t.Parallel()
	c := New(t, 2, Options{LookupTimeout: 5 * time.Second})
	c.Connect(0, 1)
	h := file(t, c, 0, "film.bin", 5000)
	slow, _ := hostile(t, func(network.Stream, crypto.PrivKey, string) {})
	ai, _ := peer.AddrInfoFromString(c.Nodes[0].Addr)
	if err := slow.Connect(t.Context(), *ai); err != nil {
		t.Fatal(err)
	}
	search := []byte(`{"q":"film","limit":1}`)
	for _, tc := range []struct {
		proto   string
		request []byte
	}{
		{protocol.RecordProtocolID, append(varint.ToUvarint(uint64(len(h.Canonical))), h.Canonical...)},
		{protocol.SearchProtocolID, append(varint.ToUvarint(uint64(len(search))), search...)},
	} {
		t.Run(tc.proto, func(t *testing.T) {
			s, err := slow.NewStream(t.Context(), ai.ID, libp2pproto.ID(tc.proto))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Reset()
			// All but the last 6 bytes at once, then one byte per 500 ms:
			// the request is complete after about 3 s, within the
			// exchange's deadline (5 s for search, 10 s for records) but
			// past the request's.
			head, tail := tc.request[:len(tc.request)-6], tc.request[len(tc.request)-6:]
			result := make(chan error, 1)
			go func() {
				if _, err := s.Write(head); err != nil {
					result <- err
					return
				}
				for _, b := range tail {
					time.Sleep(500 * time.Millisecond)
					if _, err := s.Write([]byte{b}); err != nil {
						result <- err
						return
					}
				}
				if err := s.CloseWrite(); err != nil {
					result <- err
					return
				}
				_ = s.SetReadDeadline(time.Now().Add(30 * time.Second))
				body, err := protocol.ReadResponse(bufio.NewReader(s))
				if err == nil {
					err = fmt.Errorf("answered (%d bytes)", len(body))
				}
				result <- err
			}()
			// Meanwhile an honest peer's lookup is answered.
			doc := lookup(t, c, 1, h.SHA256)
			if doc["source"] != c.Nodes[0].PeerID {
				t.Errorf("honest lookup during a slow request: %v", doc["source"])
			}
			if err := <-result; !errors.Is(err, network.ErrReset) {
				t.Errorf("trickled request: %v, want the stream reset", err)
			}
		})
	}
}

// A record pairing two files the node holds, whose bytes differ, is
// refused whole; the lookup's 404 says so, and both files keep their CIDs.
func TestHostilePeers_RecordJoiningLocalFiles(t *testing.T) {
	t.Parallel()
	c := New(t, 1, Options{LookupTimeout: 2 * time.Second})
	target := c.Nodes[0]
	a := file(t, c, 0, "a.bin", 5000)
	b := file(t, c, 0, "b.bin", 6000)
	asked := randomCID(t)
	h, _ := hostile(t, func(s network.Stream, key crypto.PrivKey, got string) {
		id, _ := peer.IDFromPrivateKey(key)
		cids := []string{got, a.SHA256, b.SHA256}
		slices.Sort(cids)
		rec := map[string]any{"cid": protocol.Canonical(cids), "cids": cids, "meta": map[string]string{},
			"peer": id.String(), "time": time.Now().UTC().Format(time.RFC3339)}
		_ = protocol.WriteResponse(s, sealRaw(t, key, rec))
		s.Close()
	})
	ai, _ := peer.AddrInfoFromString(h.Addrs()[0].String() + "/p2p/" + h.ID().String())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := target.Node.Connect(ctx, *ai); err != nil {
		t.Fatal(err)
	}
	code, m := target.Get("/api/meta/" + asked)
	if msg, _ := m["error"].(string); code != 404 || !strings.Contains(msg, "refused") {
		t.Errorf("lookup = %d %v, want a 404 saying the record was refused", code, m)
	}
	for _, f := range []struct{ sha, name string }{{a.SHA256, "a.bin"}, {b.SHA256, "b.bin"}} {
		_, doc := target.Get("/api/meta/" + f.sha + "?local=1")
		if p, _ := doc["filePath"].(string); !strings.HasSuffix(p, f.name) || slices.Contains(strs(doc["cids"]), asked) {
			t.Errorf("%s after the hostile record: filePath %v cids %v", f.name, doc["filePath"], doc["cids"])
		}
	}
}
