package store

// Export for tests in store_test: the raw keyspace, read with SCAN, and
// operations that only tests call.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"
	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/model"
)

// Rename moves a local path, keeping its root, and emits "rename" with
// oldPath. Renaming onto a known path returns ErrPathExists. The node
// renames with Replace; tests only.
func (s *Store) Rename(ctx context.Context, oldPath, newPath string) (Outcome, error) {
	return s.rename(ctx, oldPath, newPath, false)
}

// SetNested flattens v (see Flatten) under prefix and writes it; tests
// only.
func (s *Store) SetNested(ctx context.Context, root RootID, prefix string, v any) (int, error) {
	return s.SetFields(ctx, root, Flatten(prefix, v))
}

// Time returns the mint time encoded in the root ID; tests only.
func (r RootID) Time() time.Time {
	u, err := ulid.ParseStrict(string(r))
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(int64(u.Time()))
}

// DebugKeys lists every key (SCAN); tests only.
func (s *Store) DebugKeys(ctx context.Context) ([]string, error) {
	var out []string
	it := s.rdb.Scan(ctx, 0, "*", 1000).Iterator()
	for it.Next(ctx) {
		out = append(out, it.Val())
	}
	sort.Strings(out)
	return out, it.Err()
}

// DebugDel deletes raw keys to corrupt the store on purpose; tests only.
func (s *Store) DebugDel(ctx context.Context, keys ...string) error {
	return s.rdb.Del(ctx, keys...).Err()
}

// DebugSet writes a raw key; tests only.
func (s *Store) DebugSet(ctx context.Context, key, val string) error {
	return s.rdb.Set(ctx, key, val, 0).Err()
}

// DebugConfigSet and DebugConfigGet reach CONFIG; tests only.
func (s *Store) DebugConfigSet(ctx context.Context, k, v string) error {
	return s.rdb.ConfigSet(ctx, k, v).Err()
}

func (s *Store) DebugConfigGet(ctx context.Context, k string) (string, error) {
	m, err := s.rdb.ConfigGet(ctx, k).Result()
	return m[k], err
}

// DebugDelPath takes local path p out of the path index (its member
// alone, as a fault would); tests only.
func (s *Store) DebugDelPath(ctx context.Context, p string) error {
	ms, err := s.rdb.ZRangeByLex(ctx, keyPaths, pathRange(p)).Result()
	if err != nil || len(ms) == 0 {
		return err
	}
	return s.rdb.ZRem(ctx, keyPaths, ms[0]).Err()
}

// PathFields are the values of a path's state in the path index, in order.
var PathFields = pathFields

// DebugHSet, DebugHDel and DebugSAdd write raw hash fields and set
// members; tests only.
func (s *Store) DebugHSet(ctx context.Context, key, field, val string) error {
	return s.rdb.HSet(ctx, key, field, val).Err()
}

func (s *Store) DebugHDel(ctx context.Context, key, field string) error {
	return s.rdb.HDel(ctx, key, field).Err()
}

func (s *Store) DebugSAdd(ctx context.Context, key, member string) error {
	return s.rdb.SAdd(ctx, key, member).Err()
}

// DebugFlush empties the database (FLUSHDB) and stamps its layout, as
// Open does on an empty database; tests only.
func (s *Store) DebugFlush(ctx context.Context) error {
	if err := s.rdb.FlushDB(ctx).Err(); err != nil {
		return err
	}
	return s.ensureLayout(ctx)
}

// DebugDump returns every key with its type and value in a comparable
// text form (sets and hashes sorted, sorted sets with scores, streams by
// length and last ID); tests only.
func (s *Store) DebugDump(ctx context.Context) (map[string]string, error) {
	keys, err := s.DebugKeys(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		typ, err := s.rdb.Type(ctx, k).Result()
		if err != nil {
			return nil, err
		}
		var v any
		switch typ {
		case "string":
			v, err = s.rdb.Get(ctx, k).Result()
		case "set":
			var m []string
			m, err = s.rdb.SMembers(ctx, k).Result()
			sort.Strings(m)
			v = m
		case "hash":
			v, err = s.rdb.HGetAll(ctx, k).Result()
		case "zset":
			v, err = s.rdb.ZRangeWithScores(ctx, k, 0, -1).Result()
		case "stream":
			var info *redis.XInfoStream
			info, err = s.rdb.XInfoStream(ctx, k).Result()
			if info != nil {
				v = []any{info.Length, info.LastGeneratedID}
			}
		}
		if err != nil {
			return nil, err
		}
		out[k] = fmt.Sprintf("%s %v", typ, v)
	}
	return out, nil
}

