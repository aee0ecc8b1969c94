package protocol_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/multiformats/go-varint"

	"github.com/metamesh/node/protocol"
)

func TestSearch_SealOpenRoundTrip(t *testing.T) {
	fx := fixedFixture(t)
	h, err := protocol.NewSearchHit([]string{fx.pb, fx.mid, fx.sha, fx.pbV0}, "Amélie", 42, "video")
	if err != nil {
		t.Fatal(err)
	}
	if h.CID != fx.pb || len(h.CIDs) != 3 {
		t.Fatalf("hit = %+v", h)
	}
	env, err := protocol.SealSearch([]protocol.SearchHit{h}, fx.key)
	if err != nil {
		t.Fatal(err)
	}
	got, err := protocol.OpenSearch(env, fx.id, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []protocol.SearchHit{h}) {
		t.Errorf("got %+v, want %+v", got, h)
	}
	empty, err := protocol.SealSearch(nil, fx.key)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := protocol.OpenSearch(empty, fx.id, 1); err != nil || len(got) != 0 {
		t.Errorf("empty answer: %v, %v", got, err)
	}
}

func TestOpenSearch_Hostile(t *testing.T) {
	fx := fixedFixture(t)
	good := []byte(`[{"cid":"` + fx.pb + `","title":"x","size":1,"fileType":"video","cids":["` + fx.pb + `"]}]`)
	hit := func(mod func(m map[string]any)) []byte {
		m := map[string]any{"cid": fx.pb, "title": "x", "size": 1, "fileType": "video", "cids": []string{fx.sha, fx.pb}}
		mod(m)
		b, _ := json.Marshal([]any{m})
		return b
	}
	many := make([]json.RawMessage, protocol.MaxSearchHits+1)
	for i := range many {
		many[i] = json.RawMessage(good[1 : len(good)-1])
	}
	manyB, _ := json.Marshal(many)
	tampered := sealRaw(t, fx.key, protocol.SearchDomain, protocol.SearchProtocolID, good)
	tampered[len(tampered)-1] ^= 1
	for _, tc := range []struct {
		name string
		env  []byte
		want error
	}{
		{"bad signature", tampered, protocol.ErrBadSignature},
		{"record domain", sealRaw(t, fx.key, protocol.RecordDomain, protocol.SearchProtocolID, good), protocol.ErrBadSignature},
		{"wrong signer", sealRaw(t, fx.otherKey, protocol.SearchDomain, protocol.SearchProtocolID, good), protocol.ErrWrongSigner},
		{"record payload type", sealRaw(t, fx.key, protocol.SearchDomain, protocol.RecordProtocolID, good), protocol.ErrWrongSearchPayloadType},
		{"garbage", []byte("not an envelope"), protocol.ErrBadEnvelope},
		{"oversized", make([]byte, protocol.MaxSearchMessage+1), protocol.ErrTooLarge},
		{"too many hits", sealRaw(t, fx.key, protocol.SearchDomain, protocol.SearchProtocolID, manyB), protocol.ErrTooLarge},
		{"not a list", sealRaw(t, fx.key, protocol.SearchDomain, protocol.SearchProtocolID, []byte(`{}`)), protocol.ErrMalformedHits},
		{"unknown field", sealRaw(t, fx.key, protocol.SearchDomain, protocol.SearchProtocolID, hit(func(m map[string]any) { m["path"] = "/home" })), protocol.ErrMalformedHits},
		{"wrong canonical", sealRaw(t, fx.key, protocol.SearchDomain, protocol.SearchProtocolID, hit(func(m map[string]any) { m["cid"] = fx.sha })), protocol.ErrWrongCanonical},
		{"non-canonical form", sealRaw(t, fx.key, protocol.SearchDomain, protocol.SearchProtocolID, hit(func(m map[string]any) { m["cids"] = []string{fx.pbV0}; m["cid"] = fx.pbV0 })), protocol.ErrMalformedHits},
		{"unsorted", sealRaw(t, fx.key, protocol.SearchDomain, protocol.SearchProtocolID, hit(func(m map[string]any) { m["cids"] = []string{fx.pb, fx.sha} })), protocol.ErrCIDsNotSorted},
		{"no cids", sealRaw(t, fx.key, protocol.SearchDomain, protocol.SearchProtocolID, hit(func(m map[string]any) { m["cids"] = []string{} })), protocol.ErrMalformedHits},
		{"long title", sealRaw(t, fx.key, protocol.SearchDomain, protocol.SearchProtocolID, hit(func(m map[string]any) { m["title"] = strings.Repeat("a", protocol.MaxHitTitle+1) })), protocol.ErrMalformedHits},
		{"negative size", sealRaw(t, fx.key, protocol.SearchDomain, protocol.SearchProtocolID, hit(func(m map[string]any) { m["size"] = -1 })), protocol.ErrMalformedHits},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := protocol.OpenSearch(tc.env, fx.id, protocol.MaxSearchHits)
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if got != nil {
				t.Errorf("hits returned with an error: %v", got)
			}
		})
	}
}

