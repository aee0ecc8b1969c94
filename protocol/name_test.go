package protocol_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/libp2p/go-libp2p/core/record"

	"github.com/metamesh/node/protocol"
)

func TestCheckName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"", true},
		{"Alice's NAS", true},
		{"Maison Dupré ☀", true},
		{strings.Repeat("a", protocol.MaxName), true},
		{strings.Repeat("a", protocol.MaxName+1), false},
		{strings.Repeat("é", 33), false}, // 66 bytes
		{" padded", false},
		{"padded ", false},
		{"line\nbreak", false},
		{"esc\x1b[31mred", false},
		{"tab\there", false},
		{"del\x7f", false},
		{"\u202eevil", false},
		{"bad \xff utf8", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := protocol.CheckName(tc.name)
			if got := err == nil; got != tc.ok {
				t.Fatalf("CheckName(%q) = %v, want ok %v", tc.name, err, tc.ok)
			}
			if err != nil && !errors.Is(err, protocol.ErrBadName) {
				t.Errorf("error %v does not wrap ErrBadName", err)
			}
		})
	}
}

func TestCleanName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"Alice's NAS", "Alice's NAS"},
		{"  spaced  ", "spaced"},
		{"line\nbreak\r", "linebreak"},
		{"esc\x1b[31mred\x1b[0m", "esc[31mred[0m"},
		{"\u202eevil\u2066", "evil"},
		{"bad \xff\xfe utf8", "bad  utf8"},
		{"\x00\x01\x02", ""},
		{strings.Repeat("a", 100), strings.Repeat("a", protocol.MaxName)},
		{strings.Repeat("é", 40), strings.Repeat("é", 32)},
		{strings.Repeat("a", 63) + "é", strings.Repeat("a", 63)},
		{strings.Repeat("a", 63) + " b", strings.Repeat("a", 63)},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got := protocol.CleanName(tc.in)
			if got != tc.want {
				t.Errorf("CleanName(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if err := protocol.CheckName(got); err != nil {
				t.Errorf("CheckName(CleanName(%q)): %v", tc.in, err)
			}
		})
	}
}

func FuzzCleanName(f *testing.F) {
	for _, s := range []string{"", "Alice's NAS", "a\nb", "\u202e", "\xff", strings.Repeat("é", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := protocol.CleanName(s)
		if err := protocol.CheckName(got); err != nil {
			t.Fatalf("CleanName(%q) = %q: %v", s, got, err)
		}
		if protocol.CheckName(s) == nil && got != s {
			t.Fatalf("CleanName changed the valid name %q into %q", s, got)
		}
		if !utf8.ValidString(got) || len(got) > protocol.MaxName {
			t.Fatalf("CleanName(%q) = %q", s, got)
		}
	})
}

// namedRecord is the vector's record with the household's name.
func namedRecord(t *testing.T, f fixture, name string) protocol.Record {
	t.Helper()
	r, err := protocol.NewRecord([]string{f.mid, f.sha, f.pb}, map[string]string{
		"title":             "Big Buck Bunny",
		"fileinfo/duration": "596.5",
		"sizeByte":          "276134947",
	}, f.id, f.when)
	if err != nil {
		t.Fatal(err)
	}
	r.Name = name
	return r
}

