package store

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/protocol"
)

// Reserved field names belong to the schema and are written only by the
// lifecycle operations.
var reserved = map[string]bool{"filePath": true, "sizeByte": true, "mtime": true, "duplicates": true, "cids": true}

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
	args := []any{string(root)}
	for _, f := range names {
		args = append(args, f, fields[f])
	}
	n, err := luaSetFields.Run(ctx, s.rdb, nil, append(args, s.evArgs()...)...).Int()
	if err != nil {
		return 0, fmt.Errorf("store: set fields: %w", err)
	}
	if n < 0 {
		return 0, fmt.Errorf("store: root %s: %w", root, ErrNotFound)
	}
	return n, nil
}

// SetNested flattens v (see Flatten) under prefix and writes it.
func (s *Store) SetNested(ctx context.Context, root RootID, prefix string, v any) (int, error) {
	return s.SetFields(ctx, root, Flatten(prefix, v))
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
}

// args are the extracted-metadata script arguments.
func (m Meta) args() ([]any, error) {
	names := make([]string, 0, len(m.Fields))
	for f := range m.Fields {
		if err := ValidField(f); err != nil {
			return nil, err
		}
		names = append(names, f)
	}
	sort.Strings(names)
	args := []any{m.Version, len(m.Owned)}
	for _, o := range m.Owned {
		args = append(args, o)
	}
	for _, f := range names {
		args = append(args, f, m.Fields[f])
	}
	return args, nil
}

// SetExtracted writes metadata extracted from path when path is its
// root's primary and its last extraction is older than m.Version. Returns
// how many fields changed; KindGone when path is not a primary.
func (s *Store) SetExtracted(ctx context.Context, path string, m Meta) (Outcome, int, error) {
	args, err := m.args()
	if err != nil {
		return Outcome{}, 0, err
	}
	return s.runCounted(ctx, luaExtracted, append([]any{path}, args...)...)
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
	args, err := m.args()
	if err != nil {
		return Outcome{}, 0, err
	}
	head := []any{string(NewRootID()), string(NewRootID()), string(NewRootID())}
	head = append(append(head, statArgs(f)...), h.Midhash, h.SHA256, h.IPFS)
	return s.runCounted(ctx, luaIngest, append(head, args...)...)
}

func (s *Store) runCounted(ctx context.Context, sc *redis.Script, args ...any) (Outcome, int, error) {
	v, err := sc.Run(ctx, s.rdb, nil, append(args, s.evArgs()...)...).Slice()
	if err != nil {
		return Outcome{}, 0, fmt.Errorf("store: %w", err)
	}
	kind, _ := v[0].(string)
	root, _ := v[1].(string)
	n, _ := v[2].(int64)
	return Outcome{Kind: Kind(kind), Root: RootID(root)}, int(n), nil
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
	var args []any
	var sent []int
	for i, it := range items {
		if out[i].Err = checkHashes(it.Hashes); out[i].Err != nil {
			continue
		}
		meta, err := it.Meta.args()
		if out[i].Err = err; err != nil {
			continue
		}
		one := []any{string(NewRootID()), string(NewRootID()), string(NewRootID())}
		one = append(append(append(one, statArgs(it.File)...), it.Hashes.Midhash, it.Hashes.SHA256, it.Hashes.IPFS), meta...)
		args = append(append(args, len(one)), one...)
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return out, nil
	}
	v, err := luaIngestMany.Run(ctx, s.rdb, nil, append(args, s.evArgs()...)...).Slice()
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	for k, i := range sent {
		kind, _ := v[3*k].(string)
		root, _ := v[3*k+1].(string)
		n, _ := v[3*k+2].(int64)
		out[i].Outcome, out[i].Written = Outcome{Kind: Kind(kind), Root: RootID(root)}, int(n)
	}
	return out, nil
}
