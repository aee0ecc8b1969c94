package protocol_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/record"
	"github.com/multiformats/go-multibase"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/protocol"
)

// fixture is one file's CIDs and two peers with real Ed25519 keys.
type fixture struct {
	key, otherKey crypto.PrivKey
	id, other     peer.ID
	mid, sha, pb  string // midhash, raw sha2-256, dag-pb sha2-256
	pbV0          string // pb written as CIDv0
	when          time.Time
}

func newFixture(tb testing.TB) fixture {
	tb.Helper()
	return fixtureFrom(tb, rand.Reader)
}

// fixedFixture has the same keys in every process (fuzz workers, golden
// files): Ed25519 keys from fixed seeds.
func fixedFixture(tb testing.TB) fixture {
	tb.Helper()
	return fixtureFrom(tb, strings.NewReader("metamesh record fixture, key one"+"metamesh record fixture, key two"))
}

func fixtureFrom(tb testing.TB, random io.Reader) fixture {
	tb.Helper()
	f := fixture{
		mid:  mustCID(tb, protocol.CodeMidhash256, protocol.CodeMidhash256, 32, 7),
		sha:  mustCID(tb, protocol.CodeRaw, protocol.CodeSHA2_256, 32, 8),
		pb:   mustCID(tb, protocol.CodeDagPB, protocol.CodeSHA2_256, 32, 9),
		when: time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC),
	}
	f.pbV0 = cid.NewCidV0(cid.MustParse(f.pb).Hash()).String()
	f.key, f.id = mustKey(tb, random)
	f.otherKey, f.other = mustKey(tb, random)
	return f
}

