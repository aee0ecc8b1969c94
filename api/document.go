package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Document is the answer of GET /api/meta/<cid>: one file as this node
// knows it. The node fills it (Backend.Meta) from the store's document,
// typing the fields it knows there; MarshalJSON is its one JSON form and
// UnmarshalJSON reads it back (metamesh lookup).
//
// The JSON is one object whose keys are sorted (as when it was a map):
// the metadata's names and the document's own keys (cids, canonical_cid,
// duplicates, duplicateCount, filePath, filePathBytes, duplicatesBytes,
// source, providers, peers, origin, learned) side by side. A document's
// own key that is left out (see each field) leaves a metadata field of
// that name, written by another program, visible; where both are there,
// the document's wins.
type Document struct {
	// CIDs is the file's key-set, sorted. Always sent ([] when empty).
	CIDs []string
	// CanonicalCID is the best-ranked CID of the file (protocol.Canonical:
	// of the members the node vouches for, for a local file). Always sent.
	CanonicalCID string
	// Duplicates are the file's other local paths, at most 100 (the
	// smallest), sorted; DuplicateCount says how many there are in all.
	// Both always sent.
	Duplicates     []string
	DuplicateCount int64
	// FilePath is the primary local path; "" for a file known only from
	// peers, and then left out.
	FilePath string
	// FilePathBytes and DuplicatesBytes are the exact bytes of FilePath
	// and of every duplicate (base64 in JSON), set only when a path is not
	// valid UTF-8: JSON carries U+FFFD for each invalid byte. Left out
	// when empty.
	FilePathBytes   []byte
	DuplicatesBytes [][]byte
	// Source is "local" for a local file, else the peer that answered for
	// it ("" when none is known). Always sent.
	Source string
	// Providers are the peers known to have the file: for a local file
	// this node, then the peers whose records of it were merged (only
	// those peers for a CID only they vouch for). nil leaves it out; an
	// empty list is sent as [].
	Providers []string
	// Peers are the peers that supplied members or fields, sorted. Left
	// out when empty.
	Peers []string
	// Origin is what each peer said of the file, by peer ID, typed like
	// Meta (the store's origin/<peer>/<field>). Left out when empty; when
	// the fields under origin/ are not all of that shape (an outside
	// writer's origin/<name>), they are in Meta under "origin" instead.
	Origin map[string]Meta
	// Learned are the members the file holds only because peers' records
	// carried them, each with the peers that vouch for it, sorted. Left
	// out when empty.
	Learned map[string][]string
	// Meta is the open metadata: every other field, nested and typed.
	Meta Meta

	// encoded is the answer's JSON body once Encode ran: GET /api/meta
	// writes it as it is.
	encoded []byte
}

// Encode encodes d's answer once, so that every later answer of this
// Document value (a copy of it, say, kept with a cached document) is
// written without encoding it again. The fields must not change after.
func (d *Document) Encode() error {
	d.encoded = nil
	b, err := encodeBody(*d)
	if err != nil {
		return err
	}
	d.encoded = b
	return nil
}

// Encoded is the answer's JSON body Encode wrote, nil before.
func (d Document) Encoded() []byte { return d.encoded }

// Meta is open metadata: the store's flat fields nested at "/" ("a/b"
// → {"a": {"b": …}}), an object keyed exactly 0..n-1 made a list, and a
// name that is both a value and an object keeping the value under "".
// The node types the fields it knows (numbers, RFC 3339 times); every
// other value is a string.
type Meta map[string]Value

// ValueKind says which field of a Value holds it.
type ValueKind uint8

// The kinds of Value.
const (
	KindString ValueKind = iota // Str (times too, as RFC 3339)
	KindInt                     // Int
	KindFloat                   // Float
	KindObject                  // Object
	KindList                    // List
)

// Value is one metadata value. The zero Value is the empty string.
type Value struct {
	Kind   ValueKind
	Str    string
	Int    int64
	Float  float64
	Object Meta
	List   []Value
}