func TestSearchRequest_Framing(t *testing.T) {
	var buf bytes.Buffer
	req := protocol.SearchRequest{Q: "matrix", Limit: 20}
	if err := protocol.WriteSearchRequest(&buf, req); err != nil {
		t.Fatal(err)
	}
	if want := append([]byte{byte(len(`{"q":"matrix","limit":20}`))}, `{"q":"matrix","limit":20}`...); !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("wire = %q, want %q", buf.Bytes(), want)
	}
	got, err := protocol.ReadSearchRequest(&buf)
	if err != nil || got != req {
		t.Errorf("read back %+v, %v", got, err)
	}
	for _, tc := range []struct {
		name string
		wire []byte
		want error
	}{
		{"too large", message(protocol.MaxSearchRequest+1, ""), protocol.ErrTooLarge},
		{"truncated", message(10, "{}"), protocol.ErrBadFrame},
		{"empty query", message(uint64(len(`{"q":"","limit":1}`)), `{"q":"","limit":1}`), protocol.ErrBadSearchRequest},
		{"limit 0", message(uint64(len(`{"q":"a","limit":0}`)), `{"q":"a","limit":0}`), protocol.ErrBadSearchRequest},
		{"limit 101", message(uint64(len(`{"q":"a","limit":101}`)), `{"q":"a","limit":101}`), protocol.ErrBadSearchRequest},
		{"unknown field", message(uint64(len(`{"q":"a","limit":1,"x":1}`)), `{"q":"a","limit":1,"x":1}`), protocol.ErrBadSearchRequest},
		{"not json", message(3, "abc"), protocol.ErrBadSearchRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := protocol.ReadSearchRequest(bytes.NewReader(tc.wire)); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if err := protocol.WriteSearchRequest(&buf, protocol.SearchRequest{Q: strings.Repeat("a", 257), Limit: 1}); !errors.Is(err, protocol.ErrBadSearchRequest) {
		t.Errorf("long query written: %v", err)
	}
}

func FuzzOpenSearch(f *testing.F) {
	fx := fixedFixture(f)
	h, _ := protocol.NewSearchHit([]string{fx.pb, fx.sha}, "title", 1, "video")
	env, _ := protocol.SealSearch([]protocol.SearchHit{h}, fx.key)
	f.Add(env)
	f.Add(sealRaw(f, fx.key, protocol.SearchDomain, protocol.SearchProtocolID, []byte(`[{"cid":"x"}]`)))
	f.Add([]byte{})
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		hits, err := protocol.OpenSearch(data, fx.id, 2)
		if err != nil {
			if hits != nil {
				t.Fatalf("hits with error %v", err)
			}
			return
		}
		if len(hits) > 2 {
			t.Fatalf("%d hits accepted for a limit of 2", len(hits))
		}
		for _, h := range hits {
			if err := h.Validate(); err != nil {
				t.Fatalf("invalid hit accepted: %v", err)
			}
		}
	})
}