func mustKey(tb testing.TB, random io.Reader) (crypto.PrivKey, peer.ID) {
	tb.Helper()
	key, _, err := crypto.GenerateEd25519Key(random)
	if err != nil {
		tb.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	return key, id
}

// wire is the record JSON, for building payloads a correct node would not.
type wire struct {
	CID  string            `json:"cid"`
	CIDs []string          `json:"cids"`
	Meta map[string]string `json:"meta"`
	Peer string            `json:"peer"`
	Time string            `json:"time"`
}

// good is a valid record of f.id, as JSON fields.
func (f fixture) good() wire {
	cids := []string{f.mid, f.sha, f.pb}
	return wire{
		CID:  protocol.Canonical(cids),
		CIDs: sortedCopy(cids),
		Meta: map[string]string{"title": "Big Buck Bunny", "fileinfo/duration": "596.5", "sizeByte": "1234"},
		Peer: f.id.String(),
		Time: f.when.Format(time.RFC3339),
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// distinctCIDs returns n different canonical CIDs, sorted.
func distinctCIDs(tb testing.TB, n int) []string {
	tb.Helper()
	out := make([]string, 0, n)
	for i := range n {
		mh, err := multihash.Encode([]byte(fmt.Sprintf("locator %d", i)), protocol.CodeIdentity)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, cid.NewCidV1(protocol.CodeURL, mh).String())
	}
	return sortedCopy(out)
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// rawRecord seals any payload under any domain and payload type.
type rawRecord struct {
	domain, codec string
	payload       []byte
}

func (r *rawRecord) Domain() string                 { return r.domain }
func (r *rawRecord) Codec() []byte                  { return []byte(r.codec) }
func (r *rawRecord) MarshalRecord() ([]byte, error) { return r.payload, nil }
func (r *rawRecord) UnmarshalRecord(b []byte) error { r.payload = b; return nil }

// sealRaw signs payload with key, as a peer that skips every check would.
func sealRaw(tb testing.TB, key crypto.PrivKey, domain, codec string, payload []byte) []byte {
	tb.Helper()
	env, err := record.Seal(&rawRecord{domain: domain, codec: codec, payload: payload}, key)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := env.Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestRecord_RoundTrip(t *testing.T) {
	f := newFixture(t)
	meta := map[string]string{"title": "Big Buck Bunny", "fileinfo/duration": "596.5", "html": "<a&b>"}
	r, err := protocol.NewRecord([]string{f.sha, f.pbV0, f.mid, f.pb}, meta, f.id, f.when.Add(700*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	env, err := protocol.SealRecord(r, f.key)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := protocol.WriteResponse(&buf, env); err != nil {
		t.Fatal(err)
	}
	body, err := protocol.ReadResponse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, asked := range []string{f.mid, f.sha, f.pb, f.pbV0} {
		got, err := protocol.OpenRecord(body, f.id, asked)
		if err != nil {
			t.Fatalf("OpenRecord(asked %s): %v", asked, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("asked %s: got %+v, want %+v", asked, got, r)
		}
	}
	if r.CID != f.pb {
		t.Errorf("cid = %s, want the dag-pb %s", r.CID, f.pb)
	}
	if !r.Time.Equal(f.when) {
		t.Errorf("time = %s, want %s (whole seconds)", r.Time, f.when)
	}
}

func TestOpenRecord_AskedInOtherForms(t *testing.T) {
	f := newFixture(t)
	env := sealRaw(t, f.key, protocol.RecordDomain, protocol.RecordProtocolID, mustJSON(t, f.good()))
	b58, err := cid.MustParse(f.sha).StringOfBase(multibase.Base58BTC)
	if err != nil {
		t.Fatal(err)
	}
	b36, err := cid.MustParse(f.mid).StringOfBase(multibase.Base36)
	if err != nil {
		t.Fatal(err)
	}
	for name, asked := range map[string]string{
		"CIDv0 of the dag-pb": f.pbV0,
		"base58 CIDv1":        b58,
		"base36 CIDv1":        b36,
		"base32 upper":        strings.ToUpper(f.sha),
		"surrounding spaces":  " " + f.mid + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := protocol.OpenRecord(env, f.id, asked); err != nil {
				t.Errorf("OpenRecord(%q): %v", asked, err)
			}
		})
	}
}

func TestOpenRecord_Rejects(t *testing.T) {
	f := newFixture(t)
	unrelated := mustCID(t, protocol.CodeRaw, protocol.CodeSHA2_256, 32, 0xee)
	b58, _ := cid.MustParse(f.sha).StringOfBase(multibase.Base58BTC)
	withCIDs := func(cids ...string) func(*wire) {
		return func(w *wire) { w.CIDs = cids }
	}
	withMeta := func(k, v string) func(*wire) {
		return func(w *wire) { w.Meta[k] = v }
	}
	manyMeta := func(n int) func(*wire) {
		return func(w *wire) {
			for i := range n {
				w.Meta[fmt.Sprintf("k%05d", i)] = "v"
			}
		}
	}
	manyCIDs := func(w *wire) {
		w.CIDs = distinctCIDs(t, protocol.MaxRecordCIDs+1)
		w.CID = protocol.Canonical(w.CIDs)
	}
	goodJSON := string(mustJSON(t, f.good()))
	tests := []struct {
		name    string
		edit    func(*wire)    // changes the good record's fields
		payload string         // replaces the payload when set
		domain  string         // signing domain, RecordDomain when empty
		codec   string         // payload type, RecordProtocolID when empty
		key     crypto.PrivKey // signer, f.key when nil
		tamper  func([]byte) []byte
		from    peer.ID // f.id when empty
		asked   string  // f.sha when empty
		want    error
	}{
		{name: "signature byte flipped", tamper: func(b []byte) []byte { b[len(b)-1] ^= 1; return b }, want: protocol.ErrBadSignature},
		{name: "payload byte flipped", tamper: func(b []byte) []byte {
			i := bytes.Index(b, []byte("Big Buck"))
			b[i] = 'b'
			return b
		}, want: protocol.ErrBadSignature},
		{name: "wrong domain", domain: "libp2p-peer-record", want: protocol.ErrBadSignature},
		{name: "not an envelope", tamper: func([]byte) []byte { return []byte("hello, peer") }, want: protocol.ErrBadEnvelope},
		{name: "empty envelope", tamper: func([]byte) []byte { return nil }, want: protocol.ErrBadEnvelope},
		{name: "oversize envelope", tamper: func(b []byte) []byte { return append(b, make([]byte, protocol.MaxRecordMessage)...) }, want: protocol.ErrTooLarge},
		{name: "wrong payload type", codec: "/metamesh/record/2.0.0", want: protocol.ErrWrongPayloadType},
		{name: "payload type of peer records", codec: "\x03\x01", want: protocol.ErrWrongPayloadType},
		{name: "signer is not the sender", from: f.other, want: protocol.ErrWrongSigner},
		{name: "record's peer is not the signer", edit: func(w *wire) { w.Peer = f.other.String() }, want: protocol.ErrWrongPeer},
		{name: "record's peer signs for another's key", key: f.otherKey, from: f.other, want: protocol.ErrWrongPeer},
		{name: "asked CID missing", asked: unrelated, want: protocol.ErrAskedCIDMissing},
		{name: "asked CID invalid", asked: "not-a-cid", want: protocol.ErrInvalidCID},
		{name: "asked CID empty", asked: " ", want: protocol.ErrEmptyCID},
		{name: "CIDv0 text member", edit: withCIDs(f.pbV0, f.mid, f.sha), want: protocol.ErrNotCanonicalForm},
		{name: "base58 CIDv1 member", edit: withCIDs(f.mid, f.pb, b58), want: protocol.ErrNotCanonicalForm},
		{name: "base32 upper member", edit: withCIDs(strings.ToUpper(f.sha), f.mid, f.pb), want: protocol.ErrNotCanonicalForm},
		{name: "invalid member", edit: withCIDs(f.mid, f.pb, f.sha, "bnotacid"), want: protocol.ErrInvalidCID},
		{name: "empty member", edit: withCIDs("", f.mid, f.pb, f.sha), want: protocol.ErrEmptyCID},
		{name: "unsorted cids", edit: withCIDs(f.sha, f.mid, f.pb), want: protocol.ErrCIDsNotSorted},
		{name: "repeated cid", edit: withCIDs(f.mid, f.pb, f.sha, f.sha), want: protocol.ErrCIDsNotSorted},
		{name: "cid is a weaker member", edit: func(w *wire) { w.CID = f.sha }, want: protocol.ErrWrongCanonical},
		{name: "cid not a member", edit: func(w *wire) { w.CID = unrelated }, want: protocol.ErrWrongCanonical},
		{name: "cid in another form", edit: func(w *wire) { w.CID = f.pbV0 }, want: protocol.ErrWrongCanonical},
		{name: "no cids", edit: withCIDs(), want: protocol.ErrMalformedRecord},
		{name: "too many cids", edit: manyCIDs, want: protocol.ErrTooLarge},
		{name: "too many meta entries", edit: manyMeta(protocol.MaxRecordMeta + 1), want: protocol.ErrTooLarge},
		{name: "meta key too long", edit: withMeta(strings.Repeat("k", protocol.MaxMetaKey+1), "v"), want: protocol.ErrTooLarge},
		{name: "meta value too long", edit: withMeta("k", strings.Repeat("v", protocol.MaxMetaValue+1)), want: protocol.ErrTooLarge},
		{name: "empty meta key", edit: withMeta("", "v"), want: protocol.ErrMalformedRecord},
		{name: "meta key with an empty segment", edit: withMeta("a//b", "v"), want: protocol.ErrMalformedRecord},
		{name: "meta key with a leading slash", edit: withMeta("/title", "v"), want: protocol.ErrMalformedRecord},
		{name: "meta key with a trailing slash", edit: withMeta("title/", "v"), want: protocol.ErrMalformedRecord},
		{name: "meta key of a slash", edit: withMeta("/", "v"), want: protocol.ErrMalformedRecord},
		{name: "meta filePath", edit: withMeta("filePath", "/home/me/film.mkv"), want: protocol.ErrForbiddenMeta},
		{name: "meta filePathBytes", edit: withMeta("filePathBytes", "L2hvbWU="), want: protocol.ErrForbiddenMeta},
		{name: "meta duplicates", edit: withMeta("duplicates/0", "/home/me/copy.mkv"), want: protocol.ErrForbiddenMeta},
		{name: "meta duplicateCount", edit: withMeta("duplicateCount", "1"), want: protocol.ErrForbiddenMeta},
		{name: "meta mtime", edit: withMeta("mtime", "1700000000000000000"), want: protocol.ErrForbiddenMeta},
		{name: "meta key-set", edit: withMeta("cids/"+unrelated, "true"), want: protocol.ErrForbiddenMeta},
		{name: "meta origin", edit: withMeta("origin/"+f.other.String()+"/title", "Other"), want: protocol.ErrForbiddenMeta},
		{name: "time not RFC 3339", edit: func(w *wire) { w.Time = "14 Mar 2025 15:09" }, want: protocol.ErrBadTime},
		{name: "time Unix seconds", edit: func(w *wire) { w.Time = "1741964966" }, want: protocol.ErrBadTime},
		{name: "time zero", edit: func(w *wire) { w.Time = "0001-01-01T00:00:00Z" }, want: protocol.ErrBadTime},
		{name: "peer not a peer ID", edit: func(w *wire) { w.Peer = "me" }, want: protocol.ErrMalformedRecord},
		{name: "not JSON", payload: "cid=b…", want: protocol.ErrMalformedRecord},
		{name: "JSON array", payload: "[]", want: protocol.ErrMalformedRecord},
		{name: "not UTF-8", payload: strings.Replace(goodJSON, "Big Buck", "Big\xffBuck", 1), want: protocol.ErrMalformedRecord},
		{name: "unknown field", payload: strings.Replace(goodJSON, `"cid":`, `"root":"01J0000000000000000000000","cid":`, 1), want: protocol.ErrMalformedRecord},
		{name: "field twice", payload: strings.Replace(goodJSON, `"cid":`, `"cid":"`+f.pb+`","cid":`, 1), want: protocol.ErrMalformedRecord},
		{name: "field in other case", payload: strings.Replace(goodJSON, `"cid":`, `"CID":`, 1), want: protocol.ErrMalformedRecord},
		{name: "field missing", payload: strings.Replace(goodJSON, `,"time":"`+f.when.Format(time.RFC3339)+`"`, "", 1), want: protocol.ErrMalformedRecord},
		{name: "meta value a number", payload: strings.Replace(goodJSON, `"meta":{`, `"meta":{"n":1,`, 1), want: protocol.ErrMalformedRecord},
		{name: "meta value null", payload: strings.Replace(goodJSON, `"meta":{`, `"meta":{"n":null,`, 1), want: protocol.ErrMalformedRecord},
		{name: "meta key twice", payload: strings.Replace(goodJSON, `"meta":{`, `"meta":{"title":"A","title":"B",`, 1), want: protocol.ErrMalformedRecord},
		{name: "cids a string", payload: strings.Replace(goodJSON, `"cids":[`, `"cids":"x","y":[`, 1), want: protocol.ErrMalformedRecord},
		{name: "data after the object", payload: goodJSON + "{}", want: protocol.ErrMalformedRecord},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := f.good()
			if tt.edit != nil {
				tt.edit(&w)
			}
			payload := mustJSON(t, w)
			if tt.payload != "" {
				payload = []byte(tt.payload)
			}
			domain, codec, key, from, asked := protocol.RecordDomain, protocol.RecordProtocolID, f.key, f.id, f.sha
			if tt.domain != "" {
				domain = tt.domain
			}
			if tt.codec != "" {
				codec = tt.codec
			}
			if tt.key != nil {
				key = tt.key
			}
			if tt.from != "" {
				from = tt.from
			}
			if tt.asked != "" {
				asked = tt.asked
			}
			env := sealRaw(t, key, domain, codec, payload)
			if tt.tamper != nil {
				env = tt.tamper(env)
			}
			got, err := protocol.OpenRecord(env, from, asked)
			if !errors.Is(err, tt.want) {
				t.Fatalf("OpenRecord: got error %v, want %v", err, tt.want)
			}
			if !reflect.DeepEqual(got, protocol.Record{}) {
				t.Errorf("OpenRecord returned %+v with an error, want the zero Record", got)
			}
			t.Log(err)
		})
	}
}

func TestOpenRecord_TimeForms(t *testing.T) {
	f := newFixture(t)
	for _, s := range []string{
		"2025-03-14T15:09:26Z",
		"2025-03-14T15:09:26.535897932Z",
		"2025-03-14T17:09:26+02:00",
		"2025-03-14T17:09:26.5+02:00",
	} {
		t.Run(s, func(t *testing.T) {
			w := f.good()
			w.Time = s
			env := sealRaw(t, f.key, protocol.RecordDomain, protocol.RecordProtocolID, mustJSON(t, w))
			r, err := protocol.OpenRecord(env, f.id, f.sha)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := time.Parse(time.RFC3339, s)
			if !r.Time.Equal(want) || r.Time.Location() != time.UTC {
				t.Errorf("time = %s, want %s in UTC", r.Time, want)
			}
		})
	}
}

func TestOpenRecord_LargestMessage(t *testing.T) {
	f := newFixture(t)
	w := f.good()
	// Fill meta until the envelope is just under the cap.
	for i := 0; ; i++ {
		w.Meta[fmt.Sprintf("big/%02d", i)] = strings.Repeat("x", protocol.MaxMetaValue)
		if len(sealRaw(t, f.key, protocol.RecordDomain, protocol.RecordProtocolID, mustJSON(t, w))) > protocol.MaxRecordMessage {
			delete(w.Meta, fmt.Sprintf("big/%02d", i))
			break
		}
	}
	env := sealRaw(t, f.key, protocol.RecordDomain, protocol.RecordProtocolID, mustJSON(t, w))
	if _, err := protocol.OpenRecord(env, f.id, f.mid); err != nil {
		t.Fatalf("envelope of %d bytes: %v", len(env), err)
	}
}

func TestNewRecord(t *testing.T) {
	f := newFixture(t)
	meta := map[string]string{
		"title":                                 "Sintel",
		"fileinfo/duration":                     "888",
		"sizeByte":                              "42",
		"filePath":                              "/srv/media/sintel.mkv",
		"filePathBytes":                         "L3Nydg==",
		"duplicates":                            "/srv/media/copy.mkv",
		"duplicates/0":                          "/srv/media/copy.mkv",
		"duplicatesBytes/0":                     "L3Nydg==",
		"duplicateCount":                        "1",
		"mtime":                                 "1700000000000000000",
		"cids/" + f.sha:                         "true",
		"origin/" + f.other.String() + "/title": "Sintel (peer)",
		"origin":                                "x",
		"originalTitle":                         "Sintel",
		"":                                      "empty key",
		"bad\xffkey":                            "v",
		"badvalue":                              "\xff",
		strings.Repeat("k", protocol.MaxMetaKey+1): "v",
		"long": strings.Repeat("v", protocol.MaxMetaValue+1),
	}
	r, err := protocol.NewRecord([]string{f.sha, f.mid, f.pbV0, f.sha, " " + f.pb}, meta, f.id, f.when.Add(999*time.Millisecond).In(time.FixedZone("x", 3600)))
	if err != nil {
		t.Fatal(err)
	}
	want := protocol.Record{
		CID:  f.pb,
		CIDs: sortedCopy([]string{f.mid, f.sha, f.pb}),
		Meta: map[string]string{"title": "Sintel", "fileinfo/duration": "888", "sizeByte": "42", "originalTitle": "Sintel"},
		Peer: f.id,
		Time: f.when,
	}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got  %+v\nwant %+v", r, want)
	}
	if err := r.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestNewRecord_Errors(t *testing.T) {
	f := newFixture(t)
	many := distinctCIDs(t, protocol.MaxRecordCIDs+1)
	tests := []struct {
		name     string
		cids     []string
		producer peer.ID
		when     time.Time
		want     error
	}{
		{"no CIDs", nil, f.id, f.when, protocol.ErrMalformedRecord},
		{"invalid CID", []string{f.sha, "nope"}, f.id, f.when, protocol.ErrInvalidCID},
		{"empty CID", []string{""}, f.id, f.when, protocol.ErrEmptyCID},
		{"too many CIDs", many, f.id, f.when, protocol.ErrTooLarge},
		{"no producer", []string{f.sha}, "", f.when, protocol.ErrMalformedRecord},
		{"zero time", []string{f.sha}, f.id, time.Time{}, protocol.ErrBadTime},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := protocol.NewRecord(tt.cids, nil, tt.producer, tt.when)
			if !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestNewRecord_MetaCapKeepsFirstKeys(t *testing.T) {
	f := newFixture(t)
	meta := make(map[string]string)
	for i := range protocol.MaxRecordMeta + 10 {
		meta[fmt.Sprintf("k%05d", i)] = "v"
	}
	r, err := protocol.NewRecord([]string{f.sha}, meta, f.id, f.when)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(r.Meta); got != protocol.MaxRecordMeta {
		t.Fatalf("len(meta) = %d, want %d", got, protocol.MaxRecordMeta)
	}
	if _, ok := r.Meta[fmt.Sprintf("k%05d", protocol.MaxRecordMeta)]; ok {
		t.Errorf("kept a key past the cap in key order")
	}
}

func TestSealRecord_Refuses(t *testing.T) {
	f := newFixture(t)
	r, err := protocol.NewRecord([]string{f.sha, f.mid}, nil, f.id, f.when)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("key of another peer", func(t *testing.T) {
		if _, err := protocol.SealRecord(r, f.otherKey); !errors.Is(err, protocol.ErrWrongPeer) {
			t.Errorf("got %v, want ErrWrongPeer", err)
		}
	})
	t.Run("invalid record", func(t *testing.T) {
		bad := r
		bad.CID = f.mid
		if _, err := protocol.SealRecord(bad, f.key); !errors.Is(err, protocol.ErrWrongCanonical) {
			t.Errorf("got %v, want ErrWrongCanonical", err)
		}
	})
	t.Run("forbidden meta set by hand", func(t *testing.T) {
		bad := r
		bad.Meta = map[string]string{"filePath": "/x"}
		if _, err := protocol.SealRecord(bad, f.key); !errors.Is(err, protocol.ErrForbiddenMeta) {
			t.Errorf("got %v, want ErrForbiddenMeta", err)
		}
	})
	t.Run("over the message cap", func(t *testing.T) {
		meta := make(map[string]string)
		for i := range 17 {
			meta[fmt.Sprintf("big/%02d", i)] = strings.Repeat("x", protocol.MaxMetaValue)
		}
		big, err := protocol.NewRecord([]string{f.sha}, meta, f.id, f.when)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := protocol.SealRecord(big, f.key); !errors.Is(err, protocol.ErrTooLarge) {
			t.Errorf("got %v, want ErrTooLarge", err)
		}
	})
}

func TestShareableKey(t *testing.T) {
	for key, want := range map[string]bool{
		"title":                 true,
		"fileinfo/duration":     true,
		"originalTitle":         true,
		"mtimeish":              true,
		"sizeByte":              true,
		"filePath":              false,
		"filePath/x":            false,
		"filePathBytes":         false,
		"duplicates":            false,
		"duplicates/3":          false,
		"duplicatesBytes/0":     false,
		"duplicateCount":        false,
		"mtime":                 false,
		"cids/bafkreia":         false,
		"origin":                false,
		"origin/12D3KooW/title": false,
	} {
		if got := protocol.ShareableKey(key); got != want {
			t.Errorf("ShareableKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestRecord_JSONShape(t *testing.T) {
	f := newFixture(t)
	r, err := protocol.NewRecord([]string{f.sha}, map[string]string{"b": "<2>", "a": "1"}, f.id, f.when)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.MarshalRecord()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"cid":"` + f.sha + `","cids":["` + f.sha + `"],"meta":{"a":"1","b":"<2>"},"peer":"` + f.id.String() + `","time":"2025-03-14T15:09:26Z"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var back protocol.Record
	if err := back.UnmarshalRecord(got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Errorf("unmarshal: got %+v, want %+v", back, r)
	}
	if d, c := r.Domain(), string(r.Codec()); d != "metamesh-record" || c != "/metamesh/record/1.0.0" {
		t.Errorf("domain, codec = %q, %q", d, c)
	}
}

func TestFixedFixture_TwoPeers(t *testing.T) {
	a, b := fixedFixture(t), fixedFixture(t)
	if a.id != b.id || a.other != b.other || a.id == a.other {
		t.Fatalf("fixed fixture peers: %s %s, %s %s", a.id, a.other, b.id, b.other)
	}
}
