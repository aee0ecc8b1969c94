package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// An upgrade rewrites the node's own keys of an older layout in place,
// before the store serves anything. It is one SCAN over the database in
// batches; every batch is one script that converts its keys and records
// the SCAN cursor to resume from (meta:upgrade), so a crash (kill -9 of
// the node, of Redis with its append-only file) at any point leaves each
// key either converted or not, and the next Open resumes after the last
// recorded batch. Converting a key twice changes nothing. meta:layout is
// written last, with meta:upgrade deleted in the same transaction.

// defaultUpgradeBatch is how many keys one upgrade script is handed
// (SCAN's COUNT).
const defaultUpgradeBatch = 500

// upgradeOptions tune an upgrade: the batch size, and a hook that runs
// after every batch and may stop the upgrade there with an error, as a
// crash would (tests only: Options has no exported field for it).
type upgradeOptions struct {
	batch int
	after func(batch int) error
}

// upgradeProgressEvery is how often an upgrade logs its progress.
const upgradeProgressEvery = 5 * time.Second

// upgrades[v] converts a batch of keys of layout v to layout v+1 and
// records cursor as where the SCAN resumes.
var upgrades = map[int]func(ctx context.Context, s *Store, cursor uint64, keys []string) error{
	1: func(ctx context.Context, s *Store, cursor uint64, keys []string) error {
		_, err := luaUpgrade2.run(ctx, s, upgradeArgs{cursor: cursor, keys: keys})
		return err
	},
	2: func(ctx context.Context, s *Store, cursor uint64, keys []string) error {
		_, err := luaUpgrade3.run(ctx, s, upgradeArgs{cursor: cursor, keys: keys})
		return err
	},
}

// finishes[v] runs once the SCAN of the upgrade from layout v is done,
// before the new layout is recorded; run again in whole when an upgrade
// resumes, it changes nothing the second time.
var finishes = map[int]func(ctx context.Context, s *Store) error{
	2: dropBarePaths,
}

// dropBarePaths takes out of the path index the members layout 2 listed
// without a path:<path> hash (upgrade3.lua converted every one that had
// one): a path without its state is not known, and the next scan finds
// the file again if it is there.
func dropBarePaths(ctx context.Context, s *Store) error {
	dropped := 0
	err := s.pathMembers(ctx, func(page []string) error {
		var bare []any
		for _, m := range page {
			if !strings.Contains(m, "\x00") {
				bare = append(bare, m)
			}
		}
		if len(bare) == 0 {
			return nil
		}
		dropped += len(bare)
		return s.rdb.ZRem(ctx, keyPaths, bare...).Err()
	})
	if err != nil {
		return err
	}
	if dropped > 0 {
		s.log.Warn("upgrade: paths listed without their state were dropped; the next scan finds them again", "paths", dropped)
	}
	return nil
}

// upgrade brings a store of layout from to Layout.
func (s *Store) upgrade(ctx context.Context, from int) error {
	for v := from; v < Layout; v++ {
		convert, ok := upgrades[v]
		if !ok {
			return fmt.Errorf("store: no upgrade from layout %d", v)
		}
		start := time.Now()
		roots, _ := s.rdb.SCard(ctx, keyIndex).Result()
		s.log.Info("upgrading the store in place", "from", v, "to", v+1, "roots", roots)
		state, err := s.rdb.HGetAll(ctx, keyUpgrade).Result()
		if err != nil {
			return fmt.Errorf("store: read upgrade state: %w", err)
		}
		var cursor uint64
		if state["to"] == strconv.Itoa(v+1) {
			cursor, _ = strconv.ParseUint(state["cursor"], 10, 64)
			s.log.Info("resuming an interrupted upgrade", "cursor", cursor)
		} else if err := s.rdb.HSet(ctx, keyUpgrade, "to", v+1, "cursor", 0).Err(); err != nil {
			return fmt.Errorf("store: start upgrade: %w", err)
		}
		done, last := 0, time.Now()
		for batch := 1; ; batch++ {
			keys, next, err := s.rdb.Scan(ctx, cursor, "*", int64(s.up.batch)).Result()
			if err == nil {
				// The script records next as the cursor to resume from.
				err = convert(ctx, s, next, keys)
			}
			if err != nil {
				return fmt.Errorf("store: upgrade to layout %d: %w", v+1, err)
			}
			done += len(keys)
			if s.up.after != nil {
				if err := s.up.after(batch); err != nil {
					return err
				}
			}
			if time.Since(last) >= upgradeProgressEvery {
				last = time.Now()
				s.log.Info("upgrading the store", "to", v+1, "keys", done, "roots", roots)
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
		if finish := finishes[v]; finish != nil {
			if err := finish(ctx, s); err != nil {
				return fmt.Errorf("store: upgrade to layout %d: %w", v+1, err)
			}
		}
		_, err = s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			pipe.Set(ctx, keyLayout, strconv.Itoa(v+1), 0)
			pipe.Del(ctx, keyUpgrade)
			return nil
		})
		if err != nil {
			return fmt.Errorf("store: finish upgrade: %w", err)
		}
		s.log.Info("store upgraded", "to", v+1, "roots", roots, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// upgradeArgs are upgrade2.lua's: the cursor to resume from after this
// batch, the batch's keys.
type upgradeArgs struct {
	cursor uint64
	keys   []string
}

func (a upgradeArgs) argv() []any {
	v := make([]any, 0, 1+len(a.keys))
	v = append(v, strconv.FormatUint(a.cursor, 10))
	for _, k := range a.keys {
		v = append(v, k)
	}
	return v
}

// decodeUpgrade reads how many keys a batch converted.
func decodeUpgrade(c *redis.Cmd) (int64, error) { return c.Int64() }

var (
	luaUpgrade2 = newScript[upgradeArgs](luaBare, "upgrade2.lua", "upgrade", decodeUpgrade)
	luaUpgrade3 = newScript[upgradeArgs](luaBare, "upgrade3.lua", "upgrade", decodeUpgrade)
)
