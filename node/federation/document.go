package federation

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/store"
)

// The store and the wire record keep every field a flat string; the
// /api/meta document gives the fields it knows their JSON type. Fields
// not listed here, and values that do not parse (or parse to NaN or an
// infinity), stay strings.
var (
	// intFields are integers: sizes, years, season and episode numbers,
	// stream dimensions and rates. A name ending in "/" types every
	// string element of that list ("episodes/" → episodes[i]); "*" stands
	// for the index of a list of objects.
	intFields = map[string]bool{
		"sizeByte": true, "movieYear": true, "season": true, "episode": true, "episodes/": true,
		"release/part": true, "release/cd": true,
		"fileinfo/streamdetails/video/*/width": true, "fileinfo/streamdetails/video/*/height": true,
		"fileinfo/streamdetails/video/*/bitrate": true, "fileinfo/streamdetails/video/*/level": true,
		"fileinfo/streamdetails/audio/*/channels": true, "fileinfo/streamdetails/audio/*/bitrate": true,
		"fileinfo/streamdetails/audio/*/samplerate": true,
	}
	// floatFields are decimal numbers: durations in seconds, an NFO's
	// rating.
	floatFields = map[string]bool{"fileinfo/duration": true, "rating": true}
	// nanoTimeFields are Unix nanoseconds, shown as RFC 3339.
	nanoTimeFields = map[string]bool{"mtime": true}
)

// newDocument is the one place GET /api/meta's answer is built: d's
// members, duplicates, peers and learned members, its paths with their
// exact bytes where they are not UTF-8, and its metadata nested (as the
// store presents it: d.Presented, nested) with the known fields typed, at top level
// and in what each peer said (origin/<peer>/). source and providers are
// the resolver's: who answered for the file and who has it (nil leaves
// providers out).
func newDocument(d store.Document, source string, providers []string) api.Document {
	doc := api.Document{
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

	nested := store.Unflatten(d.Presented())
	// A filePath that is also an object (an outside writer's filePath/x)
	// stays metadata, as it is shown.
	if fp, ok := nested["filePath"].(string); ok && fp != "" {
		doc.FilePath = fp
		delete(nested, "filePath")
	}
	if origin, ok := nested["origin"].(map[string]any); ok {
		// What each peer said is typed like the top level; entries that
		// are not a peer's object (an outside writer's origin/<name>)
		// keep the whole origin in the metadata, still typed per peer.
		typed := make(api.Meta, len(origin))
		peers := true
		for p, v := range origin {
			if m, ok := v.(map[string]any); ok {
				typed[p] = api.ObjectValue(typedMeta(m, ""))
			} else {
				typed[p], peers = untyped(v), false
			}
		}
		delete(nested, "origin")
		if peers {
			doc.Origin = make(map[string]api.Meta, len(typed))
			for p, v := range typed {
				doc.Origin[p] = v.Object
			}
		} else {
			doc.Meta = api.Meta{"origin": api.ObjectValue(typed)}
		}
	}
	// The document's own keys win over metadata of the same name (an
	// outside writer's "cids", say); a name it leaves out stays metadata.
	own := doc.OwnKeys()
	for k, v := range typedMeta(nested, "") {
		if slices.Contains(own, k) {
			continue
		}
		if doc.Meta == nil {
			doc.Meta = make(api.Meta, len(nested))
		}
		doc.Meta[k] = v
	}
	return doc
}

// typedMeta is nested metadata (store.Unflatten's strings, objects and
// lists) with the known fields typed. prefix is the field path so far:
// "" at top level, "a/b/" in an object, "list/*/" in a list's objects.
// A list of lists is left as it is written.
func typedMeta(m map[string]any, prefix string) api.Meta {
	out := make(api.Meta, len(m))
	for k, v := range m {
		name := prefix + k
		switch x := v.(type) {
		case map[string]any:
			out[k] = api.ObjectValue(typedMeta(x, name+"/"))
		case []any:
			elem := intFields[name+"/"]
			list := make([]api.Value, len(x))
			for i, e := range x {
				switch y := e.(type) {
				case map[string]any:
					list[i] = api.ObjectValue(typedMeta(y, name+"/*/"))
				case string:
					list[i] = api.StringValue(y)
					if elem {
						list[i] = typedValue(y, true, false, false)
					}
				default:
					list[i] = untyped(e)
				}
			}
			out[k] = api.ListValue(list...)
		case string:
			out[k] = typedValue(x, intFields[name], floatFields[name], nanoTimeFields[name])
		default:
			out[k] = untyped(v)
		}
	}
	return out
}

// typedValue is s as an integer, a decimal number or an RFC 3339 time
// (from Unix nanoseconds) when it is one of those fields and parses as
// such; else the string.
func typedValue(s string, isInt, isFloat, isNanoTime bool) api.Value {
	switch {
	case isInt:
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			return api.IntValue(n)
		}
	case isFloat:
		// JSON has no NaN or infinity: such a value stays the string it is.
		if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return api.FloatValue(f)
		}
	case isNanoTime:
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return api.StringValue(time.Unix(0, n).UTC().Format(time.RFC3339Nano))
		}
	}
	return api.StringValue(s)
}

// untyped is a nested value as it is written, nothing typed.
func untyped(v any) api.Value {
	switch x := v.(type) {
	case string:
		return api.StringValue(x)
	case map[string]any:
		m := make(api.Meta, len(x))
		for k, e := range x {
			m[k] = untyped(e)
		}
		return api.ObjectValue(m)
	case []any:
		list := make([]api.Value, len(x))
		for i, e := range x {
			list[i] = untyped(e)
		}
		return api.ListValue(list...)
	}
	// Not a shape store.Unflatten gives: shown as its JSON says.
	var out api.Value
	if b, err := json.Marshal(v); err == nil && out.UnmarshalJSON(b) == nil {
		return out
	}
	return api.StringValue("")
}
