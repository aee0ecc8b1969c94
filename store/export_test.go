package store

// Export for tests in store_test: the raw keyspace, read with SCAN.

import (
	"context"
	"sort"
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

// DebugHSet and DebugSAdd write raw hash fields and set members; tests only.
func (s *Store) DebugHSet(ctx context.Context, key, field, val string) error {
	return s.rdb.HSet(ctx, key, field, val).Err()
}

func (s *Store) DebugSAdd(ctx context.Context, key, member string) error {
	return s.rdb.SAdd(ctx, key, member).Err()
}