// StringValue, IntValue, FloatValue, ObjectValue and ListValue make a
// Value of each kind.
func StringValue(s string) Value     { return Value{Kind: KindString, Str: s} }
func IntValue(n int64) Value         { return Value{Kind: KindInt, Int: n} }
func FloatValue(f float64) Value     { return Value{Kind: KindFloat, Float: f} }
func ObjectValue(m Meta) Value       { return Value{Kind: KindObject, Object: m} }
func ListValue(items ...Value) Value { return Value{Kind: KindList, List: items} }

// The document's own keys in its JSON.
const (
	keyCIDs            = "cids"
	keyCanonical       = "canonical_cid"
	keyDuplicates      = "duplicates"
	keyDuplicateCount  = "duplicateCount"
	keyFilePath        = "filePath"
	keyFilePathBytes   = "filePathBytes"
	keyDuplicatesBytes = "duplicatesBytes"
	keySource          = "source"
	keyProviders       = "providers"
	keyPeers           = "peers"
	keyOrigin          = "origin"
	keyLearned         = "learned"
)

// MarshalJSON writes the document as one object, keys sorted (as
// encoding/json orders a map's): Meta's fields and the document's own
// keys, which win over a field of the same name. Values are written as
// encoding/json writes the Go values they hold.
func (d Document) MarshalJSON() ([]byte, error) {
	own := d.OwnKeys()
	keys := append(make([]string, 0, len(d.Meta)+len(own)), own...)
	for k := range d.Meta {
		if !slices.Contains(own, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	b := make([]byte, 0, 2048)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if slices.Contains(own, k) {
			b, err = d.appendOwn(b, k)
		} else {
			b, err = d.Meta[k].appendJSON(b)
		}
		if err != nil {
			return nil, fmt.Errorf("api: document %q: %w", k, err)
		}
	}
	return append(b, '}'), nil
}

// OwnKeys are the document's own keys its JSON holds as it stands (those
// it always has, and those its set fields add): metadata of such a name
// is not shown, the document's own value is.
func (d Document) OwnKeys() []string {
	keys := make([]string, 0, 12)
	keys = append(keys, keyCIDs, keyCanonical, keyDuplicates, keyDuplicateCount, keySource)
	for _, k := range []struct {
		key string
		in  bool
	}{
		{keyFilePath, d.FilePath != ""},
		{keyFilePathBytes, len(d.FilePathBytes) > 0},
		{keyDuplicatesBytes, len(d.DuplicatesBytes) > 0},
		{keyProviders, d.Providers != nil},
		{keyPeers, len(d.Peers) > 0},
		{keyLearned, len(d.Learned) > 0},
		{keyOrigin, len(d.Origin) > 0},
	} {
		if k.in {
			keys = append(keys, k.key)
		}
	}
	return keys
}

// appendOwn writes the value of one of the document's own keys.
func (d Document) appendOwn(b []byte, k string) ([]byte, error) {
	switch k {
	case keyCIDs:
		return appendStrings(b, d.CIDs), nil
	case keyCanonical:
		return appendString(b, d.CanonicalCID), nil
	case keyDuplicates:
		return appendStrings(b, d.Duplicates), nil
	case keyDuplicateCount:
		return strconv.AppendInt(b, d.DuplicateCount, 10), nil
	case keySource:
		return appendString(b, d.Source), nil
	case keyFilePath:
		return appendString(b, d.FilePath), nil
	case keyFilePathBytes:
		return appendBytes(b, d.FilePathBytes), nil
	case keyDuplicatesBytes:
		b = append(b, '[')
		for i, p := range d.DuplicatesBytes {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendBytes(b, p)
		}
		return append(b, ']'), nil
	case keyProviders:
		return appendStrings(b, d.Providers), nil
	case keyPeers:
		return appendStrings(b, d.Peers), nil
	case keyLearned:
		return appendObject(b, d.Learned, func(b []byte, ps []string) ([]byte, error) { return appendStrings(b, ps), nil })
	case keyOrigin:
		return appendObject(b, d.Origin, func(b []byte, m Meta) ([]byte, error) { return ObjectValue(m).appendJSON(b) })
	}
	return nil, fmt.Errorf("not a key of the document's own")
}

// appendObject appends m as a JSON object, its keys sorted as
// encoding/json sorts a map's, each value written by value.
func appendObject[V any](b []byte, m map[string]V, value func([]byte, V) ([]byte, error)) ([]byte, error) {
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendString(b, k), ':')
		var err error
		if b, err = value(b, m[k]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// MarshalJSON writes the value as encoding/json writes the Go value it
// holds (an object's keys sorted).
func (v Value) MarshalJSON() ([]byte, error) { return v.appendJSON(nil) }

func (v Value) appendJSON(b []byte) ([]byte, error) {
	switch v.Kind {
	case KindString:
		return appendString(b, v.Str), nil
	case KindInt:
		return strconv.AppendInt(b, v.Int, 10), nil
	case KindFloat:
		return appendFloat(b, v.Float)
	case KindObject:
		return appendObject(b, v.Object, func(b []byte, x Value) ([]byte, error) { return x.appendJSON(b) })
	case KindList:
		b = append(b, '[')
		for i, x := range v.List {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = x.appendJSON(b); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	return nil, fmt.Errorf("api: value of unknown kind %d", v.Kind)
}

// appendStrings writes a list of strings; nil as [] (the document never
// sends null).
func appendStrings(b []byte, list []string) []byte {
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendBytes writes bytes as encoding/json does: base64, padded.
func appendBytes(b, p []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, p)
	return append(b, '"')
}

// appendFloat writes f as encoding/json writes a float64: the shortest
// decimal that reads back as f, in exponent form below 1e-6 and from
// 1e21 on. JSON has no NaN or infinity.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 as e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// appendString writes s as encoding/json does by default: quotes,
// backslashes and control characters escaped, <, > and & as \u escapes,
// U+2028 and U+2029 escaped, each byte that is not UTF-8 as \ufffd.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// UnmarshalJSON reads a JSON value: strings, numbers (an integer literal
// that fits int64 as KindInt, any other as KindFloat, one beyond float64
// as the string it is written as), objects and lists. The node sends
// nothing else; true, false and null are read as the strings "true",
// "false" and "".
func (v *Value) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return errors.New("api: empty JSON value")
	}
	switch b[0] {
	case '{':
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(b, &raw); err != nil {
			return err
		}
		m := make(Meta, len(raw))
		for k, r := range raw {
			var x Value
			if err := x.UnmarshalJSON(r); err != nil {
				return err
			}
			m[k] = x
		}
		*v = ObjectValue(m)
	case '[':
		var raw []json.RawMessage
		if err := json.Unmarshal(b, &raw); err != nil {
			return err
		}
		list := make([]Value, len(raw))
		for i, r := range raw {
			if err := list[i].UnmarshalJSON(r); err != nil {
				return err
			}
		}
		*v = ListValue(list...)
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*v = StringValue(s)
	case 't', 'f', 'n':
		var x *bool
		if err := json.Unmarshal(b, &x); err != nil {
			return err
		}
		*v = StringValue("")
		if x != nil {
			*v = StringValue(strconv.FormatBool(*x))
		}
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return err
		}
		if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
			*v = IntValue(i)
		} else if f, err := strconv.ParseFloat(n.String(), 64); err == nil {
			*v = FloatValue(f)
		} else {
			*v = StringValue(n.String())
		}
	}
	return nil
}

