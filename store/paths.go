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
	// Dev and Ino as recorded when the path arrived (zero when unknown);
	// Link is true for a symbolic link.
	Dev, Ino uint64
	Link     bool
	// Extracted is the extraction version last applied to the path as a
	// primary (-1 for none): a newer one re-extracts without re-hashing.
	Extracted int
}

// Path looks up a local path in the path index (O(1), one round trip).
func (s *Store) Path(ctx context.Context, path string) (PathState, error) {
	st, err := luaPath.run(ctx, s, pathArgs{path: path})
	if errors.Is(err, redis.Nil) {
		return PathState{}, fmt.Errorf("store: path %q: %w", path, ErrNotFound)
	}
	if err != nil {
		return PathState{}, err
	}
	return st, nil
}

// pathState reads path.lua's answer.
func pathState(v []string) PathState {
	st := PathState{Root: RootID(v[0]), Midhash: v[3], Hashed: v[4] == "1", Primary: v[5] == "1", Link: v[8] == "1"}
	st.Size, _ = strconv.ParseInt(v[1], 10, 64)
	st.MtimeNs, _ = strconv.ParseInt(v[2], 10, 64)
	st.Dev, _ = strconv.ParseUint(v[6], 10, 64)
	st.Ino, _ = strconv.ParseUint(v[7], 10, 64)
	st.Extracted = -1
	if v[9] != "" {
		st.Extracted, _ = strconv.Atoi(v[9])
	}
	return st
}

// The path index (layout 3; lua/common.lua) is the sorted set
// path:__index__ with one member per local path: the path, a NUL byte,
// then its state, these values joined by single spaces.
var pathFields = []string{"root", "size", "mtime", "mid", "hashed", "dev", "ino", "link", "xv"}

// pathOfMember is the path a member of the path index is of.
func pathOfMember(m string) string {
	p, _, _ := strings.Cut(m, "\x00")
	return p
}

// pathsOfMembers turns members of the path index into their paths, in
// place.
func pathsOfMembers(ms []string) []string {
	for i, m := range ms {
		ms[i] = pathOfMember(m)
	}
	return ms
}

// decodePathMember reads a member of the path index: its path and state
// (Primary is not in it). ok is false for a member that holds no state.
func decodePathMember(m string) (string, PathState, bool) {
	p, state, ok := strings.Cut(m, "\x00")
	if !ok {
		return p, PathState{}, false
	}
	v := strings.SplitN(state, " ", len(pathFields))
	if len(v) != len(pathFields) {
		return p, PathState{}, false
	}
	// pathState reads path.lua's order, which has "primary" at 5.
	return p, pathState(append(v[:5:5], append([]string{"0"}, v[5:]...)...)), true
}

// pathMembers calls fn with every member of the path index, in order, a
// page of 1,000 at a time (fsck and an upgrade: O(N)).
func (s *Store) pathMembers(ctx context.Context, fn func(page []string) error) error {
	for min := "-"; ; {
		page, err := s.rdb.ZRangeByLex(ctx, keyPaths, &redis.ZRangeBy{Min: min, Max: "+", Count: 1000}).Result()
		if err != nil || len(page) == 0 {
			return err
		}
		if err := fn(page); err != nil {
			return err
		}
		min = "(" + page[len(page)-1]
	}
}

// pathRange is the range of path p's member in the path index.
func pathRange(p string) *redis.ZRangeBy {
	return &redis.ZRangeBy{Min: "[" + p + "\x00", Max: "(" + p + "\x01", Count: 1}
}

// PathsOfInode lists the known local paths recorded with device dev and
// inode ino: the hard links of one file.
func (s *Store) PathsOfInode(ctx context.Context, dev, ino uint64) ([]string, error) {
	v, err := s.rdb.SMembers(ctx, inodeKey(dev, ino)).Result()
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return v, nil
}

func inodeKey(dev, ino uint64) string {
	return "inode:" + strconv.FormatUint(dev, 10) + ":" + strconv.FormatUint(ino, 10)
}

// PathsAfter lists known local paths in byte order, strictly after
// `after` ("" for the start), at most limit of them.
func (s *Store) PathsAfter(ctx context.Context, after string, limit int) ([]string, error) {
	min := "-"
	if after != "" {
		// Past every member of after itself (after, NUL, its state).
		min = "[" + after + "\x01"
	}
	v, err := s.rdb.ZRangeByLex(ctx, keyPaths, &redis.ZRangeBy{Min: min, Max: "+", Count: int64(limit)}).Result()
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return pathsOfMembers(v), nil
}

// PathsUnder lists the known local paths inside directory dir, in
// O(log N + M) through the lexicographic path index.
func (s *Store) PathsUnder(ctx context.Context, dir string) ([]string, error) {
	v, err := s.rdb.ZRangeByLex(ctx, keyPaths, prefixRange(strings.TrimSuffix(dir, "/")+"/", 0)).Result()
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return pathsOfMembers(v), nil
}

// PathsWithPrefixes lists, for each prefix, at most limit known local
// paths that begin with it, in byte order: one pipeline, each in
// O(log N + M) through the lexicographic path index. A video's sidecars
// ("<dir>/<video name>.", "<dir>/poster") are found so, without listing
// its folder.
func (s *Store) PathsWithPrefixes(ctx context.Context, prefixes []string, limit int) ([][]string, error) {
	if len(prefixes) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.StringSliceCmd, len(prefixes))
	for i, prefix := range prefixes {
		cmds[i] = pipe.ZRangeByLex(ctx, keyPaths, prefixRange(prefix, limit))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	out := make([][]string, len(prefixes))
	for i, c := range cmds {
		out[i] = pathsOfMembers(c.Val())
	}
	return out, nil
}

// prefixRange is the lexicographic range of the strings that begin with
// prefix, at most limit of them (0 for all): from prefix to the first
// string after all of them, prefix with its last byte below 0xff raised
// by one.
func prefixRange(prefix string, limit int) *redis.ZRangeBy {
	end := []byte(prefix)
	for len(end) > 0 && end[len(end)-1] == 0xff {
		end = end[:len(end)-1]
	}
	max := "+"
	if len(end) > 0 {
		end[len(end)-1]++
		max = "(" + string(end)
	}
	return &redis.ZRangeBy{Min: "[" + prefix, Max: max, Count: int64(limit)}
}

func suppliedKey(r RootID) string { return "supplied:" + string(r) }
func learnedKey(r RootID) string  { return "learned:" + string(r) }

// Paths looks up many local paths in one round trip (a pipeline; a
// second one tells which known paths are primaries); paths the store does
// not know are left out of the map.
func (s *Store) Paths(ctx context.Context, paths []string) (map[string]PathState, error) {
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.StringSliceCmd, len(paths))
	for i, p := range paths {
		cmds[i] = pipe.ZRangeByLex(ctx, keyPaths, pathRange(p))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	out := make(map[string]PathState, len(paths))
	var known []string
	for i, c := range cmds {
		v := c.Val()
		if len(v) == 0 {
			continue
		}
		if _, st, ok := decodePathMember(v[0]); ok {
			out[paths[i]] = st
			known = append(known, paths[i])
		}
	}
	if len(known) == 0 {
		return out, nil
	}
	pipe = s.rdb.Pipeline()
	fps := make([]*redis.StringCmd, len(known))
	for i, p := range known {
		fps[i] = pipe.Get(ctx, fieldKey(out[p].Root, "filePath"))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("store: %w", err)
	}
	for i, p := range known {
		st := out[p]
		st.Primary = fps[i].Val() == p
		out[p] = st
	}
	return out, nil
}