// A 1.1.0 record carries the name; the same record sealed for 1.0.0 is
// byte for byte the record without one, which is what a peer that speaks
// 1.0.0 alone is answered with; and the rules of such a peer refuse the
// 1.1.0 payload (its decoder knows no "name"), which is why the name has
// a version of its own instead of a field old peers would choke on.
func TestRecord_NameVersions(t *testing.T) {
	f := fixedFixture(t)
	named := namedRecord(t, f, "Alice's NAS")
	bare := namedRecord(t, f, "")

	v11, err := protocol.SealRecordAs(protocol.RecordProtocolV11, named, f.key)
	if err != nil {
		t.Fatal(err)
	}
	got, err := protocol.OpenRecordAs(protocol.RecordProtocolV11, v11, f.id, f.pb)
	if err != nil || !reflect.DeepEqual(got, named) {
		t.Fatalf("1.1.0 round trip = %+v, %v; want %+v", got, err, named)
	}

	namedOld, err := protocol.SealRecordAs(protocol.RecordProtocolID, named, f.key)
	if err != nil {
		t.Fatal(err)
	}
	bareOld, err := protocol.SealRecord(bare, f.key)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(namedOld, bareOld) {
		t.Errorf("a named record sealed for 1.0.0 differs from the unnamed one")
	}
	if got, err := protocol.OpenRecord(namedOld, f.id, f.pb); err != nil || !reflect.DeepEqual(got, bare) {
		t.Errorf("1.0.0 = %+v, %v; want %+v", got, err, bare)
	}

	// A 1.1.0 record without a name is the 1.0.0 payload, under 1.1.0's type.
	bare11, err := protocol.SealRecordAs(protocol.RecordProtocolV11, bare, f.key)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := protocol.OpenRecordAs(protocol.RecordProtocolV11, bare11, f.id, f.pb); err != nil || got.Name != "" {
		t.Errorf("1.1.0 without a name = %+v, %v", got, err)
	}
	e11, _ := record.UnmarshalEnvelope(bare11)
	e10, _ := record.UnmarshalEnvelope(bareOld)
	if !bytes.Equal(e11.RawPayload, e10.RawPayload) {
		t.Errorf("payloads differ:\n%s\n%s", e11.RawPayload, e10.RawPayload)
	}

	// Each version opens only on its own stream.
	if _, err := protocol.OpenRecord(v11, f.id, f.pb); !errors.Is(err, protocol.ErrWrongPayloadType) {
		t.Errorf("1.1.0 envelope on a 1.0.0 stream: %v, want ErrWrongPayloadType", err)
	}
	if _, err := protocol.OpenRecordAs(protocol.RecordProtocolV11, bareOld, f.id, f.pb); !errors.Is(err, protocol.ErrWrongPayloadType) {
		t.Errorf("1.0.0 envelope on a 1.1.0 stream: %v, want ErrWrongPayloadType", err)
	}
	// The 1.1.0 payload under a 1.0.0 decoder: an unknown field.
	env, _ := record.UnmarshalEnvelope(v11)
	var old protocol.Record
	if err := old.UnmarshalRecord(env.RawPayload); !errors.Is(err, protocol.ErrMalformedRecord) {
		t.Errorf("1.0.0 decoder on a named payload: %v, want ErrMalformedRecord", err)
	}
	// The signer cannot seal a name it may not send.
	if _, err := protocol.SealRecordAs(protocol.RecordProtocolV11, namedRecord(t, f, "a\nb"), f.key); !errors.Is(err, protocol.ErrMalformedRecord) {
		t.Errorf("seal a name with a newline: %v, want ErrMalformedRecord", err)
	}
}

