package protocol_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/record"

	"github.com/metamesh/node/protocol"
)

// A 1.2.0 answer carries the name beside 1.1.0's hits; the same answer
// sealed for 1.1.0 or 1.0.0 (what an older peer is answered with, on the
// stream it opened) is byte for byte the answer without a name.
func TestSearch_V12Name(t *testing.T) {
	fx := fixedFixture(t)
	h := detailedHit(t, fx)
	a := protocol.SearchAnswer{Name: "Alice's NAS", Hits: []protocol.SearchHit{h}}
	v12, err := protocol.SealSearchAnswer(protocol.SearchProtocolV12, a, fx.key)
	if err != nil {
		t.Fatal(err)
	}
	got, err := protocol.OpenSearchAnswer(protocol.SearchProtocolV12, v12, fx.id, 1)
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("1.2.0 = %+v, %v; want %+v", got, err, a)
	}
	for _, v := range []string{protocol.SearchProtocolV11, protocol.SearchProtocolID} {
		named, err := protocol.SealSearchAnswer(v, a, fx.key)
		if err != nil {
			t.Fatal(err)
		}
		bare, err := protocol.SealSearchAs(v, a.Hits, fx.key)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(named, bare) {
			t.Errorf("%s: a named answer differs from the bare one", v)
		}
		if _, err := protocol.OpenSearchAs(v, v12, fx.id, 1); !errors.Is(err, protocol.ErrWrongSearchPayloadType) {
			t.Errorf("1.2.0 envelope on a %s stream: %v", v, err)
		}
	}
	empty, err := protocol.SealSearchAnswer(protocol.SearchProtocolV12, protocol.SearchAnswer{}, fx.key)
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := record.UnmarshalEnvelope(empty); string(e.RawPayload) != `{"hits":[]}` {
		t.Errorf("empty 1.2.0 payload = %s", e.RawPayload)
	}
	if _, err := protocol.SealSearchAnswer(protocol.SearchProtocolV12, protocol.SearchAnswer{Name: "a\x1bb"}, fx.key); !errors.Is(err, protocol.ErrBadName) {
		t.Errorf("seal with a control character: %v, want ErrBadName", err)
	}
}

// A 1.2.0 answer is refused for its shape, never for its name, which is
// cleaned.
func TestOpenSearch_V12Hostile(t *testing.T) {
	fx := fixedFixture(t)
	hit := `{"cid":"` + fx.pb + `","title":"x","size":1,"fileType":"video","cids":["` + fx.pb + `","` + fx.sha + `"]}`
	if fx.sha < fx.pb {
		hit = `{"cid":"` + fx.pb + `","title":"x","size":1,"fileType":"video","cids":["` + fx.sha + `","` + fx.pb + `"]}`
	}
	for _, tc := range []struct {
		name, payload string
		wantName      string
		ok            bool
	}{
		{"no name", `{"hits":[` + hit + `]}`, "", true},
		{"name", `{"name":"Alice","hits":[` + hit + `]}`, "Alice", true},
		{"long name", `{"name":"` + strings.Repeat("n", 1000) + `","hits":[]}`, strings.Repeat("n", protocol.MaxName), true},
		{"control characters", `{"name":"A\u001b[31m\nB\u202e","hits":[]}`, "A[31mB", true},
		{"name a number", `{"name":5,"hits":[]}`, "", false},
		{"no hits", `{"name":"Alice"}`, "", false},
		{"null hits", `{"hits":null}`, "", false},
		{"a bare list", `[` + hit + `]`, "", false},
		{"unknown field", `{"hits":[],"peer":"x"}`, "", false},
		{"data after", `{"hits":[]}]`, "", false},
		{"a bad hit", `{"hits":[{"cid":"x"}]}`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := sealRaw(t, fx.key, protocol.SearchDomain, protocol.SearchProtocolV12, []byte(tc.payload))
			got, err := protocol.OpenSearchAnswer(protocol.SearchProtocolV12, env, fx.id, 5)
			if (err == nil) != tc.ok {
				t.Fatalf("%+v, %v; want ok %v", got, err, tc.ok)
			}
			if !tc.ok {
				if !errors.Is(err, protocol.ErrMalformedHits) || !reflect.DeepEqual(got, protocol.SearchAnswer{}) {
					t.Errorf("%+v, %v; want ErrMalformedHits and nothing", got, err)
				}
				return
			}
			if got.Name != tc.wantName {
				t.Errorf("name = %q, want %q", got.Name, tc.wantName)
			}
		})
	}
}

