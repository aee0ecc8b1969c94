package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/record"
)

// The record protocol's identifiers. Other implementations must use them
// byte for byte.
const (
	// RecordProtocolID is the libp2p protocol of record lookups, 1.0.0,
	// and the payload type (its bytes) of its record envelopes.
	RecordProtocolID = "/metamesh/record/1.0.0"
	// RecordProtocolV11 is the protocol ID and payload type of 1.1.0,
	// whose records may also carry the household's name.
	RecordProtocolV11 = "/metamesh/record/1.1.0"
	// RecordDomain is the signing domain of record envelopes.
	RecordDomain = "metamesh-record"
)

// Caps of the record protocol. A peer that exceeds one is answered with
// ErrTooLarge; a node never produces a record that exceeds one.
const (
	// MaxRequestCID bounds the asked CID's text in a request, in bytes.
	MaxRequestCID = MaxCIDLength
	// MaxRecordMessage bounds a response body (the signed envelope), in
	// bytes, and so the record inside it.
	MaxRecordMessage = 1 << 20
	// MaxRecordCIDs bounds the members of one record. A file has a handful
	// (midhash, sha2-256, IPFS, a few from other systems); 256 leaves room
	// for every CID system there is, and bounds the work of ranking.
	MaxRecordCIDs = 256
	// MaxRecordMeta bounds the number of meta entries of one record.
	MaxRecordMeta = 4096
	// MaxMetaKey bounds one meta key (a flat path such as
	// "fileinfo/streams/0/codec"), in bytes.
	MaxMetaKey = 512
	// MaxMetaValue bounds one meta value, in bytes: room for a long
	// description or lyrics; the message cap bounds the whole.
	MaxMetaValue = 64 << 10
)

// Record is what a node answers about one file: every CID of its key-set
// and the metadata it may share, signed by the producing peer. Its JSON is
// exactly
//
//	{"cid": canonical, "cids": [members, sorted], "meta": {flat fields}, "peer": peer ID, "time": RFC 3339}
//
// with no other field, each field present once, meta values strings.
//
// *Record implements go-libp2p's record.Record, so record.Seal can seal it;
// SealRecord and OpenRecord are the checked entry points. The type is not
// registered with record.RegisterType (nothing here keeps global state):
// open envelopes with OpenRecord, not record.ConsumeEnvelope.
type Record struct {
	// CID is the canonical CID of CIDs (Canonical).
	CID string
	// CIDs are every member of the file's key-set, in canonical string
	// form, sorted in byte order, without repeats.
	CIDs []string
	// Meta holds flat, shareable metadata fields ("title",
	// "fileinfo/duration", …); never nil in a record from NewRecord or
	// OpenRecord. No key fails ShareableKey.
	Meta map[string]string
	// Name is the producer's household name, as it calls itself
	// (CheckName holds; "" when it sent none). It travels in 1.1.0 only,
	// as the field "name"; a 1.0.0 record leaves it out.
	Name string
	// Peer is the producer, the peer that signs the record.
	Peer peer.ID
	// Time is when the record was produced. It is written in RFC 3339 in
	// UTC, with a fraction of a second only when Time has one (records from
	// NewRecord have whole seconds).
	Time time.Time
}

var _ record.Record = (*Record)(nil)

// RecordProtocols are the versions of the record protocol, newest first:
// the order an asker offers them in.
var RecordProtocols = []string{RecordProtocolV11, RecordProtocolID}

// knownRecordVersion reports one of RecordProtocols.
func knownRecordVersion(v string) bool { return v == RecordProtocolID || v == RecordProtocolV11 }

// localOnly are the first segments of meta keys that never cross the wire:
// local paths and what derives from them (filePath, filePathBytes,
// duplicates, duplicatesBytes, duplicateCount), the local mtime, the
// key-set (carried by "cids", never as meta), and origin/<peer>/…, where a
// node keeps what peers said: re-sharing peers' claims under its own
// signature would turn hearsay into a first-hand record.
var localOnly = map[string]bool{
	"filePath":        true,
	"filePathBytes":   true,
	"duplicates":      true,
	"duplicatesBytes": true,
	"duplicateCount":  true,
	"mtime":           true,
	"cids":            true,
	"origin":          true,
}

// ShareableKey reports whether a flat meta key may cross the wire: its
// first "/"-separated segment is none of filePath, filePathBytes,
// duplicates, duplicatesBytes, duplicateCount, mtime, cids and origin.
// The match is exact (case-sensitive), as store keys are.
func ShareableKey(key string) bool {
	first, _, _ := strings.Cut(key, "/")
	return !localOnly[first]
}