// Nested is the document as one nested map (tests only; the node builds
// GET /api/meta's answer, model.Document, from Presented): nested metadata plus "cids",
// "canonical_cid", "duplicates" and "duplicateCount", "peers" when peers
// supplied any of it, "learned" (member → the peers that vouch for it)
// when the root holds members only because peers' records carried them,
// and, for local paths that are not valid UTF-8,
// "filePathBytes" and "duplicatesBytes" (the exact names; JSON encodes
// them in base64).
//
// What peers said is always under "origin", by peer ID. A local root
// shows only its own fields at top level; a root known only from peers
// also shows the peers' fields at top level, its own fields first, then
// each peer's by peer ID, smallest first, so the document does not
// depend on the order records arrived in.
func (d Document) Nested() map[string]any {
	m := Unflatten(d.Presented())
	m["cids"] = append([]string{}, d.CIDs...)
	m["canonical_cid"] = d.CanonicalCID()
	m["duplicates"] = append([]string{}, d.Duplicates...)
	m["duplicateCount"] = d.DuplicateCount
	if len(d.Peers) > 0 {
		m["peers"] = append([]string{}, d.Peers...)
	}
	if len(d.Learned) > 0 {
		learned := make(map[string][]string, len(d.Learned))
		for c, ps := range d.Learned {
			learned[c] = append([]string{}, ps...)
		}
		m["learned"] = learned
	}
	// JSON replaces bytes that are not UTF-8 by U+FFFD; a path with such
	// bytes is also given exactly, base64-encoded (as metamesh hash does).
	if fp := d.FilePath(); fp != "" && !utf8.ValidString(fp) {
		m["filePathBytes"] = []byte(fp)
	}
	for _, p := range d.Duplicates {
		if !utf8.ValidString(p) {
			exact := make([][]byte, len(d.Duplicates))
			for i, q := range d.Duplicates {
				exact[i] = []byte(q)
			}
			m["duplicatesBytes"] = exact
			break
		}
	}
	return m
}

// PackRoundTrip is d packed as the document cache keeps it and read back.
func PackRoundTrip(d Document) Document { return unpackDocument(packDocument(d)) }

// MemoryUsed reports Redis INFO used_memory in bytes; tests and
// benchmarks only.
func (s *Store) MemoryUsed(ctx context.Context) (int64, error) {
	info, err := s.rdb.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			var n int64
			_, err := fmt.Sscan(v, &n)
			return n, err
		}
	}
	return 0, errors.New("store: INFO memory has no used_memory")
}

// SettledMemoryUsed is MemoryUsed once Redis has finished growing its
// main table: a table that doubled is rehashed into the new one a little
// every 100 ms, and both count until it ends (8 MB more for 2^20 keys),
// so it waits until two reads a second apart agree. A count still
// changing after waiting.Guard comes with an error that says the last
// two reads, not as a number taken mid-rehash; tests only.
func (s *Store) SettledMemoryUsed(ctx context.Context) (int64, error) {
	last, err := s.MemoryUsed(ctx)
	if err != nil {
		return 0, err
	}
	for start := time.Now(); ; {
		time.Sleep(time.Second) // the rehash's pace: reads a second apart
		n, err := s.MemoryUsed(ctx)
		switch {
		case err != nil:
			return 0, err
		case n == last:
			return n, nil
		case time.Since(start) >= waiting.Guard:
			return n, fmt.Errorf("store: used_memory still changing after %v: %d then %d bytes", waiting.Guard, last, n)
		}
		last = n
	}
}

// ParseRootID checks s is a 26-character UUIDv7 root ID; tests only.
func ParseRootID(s string) (RootID, error) {
	u, err := ulid.ParseStrict(s)
	if err != nil {
		return "", fmt.Errorf("root id %q: %w", s, err)
	}
	if u[6]>>4 != 7 || u[8]>>6 != 2 {
		return "", fmt.Errorf("root id %q: not a UUIDv7 (version %d, variant bits %02b)", s, u[6]>>4, u[8]>>6)
	}
	return RootID(s), nil
}

// Unflatten is flat nested as GET /api/meta nests it (model.NestMeta,
// nothing typed), in plain Go values: strings, map[string]any and []any.
func Unflatten(flat map[string]string) map[string]any {
	return plain(model.ObjectValue(model.NestMeta(flat, nil))).(map[string]any)
}

func plain(v model.Value) any {
	switch v.Kind {
	case model.KindObject:
		m := make(map[string]any, len(v.Object))
		for k, x := range v.Object {
			m[k] = plain(x)
		}
		return m
	case model.KindList:
		l := make([]any, len(v.List))
		for i, x := range v.List {
			l[i] = plain(x)
		}
		return l
	}
	return v.Str
}
