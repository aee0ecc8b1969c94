package federation

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/store"
)

// newDocument is the one place GET /api/meta's answer is built: d's
// members, duplicates, peers and learned members, its paths with their
// exact bytes where they are not UTF-8, and its metadata as the store
// presents it (d.Presented), nested straight into model.Meta with the
// fields store.TypeOf types typed, at top level and in what each peer
// said (origin/<peer>/). source and providers are
// the resolver's: who answered for the file and who has it (nil leaves
// providers out).
func newDocument(d store.Document, source string, providers []string) model.Document {
	doc := model.Document{
		CIDs:           slices.Clone(d.CIDs),
		CanonicalCID:   d.CanonicalCID(),
		Duplicates:     slices.Clone(d.Duplicates),
		DuplicateCount: d.DuplicateCount,
		Source:         source,
		Providers:      providers,
	}
	if len(d.Peers) > 0 {
		doc.Peers = slices.Clone(d.Peers)
	}
	if len(d.Edited) > 0 {
		doc.Edited = slices.Clone(d.Edited)
	}
	if len(d.Learned) > 0 {
		doc.Learned = make(map[string][]string, len(d.Learned))
		for c, ps := range d.Learned {
			doc.Learned[c] = append([]string{}, ps...)
		}
	}
	// JSON replaces bytes that are not UTF-8 by U+FFFD; a path with such
	// bytes is also given exactly (base64 in JSON), as metamesh hash does.
	if fp := d.FilePath(); fp != "" && !utf8.ValidString(fp) {
		doc.FilePathBytes = []byte(fp)
	}
	if slices.ContainsFunc(d.Duplicates, func(p string) bool { return !utf8.ValidString(p) }) {
		doc.DuplicatesBytes = make([][]byte, len(d.Duplicates))
		for i, p := range d.Duplicates {
			doc.DuplicatesBytes[i] = []byte(p)
		}
	}

	shown, from := d.Shown()
	if len(from) > 0 {
		doc.ShownFrom = from
	}
	meta := model.NestMeta(shown, typedValue)
	// A filePath that is also an object (an outside writer's filePath/x)
	// stays metadata, as it is shown.
	if fp := meta["filePath"]; fp.Kind == model.KindString && fp.Str != "" {
		doc.FilePath = fp.Str
		delete(meta, "filePath")
	}
	// What each peer said (origin/<peer>/<field>, typed like the top
	// level) is the document's Origin; when origin holds entries that are
	// not a peer's object (an outside writer's origin/<name>), the whole
	// origin stays metadata.
	if origin := meta[store.OriginPrefix]; origin.Kind == model.KindObject && peerObjects(origin.Object) {
		doc.Origin = make(map[string]model.Meta, len(origin.Object))
		for p, v := range origin.Object {
			doc.Origin[p] = v.Object
		}
		delete(meta, store.OriginPrefix)
	}
	// The document's own keys win over metadata of the same name (an
	// outside writer's "cids", say); a name it leaves out stays metadata.
	for _, k := range doc.OwnKeys() {
		delete(meta, k)
	}
	if len(meta) > 0 {
		doc.Meta = meta
	}
	return doc
}

// peerObjects reports whether every member of origin is an object (a
// peer's fields).
func peerObjects(origin model.Meta) bool {
	for _, v := range origin {
		if v.Kind != model.KindObject {
			return false
		}
	}
	return true
}

// typedValue is the value of a field of the given pattern (its name, each
// list index written "*"): an integer, a decimal number or an RFC 3339
// time (from Unix nanoseconds) when store.TypeOf says it is one and s
// parses as such, else the string. What a peer said (origin/<peer>/<field>)
// is typed as the field it names.
func typedValue(pattern, s string) model.Value {
	if rest, ok := strings.CutPrefix(pattern, store.OriginPrefix+"/"); ok {
		if p, field, ok := strings.Cut(rest, "/"); ok && p != "*" {
			pattern = field
		}
	}
	switch store.TypeOf(pattern) {
	case store.FieldInt:
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			return model.IntValue(n)
		}
	case store.FieldFloat:
		// JSON has no NaN or infinity: such a value stays the string it is.
		if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return model.FloatValue(f)
		}
	case store.FieldNanoTime:
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return model.StringValue(time.Unix(0, n).UTC().Format(time.RFC3339Nano))
		}
	}
	return model.StringValue(s)
}
