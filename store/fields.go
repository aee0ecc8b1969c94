package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Reserved field names belong to the schema and are written only by the
// lifecycle operations.
var reserved = map[string]bool{"filePath": true, "sizeByte": true, "mtime": true, "duplicates": true, "cids": true}

// ValidField checks a flat field name: non-empty segments separated by
// "/", not a schema name.
func ValidField(f string) error {
	if f == "" || strings.HasPrefix(f, "/") || strings.HasSuffix(f, "/") || strings.Contains(f, "//") {
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