// NewRecord builds the record a node signs for one file. cids may be in any
// valid CID form; they are normalised to the canonical string form, sorted
// and de-duplicated, and CID is set to their canonical. An invalid CID, none
// at all or more than MaxRecordCIDs distinct ones is an error.
//
// meta is filtered, never rejected: entries whose key fails ShareableKey
// or ValidFieldName, or is longer than MaxMetaKey, whose value is longer than
// MaxMetaValue, and entries that are not valid UTF-8 are dropped; past
// MaxRecordMeta entries only the first by key order are kept. The message
// cap is checked by SealRecord, which sees the signed size.
//
// t is truncated to whole seconds in UTC; a zero t is an error.
func NewRecord(cids []string, meta map[string]string, producer peer.ID, t time.Time) (Record, error) {
	if err := producer.Validate(); err != nil {
		return Record{}, fmt.Errorf("%w: producer: %w", ErrMalformedRecord, err)
	}
	if t.IsZero() {
		return Record{}, fmt.Errorf("%w: zero time", ErrBadTime)
	}
	if len(cids) == 0 {
		return Record{}, fmt.Errorf("%w: no CIDs", ErrMalformedRecord)
	}
	norm := make([]string, 0, len(cids))
	for _, c := range cids {
		n, err := Normalize(c)
		if err != nil {
			return Record{}, err
		}
		norm = append(norm, n)
	}
	slices.Sort(norm)
	norm = slices.Compact(norm)
	if len(norm) > MaxRecordCIDs {
		return Record{}, fmt.Errorf("%w: %d CIDs, at most %d", ErrTooLarge, len(norm), MaxRecordCIDs)
	}
	r := Record{
		CID:  Canonical(norm),
		CIDs: norm,
		Meta: shareable(meta),
		Peer: producer,
		Time: t.UTC().Truncate(time.Second),
	}
	if err := r.Validate(); err != nil {
		return Record{}, err
	}
	return r, nil
}