// A request is read as strictly as a record: what one implementation
// accepts, every other must too.
func TestReadSearchRequest_Strict(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want *protocol.SearchRequest // nil: rejected
	}{
		{"exact", `{"q":"alpha","limit":5}`, &protocol.SearchRequest{Q: "alpha", Limit: 5}},
		{"fields in the other order", `{"limit":5,"q":"alpha"}`, &protocol.SearchRequest{Q: "alpha", Limit: 5}},
		{"whitespace", " {\n \"q\" : \"alpha\" , \"limit\" : 5 }\n", &protocol.SearchRequest{Q: "alpha", Limit: 5}},
		{"escaped UTF-8", `{"q":"am\u00e9lie","limit":1}`, &protocol.SearchRequest{Q: "amélie", Limit: 1}},
		{"raw UTF-8", `{"q":"amélie","limit":100}`, &protocol.SearchRequest{Q: "amélie", Limit: 100}},
		{"upper-case names", `{"Q":"alpha","LIMIT":5}`, nil},
		{"mixed-case name", `{"q":"alpha","Limit":5}`, nil},
		{"duplicate q", `{"q":"alpha","q":"beta","limit":5}`, nil},
		{"duplicate limit", `{"q":"alpha","limit":5,"limit":6}`, nil},
		{"duplicate q, other case", `{"q":"alpha","Q":"beta","limit":5}`, nil},
		{"invalid UTF-8 in q", "{\"q\":\"al\xffpha\",\"limit\":5}", nil},
		{"invalid UTF-8 outside q", "{\"q\":\"alpha\",\"limit\":5}\xff", nil},
		{"unknown field", `{"q":"alpha","limit":5,"cursor":"x"}`, nil},
		{"empty field name", `{"q":"alpha","limit":5,"":1}`, nil},
		{"missing limit", `{"q":"alpha"}`, nil},
		{"missing q", `{"limit":5}`, nil},
		{"null q", `{"q":null,"limit":5}`, nil},
		{"null limit", `{"q":"alpha","limit":null}`, nil},
		{"q a number", `{"q":1,"limit":5}`, nil},
		{"limit a string", `{"q":"alpha","limit":"5"}`, nil},
		{"limit a fraction", `{"q":"alpha","limit":5.0}`, nil},
		{"limit in exponent form", `{"q":"alpha","limit":5e0}`, nil},
		{"limit negative", `{"q":"alpha","limit":-5}`, nil},
		{"limit huge", `{"q":"alpha","limit":99999999999999999999}`, nil},
		{"limit a bool", `{"q":"alpha","limit":true}`, nil},
		{"q an object", `{"q":{"x":1},"limit":5}`, nil},
		{"a list", `[{"q":"alpha","limit":5}]`, nil},
		{"null", `null`, nil},
		{"two objects", `{"q":"alpha","limit":5}{"q":"alpha","limit":5}`, nil},
		{"trailing garbage", `{"q":"alpha","limit":5}x`, nil},
		{"unterminated", `{"q":"alpha","limit":5`, nil},
		{"empty body", ``, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := protocol.ReadSearchRequest(bytes.NewReader(message(uint64(len(tc.body)), tc.body)))
			if tc.want == nil {
				if !errors.Is(err, protocol.ErrBadSearchRequest) {
					t.Errorf("ReadSearchRequest(%q) = %+v, %v; want ErrBadSearchRequest", tc.body, got, err)
				}
				return
			}
			if err != nil || got != *tc.want {
				t.Errorf("ReadSearchRequest(%q) = %+v, %v; want %+v", tc.body, got, err, *tc.want)
			}
		})
	}
}

// An answer holding more hits than the request asked for is dropped
// whole, however valid each hit is.
func TestOpenSearch_MoreHitsThanAsked(t *testing.T) {
	fx := fixedFixture(t)
	var hits []protocol.SearchHit
	for _, cids := range [][]string{{fx.pb}, {fx.sha}, {fx.mid}} {
		h, err := protocol.NewSearchHit(cids, "x", 1, "video")
		if err != nil {
			t.Fatal(err)
		}
		hits = append(hits, h)
	}
	env, err := protocol.SealSearch(hits, fx.key)
	if err != nil {
		t.Fatal(err)
	}
	for limit, ok := range map[int]bool{1: false, 2: false, 3: true, 4: true, protocol.MaxSearchHits: true} {
		got, err := protocol.OpenSearch(env, fx.id, limit)
		switch {
		case ok && (err != nil || len(got) != 3):
			t.Errorf("limit %d: %d hits, %v; want all 3", limit, len(got), err)
		case !ok && (!errors.Is(err, protocol.ErrTooLarge) || got != nil):
			t.Errorf("limit %d: %d hits, %v; want ErrTooLarge and none", limit, len(got), err)
		}
	}
}

func FuzzReadSearchRequest(f *testing.F) {
	for _, body := range []string{
		`{"q":"alpha","limit":5}`, `{"limit":100,"q":"amélie"}`, `{"Q":"alpha","LIMIT":5}`,
		`{"q":"a","q":"b","limit":1}`, "{\"q\":\"\xff\",\"limit\":1}", `{"q":"a","limit":1.0}`,
		`{"q":"a\ud800","limit":1}`, `{"q":"a","limit":1} `, `[]`, ``,
	} {
		f.Add(message(uint64(len(body)), body))
	}
	f.Add([]byte{0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := protocol.ReadSearchRequest(bytes.NewReader(data))
		if err != nil {
			if got != (protocol.SearchRequest{}) {
				t.Fatalf("request %+v with error %v", got, err)
			}
			return
		}
		if err := got.Validate(); err != nil {
			t.Fatalf("accepted an invalid request %+v: %v", got, err)
		}
		// What was accepted is what encoding/json reads too (so no
		// second reading of the same bytes differs), and it writes and
		// reads back unchanged.
		n, k, err := varint.FromUvarint(data)
		if err != nil {
			t.Fatalf("accepted a request without a valid length prefix: %v", err)
		}
		var std protocol.SearchRequest
		dec := json.NewDecoder(bytes.NewReader(data[k : k+int(n)]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&std); err != nil || std != got {
			t.Fatalf("accepted %+v, encoding/json reads %+v, %v", got, std, err)
		}
		var buf bytes.Buffer
		if err := protocol.WriteSearchRequest(&buf, got); err != nil {
			t.Fatalf("WriteSearchRequest(%+v): %v", got, err)
		}
		again, err := protocol.ReadSearchRequest(&buf)
		if err != nil || again != got {
			t.Fatalf("round trip of %+v: %+v, %v", got, again, err)
		}
	})
}