// UnmarshalJSON reads a document as MarshalJSON writes it. Its own keys
// go to their fields; one whose value has another shape than the node
// gives that key (a metadata field of that name) goes to Meta, like every
// other name. Whole numbers are read however they are written (3000000,
// 3e6). FilePath and Duplicates get their exact bytes back from
// FilePathBytes and DuplicatesBytes when those came along.
func (d *Document) UnmarshalJSON(b []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return err
	}
	*d = Document{}
	for k, raw := range top {
		var err error
		switch k {
		case keyCIDs:
			err = json.Unmarshal(raw, &d.CIDs)
		case keyCanonical:
			err = json.Unmarshal(raw, &d.CanonicalCID)
		case keyDuplicates:
			err = json.Unmarshal(raw, &d.Duplicates)
		case keyDuplicateCount:
			d.DuplicateCount, err = wholeNumber(raw)
		case keySource:
			err = json.Unmarshal(raw, &d.Source)
		default:
			if !d.readOwn(k, raw) {
				err = d.readMeta(k, raw)
			}
		}
		if err != nil {
			return fmt.Errorf("api: document %s: %w", k, err)
		}
	}
	// JSON carried U+FFFD for the bytes of a path that are not UTF-8; the
	// exact bytes came along: the paths are what the node has.
	if d.FilePath != "" && len(d.FilePathBytes) > 0 {
		d.FilePath = string(d.FilePathBytes)
	}
	if len(d.DuplicatesBytes) == len(d.Duplicates) {
		for i, p := range d.DuplicatesBytes {
			d.Duplicates[i] = string(p)
		}
	}
	return nil
}

