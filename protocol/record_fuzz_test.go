package protocol_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/record"
	"github.com/multiformats/go-varint"

	"github.com/metamesh/node/protocol"
)

func FuzzReadRequest(f *testing.F) {
	fx := fixedFixture(f)
	for _, s := range []string{fx.sha, fx.pbV0, fx.mid} {
		f.Add(message(uint64(len(s)), s))
	}
	f.Add([]byte{})
	f.Add([]byte{0x80})
	f.Add([]byte{0x80, 0x00})
	f.Add([]byte{0x81, 0x04})
	f.Add(message(5, "hello"))
	f.Add(message(3, "b\xff\xfe"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &countingReader{tb: t, r: bytes.NewReader(data), max: 2 + protocol.MaxRequestCID}
		got, err := protocol.ReadRequest(r)
		if err != nil {
			return
		}
		if !protocol.IsCanonicalForm(got) {
			t.Fatalf("ReadRequest accepted %q, not in canonical form", got)
		}
		var buf bytes.Buffer
		if err := protocol.WriteRequest(&buf, got); err != nil {
			t.Fatalf("WriteRequest(%q): %v", got, err)
		}
		again, err := protocol.ReadRequest(&buf)
		if err != nil || again != got {
			t.Fatalf("round trip of %q: %q, %v", got, again, err)
		}
	})
}

func FuzzReadResponse(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{})
	f.Add(message(3, "abc"))
	f.Add([]byte{0xff, 0xff, 0x7f})
	f.Add([]byte{0x80, 0x80, 0x40})
	f.Add([]byte{0x80, 0x80, 0x00})
	f.Add(message(1000, "short"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &countingReader{tb: t, r: bytes.NewReader(data), max: 3 + protocol.MaxRecordMessage}
		body, err := protocol.ReadResponse(r)
		if err != nil {
			if body != nil {
				t.Fatalf("%d bytes returned with error %v", len(body), err)
			}
			return
		}
		if len(body) > protocol.MaxRecordMessage {
			t.Fatalf("accepted a body of %d bytes", len(body))
		}
		if body != nil && len(body) == 0 {
			t.Fatal("empty non-nil body; not found must be nil")
		}
		// What was read is exactly the minimal encoding of what came out.
		var buf bytes.Buffer
		if err := protocol.WriteResponse(&buf, body); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), data[:r.n]) {
			t.Fatalf("read %x, re-encodes as %x", data[:r.n], buf.Bytes())
		}
		if r.n != varint.UvarintSize(uint64(len(body)))+len(body) {
			t.Fatalf("read %d bytes for a %d-byte body", r.n, len(body))
		}
	})
}

// FuzzOpenRecord feeds OpenRecordAs, of 1.0.0 or 1.1.0 (v11), either
// data as the envelope (sealed is false), or data as a payload that a real
// key signs, so the fuzzer reaches the record checks behind the
// signature, a 1.1.0 name's among them.
func FuzzOpenRecord(f *testing.F) {
	fx := fixedFixture(f)
	good := mustJSON(f, fx.good())
	env := sealRaw(f, fx.key, protocol.RecordDomain, protocol.RecordProtocolID, good)
	named := bytes.Replace(good, []byte(`,"peer":`), []byte(`,"name":"Alice\u001b[2J\n\u202e's NAS","peer":`), 1)
	f.Add(good, fx.sha, true, false)
	f.Add(good, fx.pbV0, true, false)
	f.Add(good, fx.mid, true, false)
	f.Add(good, fx.mid, true, true)
	f.Add(named, fx.sha, true, true)
	f.Add(named, fx.sha, true, false)
	f.Add(env, fx.sha, false, false)
	f.Add(env[:len(env)/2], fx.sha, false, false)
	f.Add([]byte(`{"cid":"","cids":[],"meta":{},"peer":"","time":""}`), fx.sha, true, false)
	f.Add([]byte(`{"cid":1,"cids":{},"meta":[],"name":[],"peer":null,"time":true}`), fx.sha, true, true)
	f.Add([]byte(`[]`), "", true, false)
	f.Add([]byte{}, "Qm", false, true)
	f.Fuzz(func(t *testing.T, data []byte, asked string, sealed, v11 bool) {
		from := fx.id
		version := protocol.RecordProtocolID
		if v11 {
			version = protocol.RecordProtocolV11
		}
		if sealed {
			if len(data) > protocol.MaxRecordMessage {
				return
			}
			data = sealRaw(t, fx.key, protocol.RecordDomain, version, data)
		} else if e, err := record.UnmarshalEnvelope(data); err == nil {
			// Let a mutated key still be the sender, so the later checks run.
			if id, err := peer.IDFromPublicKey(e.PublicKey); err == nil {
				from = id
			}
		}
		r, err := protocol.OpenRecordAs(version, data, from, asked)
		if err != nil {
			if !reflect.DeepEqual(r, protocol.Record{}) {
				t.Fatalf("non-zero record with error %v", err)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("accepted an invalid record: %v", err)
		}
		want, err := protocol.Normalize(asked)
		if err != nil || !r.Has(want) {
			t.Fatalf("accepted a record without the asked %q (%v)", asked, err)
		}
		if r.Peer != from {
			t.Fatalf("record of %s accepted from %s", r.Peer, from)
		}
		if r.Name != "" && (!v11 || protocol.CheckName(r.Name) != nil) {
			t.Fatalf("name %q accepted (version %s)", r.Name, version)
		}
		if r.Meta == nil {
			t.Fatal("nil meta")
		}
		for k := range r.Meta {
			if !protocol.ShareableKey(k) {
				t.Fatalf("accepted meta key %q", k)
			}
		}
		// Whatever is accepted re-encodes to a payload that opens to the
		// same record (a named one in 1.1.0, through a reseal).
		if r.Name == "" {
			payload, err := r.MarshalRecord()
			if err != nil {
				t.Fatal(err)
			}
			var back protocol.Record
			if err := back.UnmarshalRecord(payload); err != nil {
				t.Fatalf("re-encoded record does not decode: %v\n%s", err, payload)
			}
			if !reflect.DeepEqual(back, r) {
				t.Fatalf("re-encoded record differs:\n got %+v\nwant %+v", back, r)
			}
		}
		if from == fx.id {
			resealed, err := protocol.SealRecordAs(version, r, fx.key)
			if err != nil {
				t.Fatalf("SealRecordAs of an accepted record: %v", err)
			}
			back, err := protocol.OpenRecordAs(version, resealed, fx.id, asked)
			if err != nil {
				t.Fatalf("resealed record does not open: %v", err)
			}
			if !reflect.DeepEqual(back, r) {
				t.Fatalf("resealed record differs:\n got %+v\nwant %+v", back, r)
			}
		}
	})
}
