package protocol_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/record"

	"github.com/metamesh/node/protocol"
)

func intp(n int) *int { return &n }

// detailedHit is a hit with every field 1.1.0 adds.
func detailedHit(t *testing.T, fx fixture) protocol.SearchHit {
	t.Helper()
	h, err := protocol.NewSearchHit([]string{fx.pb, fx.sha}, "Show Name", 734003200, "video")
	if err != nil {
		t.Fatal(err)
	}
	h.Year, h.Season, h.Episode, h.EpisodeTitle, h.IMDbID = 2008, intp(5), intp(14), "Ozymandias", "tt2301451"
	return h
}

// A 1.1.0 answer carries the details; a 1.0.0 one is the same hits
// without them; each version opens only on its own stream.
func TestSearch_Versions(t *testing.T) {
	fx := fixedFixture(t)
	h := detailedHit(t, fx)
	v11, err := protocol.SealSearchAs(protocol.SearchProtocolV11, []protocol.SearchHit{h}, fx.key)
	if err != nil {
		t.Fatal(err)
	}
	got, err := protocol.OpenSearchAs(protocol.SearchProtocolV11, v11, fx.id, 1)
	if err != nil || !reflect.DeepEqual(got, []protocol.SearchHit{h}) {
		t.Fatalf("1.1.0: %+v, %v; want %+v", got, err, h)
	}
	v10, err := protocol.SealSearchAs(protocol.SearchProtocolID, []protocol.SearchHit{h}, fx.key)
	if err != nil {
		t.Fatal(err)
	}
	bare := protocol.SearchHit{CID: h.CID, Title: h.Title, Size: h.Size, FileType: h.FileType, CIDs: h.CIDs}
	got, err = protocol.OpenSearch(v10, fx.id, 1)
	if err != nil || !reflect.DeepEqual(got, []protocol.SearchHit{bare}) {
		t.Fatalf("1.0.0: %+v, %v; want %+v", got, err, bare)
	}
	if _, err := protocol.OpenSearchAs(protocol.SearchProtocolID, v11, fx.id, 1); !errors.Is(err, protocol.ErrWrongSearchPayloadType) {
		t.Errorf("a 1.1.0 answer on a 1.0.0 stream: %v", err)
	}
	if _, err := protocol.OpenSearchAs(protocol.SearchProtocolV11, v10, fx.id, 1); !errors.Is(err, protocol.ErrWrongSearchPayloadType) {
		t.Errorf("a 1.0.0 answer on a 1.1.0 stream: %v", err)
	}
	for _, v := range []string{"/metamesh/search/2.0.0", ""} {
		if _, err := protocol.SealSearchAs(v, nil, fx.key); !errors.Is(err, protocol.ErrUnknownSearchVersion) {
			t.Errorf("seal as %q: %v", v, err)
		}
		if _, err := protocol.OpenSearchAs(v, v11, fx.id, 1); !errors.Is(err, protocol.ErrUnknownSearchVersion) {
			t.Errorf("open as %q: %v", v, err)
		}
	}
}