// A peer's name is cleaned, never a reason to refuse its record.
func TestOpenRecord_HostileName(t *testing.T) {
	f := fixedFixture(t)
	for _, tc := range []struct{ name, sent, want string }{
		{"too long", strings.Repeat("x", 5000), strings.Repeat("x", protocol.MaxName)},
		{"control characters", "Alice\x1b[2J\r\n's", "Alice[2J's"},
		{"direction marks", "\u202eSAN s'ecilA", "SAN s'ecilA"},
		{"only controls", "\x07\x07", ""},
		{"spaces", "   ", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := namedRecord(t, f, "")
			payload, err := r.MarshalRecord()
			if err != nil {
				t.Fatal(err)
			}
			// The name spliced in by hand: SealRecordAs would refuse it.
			payload = bytes.Replace(payload, []byte(`,"peer":`), []byte(`,"name":`+string(mustJSON(t, tc.sent))+`,"peer":`), 1)
			env := sealRaw(t, f.key, protocol.RecordDomain, protocol.RecordProtocolV11, payload)
			got, err := protocol.OpenRecordAs(protocol.RecordProtocolV11, env, f.id, f.pb)
			if err != nil {
				t.Fatalf("OpenRecordAs: %v", err)
			}
			if got.Name != tc.want {
				t.Errorf("name = %q, want %q", got.Name, tc.want)
			}
		})
	}
	t.Run("not a string", func(t *testing.T) {
		r := namedRecord(t, f, "")
		payload, _ := r.MarshalRecord()
		payload = bytes.Replace(payload, []byte(`,"peer":`), []byte(`,"name":7,"peer":`), 1)
		env := sealRaw(t, f.key, protocol.RecordDomain, protocol.RecordProtocolV11, payload)
		if _, err := protocol.OpenRecordAs(protocol.RecordProtocolV11, env, f.id, f.pb); !errors.Is(err, protocol.ErrMalformedRecord) {
			t.Errorf("%v, want ErrMalformedRecord", err)
		}
	})
	t.Run("twice", func(t *testing.T) {
		r := namedRecord(t, f, "")
		payload, _ := r.MarshalRecord()
		payload = bytes.Replace(payload, []byte(`,"peer":`), []byte(`,"name":"a","name":"b","peer":`), 1)
		env := sealRaw(t, f.key, protocol.RecordDomain, protocol.RecordProtocolV11, payload)
		if _, err := protocol.OpenRecordAs(protocol.RecordProtocolV11, env, f.id, f.pb); !errors.Is(err, protocol.ErrMalformedRecord) {
			t.Errorf("%v, want ErrMalformedRecord", err)
		}
	})
}

// TestRecord_GoldenVectorV11 pins a 1.1.0 exchange whose record carries
// a name (testdata/record-vector-1.1.0.txt); record-vector.txt keeps 1.0.0.
func TestRecord_GoldenVectorV11(t *testing.T) {
	f := fixedFixture(t)
	seed, err := f.key.Raw()
	if err != nil {
		t.Fatal(err)
	}
	r := namedRecord(t, f, "Alice's NAS")
	payload, err := r.MarshalRecord()
	if err != nil {
		t.Fatal(err)
	}
	env, err := protocol.SealRecordAs(protocol.RecordProtocolV11, r, f.key)
	if err != nil {
		t.Fatal(err)
	}
	var req, resp bytes.Buffer
	if err := protocol.WriteRequest(&req, f.pbV0); err != nil {
		t.Fatal(err)
	}
	if err := protocol.WriteResponse(&resp, env); err != nil {
		t.Fatal(err)
	}
	golden := checkVector(t, filepath.Join("testdata", "record-vector-1.1.0.txt"), `# The record protocol /metamesh/record/1.1.0, one exchange whose record
# carries the household's name (see doc.go). The lines mean what they mean
# in record-vector.txt; the request is the same message as 1.0.0's.
`, [][2]string{
		{"ed25519-seed", hex.EncodeToString(seed[:32])},
		{"peer", f.id.String()},
		{"asked", f.pbV0},
		{"request", hex.EncodeToString(req.Bytes())},
		{"payload", string(payload)},
		{"response", hex.EncodeToString(resp.Bytes())},
	})
	respBytes, _ := hex.DecodeString(golden["response"])
	body, err := protocol.ReadResponse(bytes.NewReader(respBytes))
	if err != nil {
		t.Fatal(err)
	}
	got, err := protocol.OpenRecordAs(protocol.RecordProtocolV11, body, f.id, golden["asked"])
	if err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("OpenRecordAs(golden) = %+v, %v; want %+v", got, err, r)
	}
	if _, err := protocol.OpenRecord(body, f.id, golden["asked"]); !errors.Is(err, protocol.ErrWrongPayloadType) {
		t.Errorf("OpenRecord (1.0.0 rules) on the 1.1.0 vector: %v, want ErrWrongPayloadType", err)
	}
}
