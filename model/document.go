package model

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
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
	// PeerNames are the household names of the peers the document names
	// (source, providers, peers, origin, learned), by peer ID, for those
	// whose last answer carried one: what each household calls itself,
	// verified by no one. Left out when empty.
	PeerNames map[string]string
	// Edited are the fields whose values are the household's own edits
	// (PUT/PATCH /api/meta), sorted: no rescan overwrites them, and
	// deleting one brings back what the file's name or NFO says. Left
	// out when empty.
	Edited []string
	// ShownFrom says, for each field of a local file that peers may fill
	// in (a title, the plot, the IDs, the genres as one, the poster), where
	// the value shown came from: "edit" (the household's own edit), "own"
	// (its file: an NFO, an extractor), "name" (its file name's guess) or
	// the peer ID of the household whose record gave it. Left out when
	// empty.
	ShownFrom map[string]string
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
	b, err := EncodeAnswer(*d)
	if err != nil {
		return err
	}
	d.encoded = b
	return nil
}

// Encoded is the answer's JSON body Encode wrote, nil before.
func (d Document) Encoded() []byte { return d.encoded }

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
	keyPeerNames       = "peerNames"
	keyEdited          = "edited"
	keyShownFrom       = "shownFrom"
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
			return nil, fmt.Errorf("model: document %q: %w", k, err)
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
		{keyPeerNames, len(d.PeerNames) > 0},
		{keyEdited, len(d.Edited) > 0},
		{keyShownFrom, len(d.ShownFrom) > 0},
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
	case keyEdited:
		return appendStrings(b, d.Edited), nil
	case keyLearned:
		return appendObject(b, d.Learned, func(b []byte, ps []string) ([]byte, error) { return appendStrings(b, ps), nil })
	case keyOrigin:
		return appendObject(b, d.Origin, func(b []byte, m Meta) ([]byte, error) { return ObjectValue(m).appendJSON(b) })
	case keyPeerNames:
		return appendObject(b, d.PeerNames, func(b []byte, n string) ([]byte, error) { return appendString(b, n), nil })
	case keyShownFrom:
		return appendObject(b, d.ShownFrom, func(b []byte, n string) ([]byte, error) { return appendString(b, n), nil })
	}
	return nil, fmt.Errorf("not a key of the document's own")
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
			return fmt.Errorf("model: document %s: %w", k, err)
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
	case keyEdited:
		return json.Unmarshal(raw, &d.Edited) == nil && len(d.Edited) > 0
	case keyLearned:
		return json.Unmarshal(raw, &d.Learned) == nil && len(d.Learned) > 0
	case keyPeerNames:
		return json.Unmarshal(raw, &d.PeerNames) == nil && len(d.PeerNames) > 0
	case keyShownFrom:
		return json.Unmarshal(raw, &d.ShownFrom) == nil && len(d.ShownFrom) > 0
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
	case keyEdited:
		d.Edited = nil
	case keyLearned:
		d.Learned = nil
	case keyPeerNames:
		d.PeerNames = nil
	case keyShownFrom:
		d.ShownFrom = nil
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