// A 1.1.0 hit is checked field by field; 1.0.0 takes none of the new
// fields.
func TestOpenSearch_V11Hostile(t *testing.T) {
	fx := fixedFixture(t)
	hit := func(mod func(m map[string]any)) []byte {
		m := map[string]any{"cid": fx.pb, "title": "x", "size": 1, "fileType": "video", "cids": []string{fx.sha, fx.pb}}
		mod(m)
		b, _ := json.Marshal([]any{m})
		return b
	}
	v11 := func(b []byte) []byte {
		return sealRaw(t, fx.key, protocol.SearchDomain, protocol.SearchProtocolV11, b)
	}
	for _, tc := range []struct {
		name    string
		version string
		env     []byte
	}{
		{"year on 1.0.0", protocol.SearchProtocolID, sealRaw(t, fx.key, protocol.SearchDomain, protocol.SearchProtocolID, hit(func(m map[string]any) { m["year"] = 2008 }))},
		{"imdbid on 1.0.0", protocol.SearchProtocolID, sealRaw(t, fx.key, protocol.SearchDomain, protocol.SearchProtocolID, hit(func(m map[string]any) { m["imdbid"] = "tt2301451" }))},
		{"year 10000", protocol.SearchProtocolV11, v11(hit(func(m map[string]any) { m["year"] = 10000 }))},
		{"negative year", protocol.SearchProtocolV11, v11(hit(func(m map[string]any) { m["year"] = -1 }))},
		{"season -1", protocol.SearchProtocolV11, v11(hit(func(m map[string]any) { m["season"] = -1 }))},
		{"episode past the cap", protocol.SearchProtocolV11, v11(hit(func(m map[string]any) { m["episode"] = protocol.MaxHitNumber + 1 }))},
		{"episode a string", protocol.SearchProtocolV11, v11(hit(func(m map[string]any) { m["episode"] = "5" }))},
		{"long episode title", protocol.SearchProtocolV11, v11(hit(func(m map[string]any) { m["episodeTitle"] = strings.Repeat("a", protocol.MaxHitTitle+1) }))},
		{"imdbid of another shape", protocol.SearchProtocolV11, v11(hit(func(m map[string]any) { m["imdbid"] = "nm0000123" }))},
		{"imdbid too short", protocol.SearchProtocolV11, v11(hit(func(m map[string]any) { m["imdbid"] = "tt123" }))},
		{"unknown field on 1.1.0", protocol.SearchProtocolV11, v11(hit(func(m map[string]any) { m["plot"] = "…" }))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := protocol.OpenSearchAs(tc.version, tc.env, fx.id, protocol.MaxSearchHits)
			if !errors.Is(err, protocol.ErrMalformedHits) || got != nil {
				t.Errorf("%v, %v; want ErrMalformedHits and no hits", got, err)
			}
		})
	}
}

// TestSearch_GoldenVector pins one request and its answer in both
// versions, signed with the fixed Ed25519 key (testdata/search-vector.txt).
func TestSearch_GoldenVector(t *testing.T) {
	fx := fixedFixture(t)
	seed, err := fx.key.Raw()
	if err != nil {
		t.Fatal(err)
	}
	h := detailedHit(t, fx)
	var req bytes.Buffer
	if err := protocol.WriteSearchRequest(&req, protocol.SearchRequest{Q: "show name", Limit: 20}); err != nil {
		t.Fatal(err)
	}
	lines := [][2]string{
		{"ed25519-seed", hex.EncodeToString(seed[:32])},
		{"peer", fx.id.String()},
		{"request", hex.EncodeToString(req.Bytes())},
	}
	for _, v := range []struct{ name, id string }{{"1.0.0", protocol.SearchProtocolID}, {"1.1.0", protocol.SearchProtocolV11}} {
		env, err := protocol.SealSearchAs(v.id, []protocol.SearchHit{h}, fx.key)
		if err != nil {
			t.Fatal(err)
		}
		var resp bytes.Buffer
		if err := protocol.WriteResponse(&resp, env); err != nil {
			t.Fatal(err)
		}
		e, err := record.UnmarshalEnvelope(env)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, [2]string{"payload-" + v.name, string(e.RawPayload)}, [2]string{"response-" + v.name, hex.EncodeToString(resp.Bytes())})
	}
	golden := checkVector(t, filepath.Join("testdata", "search-vector.txt"), `# The search protocol, /metamesh/search/1.0.0 and 1.1.0: one request and
# its answer in each version (see doc.go).
# ed25519-seed: the answerer's private key seed (RFC 8032), hex. peer: its
# peer ID. request: the request message as sent (varint length + JSON), hex.
# payload-V: the list of hits inside the envelope of version V.
# response-V: the response message (varint length + signed envelope), hex;
#   Ed25519 signatures are deterministic, so sealing again gives these bytes.
`, lines)
	// The pinned bytes read back through the public API.
	reqBytes, _ := hex.DecodeString(golden["request"])
	if r, err := protocol.ReadSearchRequest(bytes.NewReader(reqBytes)); err != nil || r.Q != "show name" || r.Limit != 20 {
		t.Errorf("ReadSearchRequest(golden) = %+v, %v", r, err)
	}
	for _, v := range []string{"1.0.0", "1.1.0"} {
		b, _ := hex.DecodeString(golden["response-"+v])
		body, err := protocol.ReadResponse(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := protocol.OpenSearchAs("/metamesh/search/"+v, body, fx.id, 20); err != nil {
			t.Errorf("OpenSearchAs(%s, golden): %v", v, err)
		}
	}
}
