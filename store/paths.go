package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// PathState is what the path index knows of one local path.
type PathState struct {
	Root    RootID
	Size    int64
	MtimeNs int64
	Midhash string
	// Hashed is true once the full pass (sha2-256 + IPFS) was applied.
	Hashed bool
	// Primary is true when the path is its root's filePath.
	Primary bool
}

// Path looks up a local path in the path index (O(1), one round trip).
func (s *Store) Path(ctx context.Context, path string) (PathState, error) {
	v, err := luaPath.Run(ctx, s.rdb, nil, path).StringSlice()
	if errors.Is(err, redis.Nil) {
		return PathState{}, fmt.Errorf("store: path %q: %w", path, ErrNotFound)
	}
	if err != nil {
		return PathState{}, fmt.Errorf("store: %w", err)
	}
	st := PathState{Root: RootID(v[0]), Midhash: v[3], Hashed: v[4] == "1", Primary: v[5] == "1"}
	st.Size, _ = strconv.ParseInt(v[1], 10, 64)
	st.MtimeNs, _ = strconv.ParseInt(v[2], 10, 64)
	return st, nil
}

// PathsAfter lists known local paths in byte order, strictly after
// `after` ("" for the start), at most limit of them.
func (s *Store) PathsAfter(ctx context.Context, after string, limit int) ([]string, error) {
	min := "-"
	if after != "" {
		min = "(" + after
	}
	v, err := s.rdb.ZRangeByLex(ctx, keyPaths, &redis.ZRangeBy{Min: min, Max: "+", Count: int64(limit)}).Result()
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return v, nil
}

// PathsUnder lists the known local paths inside directory dir, in
// O(log N + M) through the lexicographic path index.
func (s *Store) PathsUnder(ctx context.Context, dir string) ([]string, error) {
	prefix := strings.TrimSuffix(dir, "/") + "/"
	// "0" is the byte after "/", so [prefix, prefix-with-"0") is the range.
	upper := strings.TrimSuffix(prefix, "/") + "0"
	v, err := s.rdb.ZRangeByLex(ctx, keyPaths, &redis.ZRangeBy{Min: "[" + prefix, Max: "(" + upper}).Result()
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return v, nil
}

// HasField reports whether root has the flat field f (one EXISTS).
func (s *Store) HasField(ctx context.Context, root RootID, f string) (bool, error) {
	n, err := s.rdb.Exists(ctx, fieldKey(root, f)).Result()
	if err != nil {
		return false, fmt.Errorf("store: %w", err)
	}
	return n == 1, nil
}