// readOwn reads one of the document's keys that may be left out, and
// reports whether raw has the shape the node gives it.
func (d *Document) readOwn(k string, raw json.RawMessage) bool {
	switch k {
	case keyFilePath:
		return json.Unmarshal(raw, &d.FilePath) == nil && d.FilePath != ""
	case keyFilePathBytes:
		return json.Unmarshal(raw, &d.FilePathBytes) == nil && len(d.FilePathBytes) > 0
	case keyDuplicatesBytes:
		return json.Unmarshal(raw, &d.DuplicatesBytes) == nil && len(d.DuplicatesBytes) > 0
	case keyProviders:
		return json.Unmarshal(raw, &d.Providers) == nil && d.Providers != nil
	case keyPeers:
		return json.Unmarshal(raw, &d.Peers) == nil && len(d.Peers) > 0
	case keyLearned:
		return json.Unmarshal(raw, &d.Learned) == nil && len(d.Learned) > 0
	case keyOrigin:
		var v Value
		if v.UnmarshalJSON(raw) != nil || !peerOrigin(v) {
			return false
		}
		d.Origin = make(map[string]Meta, len(v.Object))
		for p, x := range v.Object {
			d.Origin[p] = x.Object
		}
		return true
	}
	return false
}

// peerOrigin reports whether v has the shape of Document.Origin: an
// object, not empty, of objects.
func peerOrigin(v Value) bool {
	if v.Kind != KindObject || len(v.Object) == 0 {
		return false
	}
	for _, x := range v.Object {
		if x.Kind != KindObject {
			return false
		}
	}
	return true
}

func (d *Document) readMeta(k string, raw json.RawMessage) error {
	switch k {
	case keyFilePath:
		d.FilePath = ""
	case keyFilePathBytes:
		d.FilePathBytes = nil
	case keyDuplicatesBytes:
		d.DuplicatesBytes = nil
	case keyProviders:
		d.Providers = nil
	case keyPeers:
		d.Peers = nil
	case keyLearned:
		d.Learned = nil
	}
	var v Value
	if err := v.UnmarshalJSON(raw); err != nil {
		return err
	}
	if d.Meta == nil {
		d.Meta = Meta{}
	}
	d.Meta[k] = v
	return nil
}

// wholeNumber reads a JSON number that holds a whole number, however it
// is written (3000000, 3e6, 3000000.0).
func wholeNumber(raw json.RawMessage) (int64, error) {
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, err
	}
	if i, err := n.Int64(); err == nil {
		return i, nil
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= math.MaxInt64 {
		return 0, fmt.Errorf("%s is not a whole number", n)
	}
	return int64(f), nil
}
