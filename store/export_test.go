package store

// Export for tests in store_test: the raw keyspace, read with SCAN.

import (
	"context"
	"fmt"
	"sort"

	"github.com/redis/go-redis/v9"
)

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

// DebugFlush empties the database (FLUSHDB); tests only.
func (s *Store) DebugFlush(ctx context.Context) error {
	return s.rdb.FlushDB(ctx).Err()
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
