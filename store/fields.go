package store

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/metamesh/node/protocol"
)

// Reserved field names belong to the schema and are written only by the
// lifecycle operations.
var reserved = map[string]bool{"filePath": true, "sizeByte": true, "mtime": true, "duplicates": true, "cids": true}

// FieldType is the JSON type GET /api/meta gives a field: the store
// and the wire record keep every field a string.
type FieldType uint8

// The field types. A value that does not parse as its type (or parses
// to NaN or an infinity) stays a string.
const (
	FieldString   FieldType = iota // every field not listed in fieldTypes
	FieldInt                       // a whole number: sizes, years, season and episode numbers, stream dimensions and rates
	FieldFloat                     // a decimal number: durations in seconds, an NFO's rating
	FieldNanoTime                  // Unix nanoseconds, shown as an RFC 3339 time
)

// fieldTypes types the schema's and the extractors' fields that are not
// strings, by pattern: the field's name with each list index written "*"
// ("episodes/*" is every element of episodes; "episodes" alone is an
// outside writer's single episode number).
var fieldTypes = map[string]FieldType{
	"sizeByte": FieldInt, "movieYear": FieldInt, "season": FieldInt, "episode": FieldInt, "episodes": FieldInt, "episodes/*": FieldInt,
	"release/part": FieldInt, "release/cd": FieldInt,
	"fileinfo/streamdetails/video/*/width": FieldInt, "fileinfo/streamdetails/video/*/height": FieldInt,
	"fileinfo/streamdetails/video/*/bitrate": FieldInt, "fileinfo/streamdetails/video/*/level": FieldInt,
	"fileinfo/streamdetails/audio/*/channels": FieldInt, "fileinfo/streamdetails/audio/*/bitrate": FieldInt,
	"fileinfo/streamdetails/audio/*/samplerate": FieldInt,
	"fileinfo/duration":                         FieldFloat, "rating": FieldFloat,
	"mtime": FieldNanoTime,
}

// TypeOf is the type of the field of the given pattern (its name with
// each list index written "*").
func TypeOf(pattern string) FieldType { return fieldTypes[pattern] }

// ValidField checks a flat field name: non-empty segments separated by
// "/", not a schema name.
func ValidField(f string) error {
	if !protocol.ValidFieldName(f) { // the shape the record protocol checks too
		return fmt.Errorf("store: field %q: %w", f, ErrInvalidField)
	}
	first, _, _ := strings.Cut(f, "/")
	if reserved[f] || first == "cids" {
		return fmt.Errorf("store: field %q: %w", f, ErrReservedField)
	}
	return nil
}

// SetFields writes flat metadata fields of root as STRING keys (one
// keyspace notification per field). A value equal to the stored one is not
// written again. Returns how many fields changed.
func (s *Store) SetFields(ctx context.Context, root RootID, fields map[string]string) (int, error) {
	if len(fields) == 0 {
		return 0, nil
	}
	names := make([]string, 0, len(fields))
	for f := range fields {
		if err := ValidField(f); err != nil {
			return 0, err
		}
		names = append(names, f)
	}
	sort.Strings(names)
	n, err := luaSetFields.run(ctx, s, setFieldsArgs{root: root, names: names, fields: fields})
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, fmt.Errorf("store: root %s: %w", root, ErrNotFound)
	}
	return n, nil
}

// Meta is the metadata extracted from a local file, written when the file
// is its root's primary.
type Meta struct {
	// Version of the extractors that produced Fields. A path whose last
	// extraction has this version or a newer one is not written again.
	Version int
	// Owned are the field names and prefixes (a name owns everything
	// under "name/") the extractors write: on re-extraction a field under
	// them that Fields lacks is dropped. Fields outside them (other
	// writers') are never touched.
	Owned  []string
	Fields map[string]string
	// Refresh writes the metadata even when the last extraction is as new
	// as Version: what the extractors read beside the file changed (an
	// NFO file), not the extractors.
	Refresh bool
}

// SetExtracted writes metadata extracted from path when path is its
// root's primary and its last extraction is older than m.Version (or
// m.Refresh). Returns
// how many fields changed; KindGone when path is not a primary.
func (s *Store) SetExtracted(ctx context.Context, path string, m Meta) (Outcome, int, error) {
	meta, err := m.check()
	if err != nil {
		return Outcome{}, 0, err
	}
	c, err := luaExtracted.run(ctx, s, extractedArgs{path: path, meta: meta})
	return c.Outcome, c.written, err
}

// Ingest applies a whole file at once: it arrives (when new), is
// confirmed with its full hashes and, when it ends up its root's primary,
// gets its extracted metadata. It is Arrive, Confirm and SetExtracted in
// one round trip, for files small enough to read whole before the store
// hears of them. KindUnknown (a duplicate of a root whose primary is not
// confirmed yet) and KindStale (the store knows other bytes at the path)
// leave the rest to the caller.
func (s *Store) Ingest(ctx context.Context, f FileStat, h Hashes, m Meta) (Outcome, int, error) {
	if err := checkHashes(h); err != nil {
		return Outcome{}, 0, err
	}
	meta, err := m.check()
	if err != nil {
		return Outcome{}, 0, err
	}
	c, err := luaIngest.run(ctx, s, newIngestArgs(f, h, meta))
	return c.Outcome, c.written, err
}

// newIngestArgs mints the roots an ingestion may need.
func newIngestArgs(f FileStat, h Hashes, meta extractedMeta) ingestArgs {
	return ingestArgs{arriveRoot: NewRootID(), splitRoot: NewRootID(), leaveRoot: NewRootID(), file: f, hashes: h, meta: meta}
}

// IngestItem is one file of IngestBatch.
type IngestItem struct {
	File   FileStat
	Hashes Hashes
	Meta   Meta
}

// IngestResult is what Ingest did with one item of IngestBatch.
type IngestResult struct {
	Outcome
	Written int   // metadata fields written
	Err     error // a final error for this item alone
}

// IngestBatch is Ingest for many files in one round trip and one script
// (each file still applied as Ingest would, in order). The error is for
// the batch as a whole (Redis unreachable); per-item errors are in the
// results.
func (s *Store) IngestBatch(ctx context.Context, items []IngestItem) ([]IngestResult, error) {
	out := make([]IngestResult, len(items))
	var args ingestManyArgs
	var sent []int
	for i, it := range items {
		if out[i].Err = checkHashes(it.Hashes); out[i].Err != nil {
			continue
		}
		meta, err := it.Meta.check()
		if out[i].Err = err; err != nil {
			continue
		}
		args = append(args, newIngestArgs(it.File, it.Hashes, meta))
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return out, nil
	}
	res, err := luaIngestMany.run(ctx, s, args)
	if err != nil {
		return nil, err
	}
	for k, i := range sent {
		out[i].Outcome, out[i].Written = res[k].Outcome, res[k].written
	}
	return out, nil
}

// SetStill links the local video root to its still, the CID of a frame
// the node took from it (StillField), or drops the link when cid is "".
// A root with a poster gets no link (the poster is what lists show):
// changed is then false. A root that is gone, or to link, not local
// (its file deleted), is ErrNotFound. Edits never touch the field (ValidEditField).
func (s *Store) SetStill(ctx context.Context, root RootID, cid string) (changed bool, err error) {
	n, err := luaStill.run(ctx, s, stillArgs{root: root, cid: cid})
	if err != nil {
		return false, err
	}
	if n < 0 {
		return false, fmt.Errorf("store: local root %s: %w", root, ErrNotFound)
	}
	return n == 1, nil
}