// TestSearch_GoldenVectorV12 pins a 1.2.0 answer that carries a name
// (testdata/search-vector-1.2.0.txt); search-vector.txt keeps 1.0.0 and
// 1.1.0.
func TestSearch_GoldenVectorV12(t *testing.T) {
	fx := fixedFixture(t)
	seed, err := fx.key.Raw()
	if err != nil {
		t.Fatal(err)
	}
	a := protocol.SearchAnswer{Name: "Alice's NAS", Hits: []protocol.SearchHit{detailedHit(t, fx)}}
	env, err := protocol.SealSearchAnswer(protocol.SearchProtocolV12, a, fx.key)
	if err != nil {
		t.Fatal(err)
	}
	var req, resp bytes.Buffer
	if err := protocol.WriteSearchRequest(&req, protocol.SearchRequest{Q: "show name", Limit: 20}); err != nil {
		t.Fatal(err)
	}
	if err := protocol.WriteResponse(&resp, env); err != nil {
		t.Fatal(err)
	}
	e, err := record.UnmarshalEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	golden := checkVector(t, filepath.Join("testdata", "search-vector-1.2.0.txt"), `# The search protocol, /metamesh/search/1.2.0: one request and its answer,
# which carries the household's name (see doc.go). The lines mean what they
# mean in search-vector.txt; the request is the same message as before.
`, [][2]string{
		{"ed25519-seed", hex.EncodeToString(seed[:32])},
		{"peer", fx.id.String()},
		{"request", hex.EncodeToString(req.Bytes())},
		{"payload-1.2.0", string(e.RawPayload)},
		{"response-1.2.0", hex.EncodeToString(resp.Bytes())},
	})
	b, _ := hex.DecodeString(golden["response-1.2.0"])
	body, err := protocol.ReadResponse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	got, err := protocol.OpenSearchAnswer(protocol.SearchProtocolV12, body, fx.id, 20)
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("OpenSearchAnswer(golden) = %+v, %v; want %+v", got, err, a)
	}
}

// FuzzOpenSearchAnswer signs data as a 1.2.0 payload, so the fuzzer
// reaches the answer's shape and its name behind the signature.
func FuzzOpenSearchAnswer(f *testing.F) {
	fx := fixedFixture(f)
	h, _ := protocol.NewSearchHit([]string{fx.pb, fx.sha}, "title", 1, "video")
	env, _ := protocol.SealSearchAnswer(protocol.SearchProtocolV12, protocol.SearchAnswer{Name: "Alice", Hits: []protocol.SearchHit{h}}, fx.key)
	e, _ := record.UnmarshalEnvelope(env)
	f.Add(e.RawPayload)
	f.Add([]byte(`{"name":"\u0000\u202e` + strings.Repeat("é", 40) + `","hits":[]}`))
	f.Add([]byte(`{"hits":[],"hits":[]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > protocol.MaxSearchMessage/2 {
			return
		}
		env := sealRaw(t, fx.key, protocol.SearchDomain, protocol.SearchProtocolV12, data)
		a, err := protocol.OpenSearchAnswer(protocol.SearchProtocolV12, env, fx.id, 2)
		if err != nil {
			if !reflect.DeepEqual(a, protocol.SearchAnswer{}) {
				t.Fatalf("answer with error %v", err)
			}
			return
		}
		if err := protocol.CheckName(a.Name); err != nil {
			t.Fatalf("name %q accepted: %v", a.Name, err)
		}
		if len(a.Hits) > 2 {
			t.Fatalf("%d hits accepted for a limit of 2", len(a.Hits))
		}
		for _, h := range a.Hits {
			if err := h.Validate(); err != nil {
				t.Fatalf("invalid hit accepted: %v", err)
			}
		}
		if _, err := protocol.SealSearchAnswer(protocol.SearchProtocolV12, a, fx.key); err != nil {
			t.Fatalf("an accepted answer does not seal again: %v", err)
		}
	})
}
