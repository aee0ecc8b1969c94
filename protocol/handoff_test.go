package protocol_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/protocol"
)

func handoffPeer(t testing.TB, seed byte) peer.ID {
	t.Helper()
	key, _, err := crypto.GenerateEd25519Key(bytes.NewReader(bytes.Repeat([]byte{seed}, 64)))
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestHandoff_RoundTrip(t *testing.T) {
	k := protocol.SearchTokenKey("zyzzogeton").Hash()
	p := handoffPeer(t, 1)
	recs := []protocol.HandoffRecord{{Key: k, Providers: []protocol.HandoffProvider{
		{ID: p, Addrs: []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/4001")}, TTL: 3600},
	}}}
	var buf bytes.Buffer
	if err := protocol.WriteHandoff(&buf, recs); err != nil {
		t.Fatal(err)
	}
	if err := protocol.WriteHandoff(&buf, recs); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := protocol.ReadHandoff(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || !bytes.Equal(got[0].Key, k) || got[0].Providers[0].ID != p || got[0].Providers[0].TTL != 3600 ||
			got[0].Providers[0].Addrs[0].String() != "/ip4/127.0.0.1/tcp/4001" {
			t.Fatalf("read back %+v", got)
		}
	}
	if _, err := protocol.ReadHandoff(&buf); err != io.EOF {
		t.Fatalf("after the last message: %v, want io.EOF", err)
	}
}

func TestHandoff_Refused(t *testing.T) {
	k := protocol.SearchTokenKey("quarry").Hash().B58String()
	p := handoffPeer(t, 2).String()
	rec := func(key, id string, ttl string) string {
		return `{"records":[{"key":"` + key + `","providers":[{"id":"` + id + `","ttl":` + ttl + `}]}]}`
	}
	many := `{"records":[` + strings.Repeat(`{"key":"`+k+`","providers":[{"id":"`+p+`","ttl":1}]},`, protocol.MaxHandoffRecords) + `{"key":"` + k + `","providers":[{"id":"` + p + `","ttl":1}]}]}`
	for _, tc := range []struct{ name, body string }{
		{"not JSON", "nope"},
		{"no records", `{"records":[]}`},
		{"unknown field", `{"records":[],"x":1}`},
		{"trailing data", rec(k, p, "5") + `{}`},
		{"bad key", rec("zz", p, "5")},
		{"bad peer", rec(k, "12D3Koo", "5")},
		{"ttl zero", rec(k, p, "0")},
		{"ttl too long", rec(k, p, "172801")},
		{"no providers", `{"records":[{"key":"` + k + `","providers":[]}]}`},
		{"bad address", `{"records":[{"key":"` + k + `","providers":[{"id":"` + p + `","addrs":["/nope"],"ttl":5}]}]}`},
		{"too many records", many},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := protocol.ParseHandoff([]byte(tc.body)); !errors.Is(err, protocol.ErrBadHandoff) {
				t.Fatalf("ParseHandoff(%.80q) = %v, want ErrBadHandoff", tc.body, err)
			}
		})
	}
	if _, err := protocol.ParseHandoff([]byte(rec(k, p, "172800"))); err != nil {
		t.Errorf("the longest TTL was refused: %v", err)
	}
	// A length prefix above the cap is refused before the body is read.
	big := []byte{0x81, 0x80, 0x80, 0x01}
	if _, err := protocol.ReadHandoff(bytes.NewReader(big)); !errors.Is(err, protocol.ErrTooLarge) {
		t.Errorf("oversized prefix: %v, want ErrTooLarge", err)
	}
	if _, err := protocol.ReadHandoff(bytes.NewReader([]byte{5, '{'})); !errors.Is(err, protocol.ErrBadFrame) {
		t.Errorf("truncated body: %v, want ErrBadFrame", err)
	}
	var buf bytes.Buffer
	if err := protocol.WriteHandoff(&buf, []protocol.HandoffRecord{{Key: multihash.Multihash("xx"), Providers: []protocol.HandoffProvider{{ID: handoffPeer(t, 3), TTL: 1}}}}); err == nil {
		t.Error("a record with a bad key was written")
	}
}

func FuzzReadHandoff(f *testing.F) {
	k := protocol.SearchTokenKey("seed").Hash().B58String()
	f.Add([]byte(`{"records":[{"key":"` + k + `","providers":[{"id":"12D3KooWLS2jrivkzb6s9y3qiwXtppXyi3Cma8EFsehX2AhfPPCH","addrs":["/ip4/1.2.3.4/tcp/1"],"ttl":60}]}]}`))
	f.Add([]byte(`{"records":[]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		recs, err := protocol.ParseHandoff(body)
		if err != nil {
			return
		}
		// What parses writes back, and reads back the same.
		var buf bytes.Buffer
		if err := protocol.WriteHandoff(&buf, recs); err != nil {
			if errors.Is(err, protocol.ErrTooLarge) {
				return
			}
			t.Fatalf("a parsed message does not write: %v", err)
		}
		again, err := protocol.ReadHandoff(&buf)
		if err != nil || len(again) != len(recs) {
			t.Fatalf("round trip: %d records, %v (had %d)", len(again), err, len(recs))
		}
	})
}
