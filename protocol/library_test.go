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

// libraryFixture is a request for a show's seasons and its answer.
func libraryFixture(t testing.TB, fx fixture) (protocol.LibraryRequest, protocol.LibraryAnswer) {
	t.Helper()
	req := protocol.LibraryRequest{View: protocol.LibraryEpisodes, Show: "breaking bad", Season: intp(5), Page: 1, Limit: 20}
	a := protocol.LibraryAnswer{Name: "Alice's NAS", View: protocol.LibraryEpisodes, Show: "breaking bad", ShowTitle: "Breaking Bad",
		Season: intp(5), Page: 1, Pages: 1, Total: 1, Films: 3, Shows: 1,
		Entries: []protocol.LibraryEntry{{Kind: "episode", CID: fx.pb, Title: "Breaking Bad", Year: 2008, Show: "breaking bad",
			Season: intp(5), Episode: intp(14), EpisodeTitle: "Ozymandias", Size: 734003200, Poster: fx.sha}}}
	return req, a
}

// TestLibrary_GoldenVector pins one exchange of /metamesh/library/1.0.0
// byte for byte (testdata/library-vector.txt).
func TestLibrary_GoldenVector(t *testing.T) {
	fx := fixedFixture(t)
	seed, err := fx.key.Raw()
	if err != nil {
		t.Fatal(err)
	}
	req, a := libraryFixture(t, fx)
	env, err := protocol.SealLibrary(req, a, fx.key)
	if err != nil {
		t.Fatal(err)
	}
	var reqb, resp bytes.Buffer
	if err := protocol.WriteLibraryRequest(&reqb, req); err != nil {
		t.Fatal(err)
	}
	if err := protocol.WriteResponse(&resp, env); err != nil {
		t.Fatal(err)
	}
	e, err := record.UnmarshalEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	golden := checkVector(t, filepath.Join("testdata", "library-vector.txt"), `# The library protocol, /metamesh/library/1.0.0 (see doc.go): one request
# and its answer, signed with the Ed25519 key of the seed below. request
# and response are whole messages (length prefix and body) in hex; payload
# is the answer's signed JSON.
`, [][2]string{
		{"ed25519-seed", hex.EncodeToString(seed[:32])},
		{"peer", fx.id.String()},
		{"request-json", string(reqb.Bytes()[1:])},
		{"request", hex.EncodeToString(reqb.Bytes())},
		{"payload", string(e.RawPayload)},
		{"response", hex.EncodeToString(resp.Bytes())},
	})
	rb, _ := hex.DecodeString(golden["request"])
	gotReq, err := protocol.ReadLibraryRequest(bytes.NewReader(rb))
	if err != nil || !reflect.DeepEqual(gotReq, req) {
		t.Fatalf("ReadLibraryRequest(golden) = %+v, %v; want %+v", gotReq, err, req)
	}
	b, _ := hex.DecodeString(golden["response"])
	body, err := protocol.ReadResponse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	got, err := protocol.OpenLibrary(body, fx.id, req)
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("OpenLibrary(golden) = %+v, %v; want %+v", got, err, a)
	}
	if _, err := protocol.OpenLibrary(body, fx.other, req); !errors.Is(err, protocol.ErrWrongSigner) {
		t.Errorf("from another peer: %v, want ErrWrongSigner", err)
	}
	other := req
	other.Season = intp(4)
	if _, err := protocol.OpenLibrary(body, fx.id, other); !errors.Is(err, protocol.ErrMalformedLibrary) {
		t.Errorf("the answer to another season: %v, want ErrMalformedLibrary", err)
	}
}

