package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/protocol"
)

// Document is one root's metadata, read in O(fields of the root).
type Document struct {
	// Fields are the flat properties, schema fields (filePath, sizeByte,
	// mtime) included and the CID key-set excluded.
	Fields map[string]string
	// CIDs is the key-set, sorted.
	CIDs []string
	// Duplicates are other local paths with the same content, sorted.
	Duplicates []string
}

// CanonicalCID is derived on every read, never stored: the best key-set
// member by protocol.Canonical.
func (d Document) CanonicalCID() string { return protocol.Canonical(d.CIDs) }

// FilePath is the primary local path, "" for a root known only from peers.
func (d Document) FilePath() string { return d.Fields["filePath"] }

// Nested is the JSON shape of the document: nested metadata plus "cids",
// "canonical_cid" and "duplicates".
func (d Document) Nested() map[string]any {
	m := Unflatten(d.Fields)
	m["cids"] = append([]string{}, d.CIDs...)
	m["canonical_cid"] = d.CanonicalCID()
	m["duplicates"] = append([]string{}, d.Duplicates...)
	return m
}

// Document reads a root's document with one server round trip.
func (s *Store) Document(ctx context.Context, root RootID) (Document, error) {
	v, err := luaDocument.Run(ctx, s.rdb, nil, string(root)).Slice()
	if errors.Is(err, redis.Nil) {
		return Document{}, fmt.Errorf("store: root %s: %w", root, ErrNotFound)
	}
	if err != nil {
		return Document{}, fmt.Errorf("store: read document: %w", err)
	}
	pairs, _ := v[0].([]any)
	dups, _ := v[1].([]any)
	d := Document{Fields: make(map[string]string, len(pairs)/2)}
	for i := 0; i+1 < len(pairs); i += 2 {
		f, _ := pairs[i].(string)
		val, _ := pairs[i+1].(string)
		if c, ok := strings.CutPrefix(f, "cids/"); ok {
			d.CIDs = append(d.CIDs, c)
			continue
		}
		d.Fields[f] = val
	}
	for _, p := range dups {
		if s, ok := p.(string); ok {
			d.Duplicates = append(d.Duplicates, s)
		}
	}
	sort.Strings(d.CIDs)
	sort.Strings(d.Duplicates)
	return d, nil
}

// DocumentByCID resolves cid (canonical form) and reads its document.
func (s *Store) DocumentByCID(ctx context.Context, cid string) (Document, error) {
	root, err := s.GetByCID(ctx, cid)
	if err != nil {
		return Document{}, err
	}
	return s.Document(ctx, root)
}