func shareable(meta map[string]string) map[string]string {
	keys := make([]string, 0, len(meta))
	for k, v := range meta {
		if metaProblem(k, v) == nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if len(keys) > MaxRecordMeta {
		keys = keys[:MaxRecordMeta]
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		out[k] = meta[k]
	}
	return out
}

// ValidFieldName reports whether f is a flat field name: one or more
// non-empty segments separated by "/" (so not empty, no leading or
// trailing "/", no "//"). It is the shape the store demands of every field
// name (store.ValidField, which also refuses the schema's own names); a
// meta key that fails it is refused on the wire, as the store could never
// keep it.
func ValidFieldName(f string) bool {
	return f != "" && !strings.HasPrefix(f, "/") && !strings.HasSuffix(f, "/") && !strings.Contains(f, "//")
}

// metaProblem says why one meta entry may not be in a record, or returns nil.
func metaProblem(k, v string) error {
	switch {
	case k == "":
		return fmt.Errorf("%w: empty meta key", ErrMalformedRecord)
	case len(k) > MaxMetaKey:
		return fmt.Errorf("%w: meta key of %d bytes, at most %d", ErrTooLarge, len(k), MaxMetaKey)
	case len(v) > MaxMetaValue:
		return fmt.Errorf("%w: meta value of %q is %d bytes, at most %d", ErrTooLarge, clip(k), len(v), MaxMetaValue)
	case !utf8.ValidString(k) || !utf8.ValidString(v):
		return fmt.Errorf("%w: meta entry %q is not UTF-8", ErrMalformedRecord, clip(k))
	case !ValidFieldName(k):
		return fmt.Errorf("%w: meta key %q has an empty segment (a leading or trailing \"/\", or \"//\")", ErrMalformedRecord, clip(k))
	case !ShareableKey(k):
		return fmt.Errorf("%w: %q", ErrForbiddenMeta, clip(k))
	}
	return nil
}

// Validate checks every invariant of a record on its own (OpenRecord adds
// the checks that need the envelope and the question): at least one CID and
// at most MaxRecordCIDs, each in canonical string form; CIDs strictly
// increasing; CID = Canonical(CIDs); at most MaxRecordMeta meta entries,
// each UTF-8, within MaxMetaKey and MaxMetaValue, its key a flat field
// name (ValidFieldName) and shareable; a Name CheckName accepts; a valid Peer; a non-zero Time with a year from 1 to 9999.
// It returns the first problem, wrapping its sentinel.
func (r Record) Validate() error {
	switch {
	case len(r.CIDs) == 0:
		return fmt.Errorf("%w: no CIDs", ErrMalformedRecord)
	case len(r.CIDs) > MaxRecordCIDs:
		return fmt.Errorf("%w: %d CIDs, at most %d", ErrTooLarge, len(r.CIDs), MaxRecordCIDs)
	}
	for i, c := range r.CIDs {
		if _, err := ParseStrict(c); err != nil {
			return fmt.Errorf("cids[%d]: %w", i, err)
		}
	}
	for i := 1; i < len(r.CIDs); i++ {
		if r.CIDs[i-1] >= r.CIDs[i] {
			return fmt.Errorf("%w: %q then %q", ErrCIDsNotSorted, r.CIDs[i-1], r.CIDs[i])
		}
	}
	if want := Canonical(r.CIDs); r.CID != want {
		return fmt.Errorf("%w: %q, want %q", ErrWrongCanonical, clip(r.CID), want)
	}
	if len(r.Meta) > MaxRecordMeta {
		return fmt.Errorf("%w: %d meta entries, at most %d", ErrTooLarge, len(r.Meta), MaxRecordMeta)
	}
	for k, v := range r.Meta {
		if err := metaProblem(k, v); err != nil {
			return err
		}
	}
	if err := CheckName(r.Name); err != nil {
		return fmt.Errorf("%w: name: %w", ErrMalformedRecord, err)
	}
	if err := r.Peer.Validate(); err != nil {
		return fmt.Errorf("%w: peer: %w", ErrMalformedRecord, err)
	}
	if y := r.Time.Year(); r.Time.IsZero() || y < 1 || y > 9999 {
		return fmt.Errorf("%w: %s", ErrBadTime, r.Time)
	}
	return nil
}

// Has reports whether the record holds c, a CID in canonical string form.
func (r Record) Has(c string) bool {
	_, found := slices.BinarySearch(r.CIDs, c)
	return found
}

// Domain is the signing domain of record envelopes, RecordDomain.
func (*Record) Domain() string { return RecordDomain }

// Codec is the payload type of record envelopes, the bytes of
// RecordProtocolID.
func (*Record) Codec() []byte { return []byte(RecordProtocolID) }

// wireRecord fixes the field order of the JSON: cid, cids, meta, name
// (1.1.0, when there is one), peer, time.
type wireRecord struct {
	CID  string            `json:"cid"`
	CIDs []string          `json:"cids"`
	Meta map[string]string `json:"meta"`
	Name string            `json:"name,omitempty"`
	Peer string            `json:"peer"`
	Time string            `json:"time"`
}

// MarshalRecord encodes the record as its JSON payload: fields in the
// order cid, cids, meta, name (left out when empty), peer, time; meta keys
// sorted; no HTML escaping; no trailing newline. It does not validate
// (SealRecordAs does, and leaves the name out of a 1.0.0 record).
func (r *Record) MarshalRecord() ([]byte, error) {
	w := wireRecord{
		CID:  r.CID,
		CIDs: r.CIDs,
		Meta: r.Meta,
		Name: r.Name,
		Peer: r.Peer.String(),
		Time: r.Time.UTC().Format(time.RFC3339Nano),
	}
	if w.CIDs == nil {
		w.CIDs = []string{}
	}
	if w.Meta == nil {
		w.Meta = map[string]string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, fmt.Errorf("encode record: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalRecord decodes a 1.0.0 JSON payload strictly: valid UTF-8, one
// object with exactly the fields cid, cids, meta, peer and time
// (case-sensitive, each once), cids an array of strings, meta an object
// of string values without repeated keys, peer a peer ID in its usual
// (base58) text form, time RFC 3339 with or without a fraction of a
// second. A "name" is an unknown field here, as it is to a peer that
// speaks 1.0.0 alone. It does not check the record's invariants (Validate
// does). On error r is unchanged.
func (r *Record) UnmarshalRecord(data []byte) error {
	return r.unmarshalAs(RecordProtocolID, data)
}

// unmarshalAs is UnmarshalRecord for a payload of version, where 1.1.0
// also takes an optional "name", a string, kept as sent (OpenRecordAs
// cleans it).
func (r *Record) unmarshalAs(version string, data []byte) error {
	if len(data) > MaxRecordMessage {
		return fmt.Errorf("%w: payload of %d bytes, at most %d", ErrTooLarge, len(data), MaxRecordMessage)
	}
	if !utf8.Valid(data) {
		return fmt.Errorf("%w: payload is not UTF-8", ErrMalformedRecord)
	}
	w, err := decodeWire(data, version == RecordProtocolV11)
	if err != nil {
		return err
	}
	id, err := peer.Decode(w.Peer)
	if err != nil {
		return fmt.Errorf("%w: peer %q: %w", ErrMalformedRecord, clip(w.Peer), err)
	}
	if id.String() != w.Peer {
		return fmt.Errorf("%w: peer %q is not in its base58 text form", ErrMalformedRecord, clip(w.Peer))
	}
	t, err := time.Parse(time.RFC3339, w.Time)
	if err != nil {
		return fmt.Errorf("%w: %q: %w", ErrBadTime, clip(w.Time), err)
	}
	*r = Record{CID: w.CID, CIDs: w.CIDs, Meta: w.Meta, Name: w.Name, Peer: id, Time: t.UTC()}
	return nil
}