// A request that breaks any rule is refused with ErrBadLibraryRequest.
func TestParseLibraryRequest_Refusals(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		ok         bool
	}{
		{"films", `{"view":"films","page":1,"limit":10}`, true},
		{"films with words", `{"view":"films","q":"bunny","page":2,"limit":100}`, true},
		{"seasons", `{"view":"seasons","show":"x","page":1,"limit":1}`, true},
		{"episodes", `{"view":"episodes","show":"x","season":0,"page":1,"limit":1}`, true},
		{"unknown view", `{"view":"other","page":1,"limit":10}`, false},
		{"no view", `{"page":1,"limit":10}`, false},
		{"no page", `{"view":"films","limit":10}`, false},
		{"limit 0", `{"view":"films","page":1,"limit":0}`, false},
		{"limit past the cap", `{"view":"films","page":1,"limit":101}`, false},
		{"page 0", `{"view":"films","page":0,"limit":1}`, false},
		{"a fraction", `{"view":"films","page":1.5,"limit":1}`, false},
		{"a string number", `{"view":"films","page":"1","limit":1}`, false},
		{"show with films", `{"view":"films","show":"x","page":1,"limit":1}`, false},
		{"seasons without show", `{"view":"seasons","page":1,"limit":1}`, false},
		{"episodes without season", `{"view":"episodes","show":"x","page":1,"limit":1}`, false},
		{"season with seasons", `{"view":"seasons","show":"x","season":1,"page":1,"limit":1}`, false},
		{"negative season", `{"view":"episodes","show":"x","season":-1,"page":1,"limit":1}`, false},
		{"words with seasons", `{"view":"seasons","show":"x","q":"a","page":1,"limit":1}`, false},
		{"long show", `{"view":"seasons","show":"` + strings.Repeat("s", 1025) + `","page":1,"limit":1}`, false},
		{"long words", `{"view":"films","q":"` + strings.Repeat("q", 257) + `","page":1,"limit":1}`, false},
		{"repeated field", `{"view":"films","view":"shows","page":1,"limit":1}`, false},
		{"field in capitals", `{"View":"films","page":1,"limit":1}`, false},
		{"unknown field", `{"view":"films","page":1,"limit":1,"all":true}`, false},
		{"an object value", `{"view":{"a":1},"page":1,"limit":1}`, false},
		{"data after", `{"view":"films","page":1,"limit":1} {}`, false},
		{"not UTF-8", "{\"view\":\"films\",\"q\":\"\xff\",\"page\":1,\"limit\":1}", false},
		{"a list", `[]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := protocol.ParseLibraryRequest([]byte(tc.body))
			if tc.ok != (err == nil) {
				t.Fatalf("err = %v, want ok %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, protocol.ErrBadLibraryRequest) {
				t.Errorf("err = %v, want ErrBadLibraryRequest", err)
			}
		})
	}
	var b bytes.Buffer
	b.Write([]byte{0x81, 0x40}) // 8193 bytes, past MaxLibraryRequest
	if _, err := protocol.ReadLibraryRequest(&b); !errors.Is(err, protocol.ErrTooLarge) {
		t.Errorf("an oversized request: %v, want ErrTooLarge", err)
	}
}

// An answer that breaks any rule is dropped whole.
func TestOpenLibrary_Refusals(t *testing.T) {
	fx := fixedFixture(t)
	films := protocol.LibraryRequest{View: protocol.LibraryFilms, Page: 1, Limit: 2}
	film := `{"kind":"film","cid":"` + fx.pb + `","title":"Big Buck Bunny","year":2008,"size":10,"poster":"` + fx.sha + `"}`
	head := `"view":"films","page":1,"pages":1,"total":1,"films":1,"shows":0`
	for _, tc := range []struct {
		name, payload string
		ok            bool
	}{
		{"a film", `{"name":"Alice",` + head + `,"entries":[` + film + `]}`, true},
		{"no entries", `{` + head + `,"entries":[]}`, true},
		{"null entries", `{` + head + `,"entries":null}`, false},
		{"missing total", `{"view":"films","page":1,"pages":1,"films":1,"shows":0,"entries":[]}`, false},
		{"another view", `{"view":"shows","page":1,"pages":1,"total":1,"films":1,"shows":0,"entries":[]}`, false},
		{"another page", `{"view":"films","page":2,"pages":1,"total":1,"films":1,"shows":0,"entries":[]}`, false},
		{"pages that do not add up", `{"view":"films","page":1,"pages":3,"total":1,"films":1,"shows":0,"entries":[]}`, false},
		{"negative count", `{"view":"films","page":1,"pages":0,"total":0,"films":-1,"shows":0,"entries":[]}`, false},
		{"more entries than asked", `{"view":"films","page":1,"pages":2,"total":3,"films":3,"shows":0,"entries":[` + film + `,` + film + `,` + film + `]}`, false},
		{"more entries than the total", `{"view":"films","page":1,"pages":0,"total":0,"films":1,"shows":0,"entries":[` + film + `]}`, false},
		{"a show in films", `{` + head + `,"entries":[{"kind":"show","title":"x","show":"x","seasons":1}]}`, false},
		{"a film without cid", `{` + head + `,"entries":[{"kind":"film","title":"x"}]}`, false},
		{"a CID not canonical", `{` + head + `,"entries":[{"kind":"film","cid":"QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG","title":"x"}]}`, false},
		{"a bad poster", `{` + head + `,"entries":[{"kind":"film","cid":"` + fx.pb + `","title":"x","poster":"x"}]}`, false},
		{"a film with a season", `{` + head + `,"entries":[{"kind":"film","cid":"` + fx.pb + `","title":"x","season":1}]}`, false},
		{"a negative size", `{` + head + `,"entries":[{"kind":"film","cid":"` + fx.pb + `","title":"x","size":-1}]}`, false},
		{"a long title", `{` + head + `,"entries":[{"kind":"film","cid":"` + fx.pb + `","title":"` + strings.Repeat("t", 1025) + `"}]}`, false},
		{"an unknown field", `{` + head + `,"entries":[],"path":"/home"}`, false},
		{"an unknown entry field", `{` + head + `,"entries":[{"kind":"film","cid":"` + fx.pb + `","title":"x","path":"/a"}]}`, false},
		{"data after", `{` + head + `,"entries":[]} 1`, false},
		{"a list", `[]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := sealRaw(t, fx.key, protocol.LibraryDomain, protocol.LibraryProtocolID, []byte(tc.payload))
			got, err := protocol.OpenLibrary(env, fx.id, films)
			if tc.ok != (err == nil) {
				t.Fatalf("%+v, %v; want ok %v", got, err, tc.ok)
			}
			if err != nil && (!reflect.DeepEqual(got, protocol.LibraryAnswer{}) ||
				!errors.Is(err, protocol.ErrMalformedLibrary) && !errors.Is(err, protocol.ErrTooLarge)) {
				t.Errorf("%+v, %v; want ErrMalformedLibrary or ErrTooLarge and nothing", got, err)
			}
		})
	}
	good := `{` + head + `,"entries":[]}`
	for _, tc := range []struct {
		name string
		env  []byte
		want error
	}{
		{"search domain", sealRaw(t, fx.key, protocol.SearchDomain, protocol.LibraryProtocolID, []byte(good)), protocol.ErrBadSignature},
		{"search payload type", sealRaw(t, fx.key, protocol.LibraryDomain, protocol.SearchProtocolV12, []byte(good)), protocol.ErrWrongLibraryPayloadType},
		{"another signer", sealRaw(t, fx.otherKey, protocol.LibraryDomain, protocol.LibraryProtocolID, []byte(good)), protocol.ErrWrongSigner},
		{"not an envelope", []byte("hello"), protocol.ErrBadEnvelope},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := protocol.OpenLibrary(tc.env, fx.id, films); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// FuzzParseLibraryRequest: what a peer may send as a request either parses
// to a valid request that writes back and parses the same, or is refused.
func FuzzParseLibraryRequest(f *testing.F) {
	f.Add([]byte(`{"view":"episodes","show":"x","season":1,"page":1,"limit":20}`))
	f.Add([]byte(`{"view":"films","q":"a b","page":3,"limit":100}`))
	f.Add([]byte(`{"view":"films","page":1,"limit":1,"page":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := protocol.ParseLibraryRequest(data)
		if err != nil {
			if !errors.Is(err, protocol.ErrBadLibraryRequest) {
				t.Fatalf("refusal %v is not ErrBadLibraryRequest", err)
			}
			return
		}
		var b bytes.Buffer
		if err := protocol.WriteLibraryRequest(&b, req); err != nil {
			t.Fatalf("an accepted request does not write: %v", err)
		}
		again, err := protocol.ReadLibraryRequest(&b)
		if err != nil || !reflect.DeepEqual(again, req) {
			t.Fatalf("round trip = %+v, %v; want %+v", again, err, req)
		}
	})
}

// FuzzOpenLibrary signs data as an answer's payload, so the fuzzer reaches
// the answer's shape behind the signature.
func FuzzOpenLibrary(f *testing.F) {
	fx := fixedFixture(f)
	req, a := libraryFixture(f, fx)
	env, _ := protocol.SealLibrary(req, a, fx.key)
	e, _ := record.UnmarshalEnvelope(env)
	f.Add(e.RawPayload)
	f.Add([]byte(`{"view":"episodes","show":"breaking bad","season":5,"page":1,"pages":0,"total":0,"films":0,"shows":0,"entries":[]}`))
	f.Add([]byte(`{"entries":[{"kind":"episode"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > protocol.MaxLibraryMessage/2 {
			return
		}
		env := sealRaw(t, fx.key, protocol.LibraryDomain, protocol.LibraryProtocolID, data)
		got, err := protocol.OpenLibrary(env, fx.id, req)
		if err != nil {
			if !reflect.DeepEqual(got, protocol.LibraryAnswer{}) {
				t.Fatalf("answer with error %v", err)
			}
			return
		}
		if len(got.Entries) > req.Limit {
			t.Fatalf("%d entries for a limit of %d", len(got.Entries), req.Limit)
		}
		if _, err := protocol.SealLibrary(req, got, fx.key); err != nil {
			t.Fatalf("an accepted answer does not seal again: %v", err)
		}
	})
}
