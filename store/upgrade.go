package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// An upgrade rewrites the node's own keys of an older layout in place,
// before the store serves anything. It is a sequence of passes; each pass
// works through its keys in batches, and every batch is one script that
// converts its keys and records how far the pass got (meta:upgrade), so
// a crash (kill -9 of the node, of Redis with its append-only file) at
// any point leaves each key either converted or not, and the next Open
// resumes where the last recorded batch ended. Converting a key twice
// changes nothing. meta:layout is written last, with meta:upgrade
// deleted in the same transaction.

// upgradeBatch is how many keys one upgrade script converts.
var upgradeBatch = 500

// upgradeHook, when set (tests), runs after every batch and may stop the
// upgrade there with an error, as a crash would.
var upgradeHook func(pass string, batch int) error

// upgradeProgressEvery is how often an upgrade logs its progress.
const upgradeProgressEvery = 5 * time.Second

// upgradePass is one pass of an upgrade: the keys it visits (SSCAN of a
// set or SCAN of a pattern) and the script that converts a batch.
type upgradePass struct {
	name string
	// set is the SET whose members the pass visits (SSCAN), or "" to
	// visit the keys matching pattern (SCAN).
	set, pattern string
	convert      func(ctx context.Context, s *Store, cursor uint64, batch []string) error
}

// upgrades[v] turns layout v into layout v+1.
var upgrades = map[int][]upgradePass{
	1: {{name: "keys", pattern: "*", convert: func(ctx context.Context, s *Store, cursor uint64, batch []string) error {
		_, err := luaUpgrade2.run(ctx, s, upgradeArgs{pass: "keys", cursor: cursor, keys: batch})
		return err
	}}},
}

// upgrade brings a store of layout from to Layout.
func (s *Store) upgrade(ctx context.Context, from int) error {
	for v := from; v < Layout; v++ {
		passes, ok := upgrades[v]
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
		resume := state["to"] == strconv.Itoa(v+1)
		if resume {
			s.log.Info("resuming an interrupted upgrade", "pass", state["pass"], "cursor", state["cursor"])
		} else if err := s.rdb.HSet(ctx, keyUpgrade, "to", v+1, "pass", passes[0].name, "cursor", 0).Err(); err != nil {
			return fmt.Errorf("store: start upgrade: %w", err)
		}
		started := !resume
		for _, p := range passes {
			var cursor uint64
			if !started {
				if state["pass"] != p.name {
					continue // done before the interruption
				}
				started = true
				cursor, _ = strconv.ParseUint(state["cursor"], 10, 64)
			}
			if err := s.upgradePass(ctx, v+1, p, cursor, roots); err != nil {
				return err
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

// upgradePass runs one pass from cursor to its end. Each batch's script
// records the cursor after it; a pass that starts records cursor 0.
func (s *Store) upgradePass(ctx context.Context, to int, p upgradePass, cursor uint64, roots int64) error {
	if err := s.rdb.HSet(ctx, keyUpgrade, "pass", p.name).Err(); err != nil {
		return fmt.Errorf("store: upgrade: %w", err)
	}
	done, batch, last := 0, 0, time.Now()
	for {
		var keys []string
		var next uint64
		var err error
		if p.set != "" {
			keys, next, err = s.rdb.SScan(ctx, p.set, cursor, "", int64(upgradeBatch)).Result()
		} else {
			keys, next, err = s.rdb.Scan(ctx, cursor, p.pattern, int64(upgradeBatch)).Result()
		}
		if err != nil {
			return fmt.Errorf("store: upgrade to layout %d, %s: %w", to, p.name, err)
		}
		// The script records next as the cursor to resume from: this
		// batch is then done.
		if err := p.convert(ctx, s, next, keys); err != nil {
			return fmt.Errorf("store: upgrade to layout %d, %s: %w", to, p.name, err)
		}
		done += len(keys)
		batch++
		if upgradeHook != nil {
			if err := upgradeHook(p.name, batch); err != nil {
				return err
			}
		}
		if time.Since(last) >= upgradeProgressEvery {
			last = time.Now()
			s.log.Info("upgrading the store", "to", to, "pass", p.name, "done", done, "roots", roots)
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// errUpgradeStopped is what a test's upgradeHook returns to stop an
// upgrade as a crash would.
var errUpgradeStopped = errors.New("upgrade stopped")

// upgradeArgs are upgrade2.lua's: the pass, the cursor to resume from
// after this batch, the batch's keys.
type upgradeArgs struct {
	pass   string
	cursor uint64
	keys   []string
}

func (a upgradeArgs) argv() []any {
	v := make([]any, 0, 2+len(a.keys))
	v = append(v, a.pass, strconv.FormatUint(a.cursor, 10))
	for _, k := range a.keys {
		v = append(v, k)
	}
	return v
}

// decodeUpgrade reads how many keys a batch converted.
func decodeUpgrade(c *redis.Cmd) (int64, error) { return c.Int64() }

var luaUpgrade2 = newScript[upgradeArgs](luaBare, "upgrade2.lua", "upgrade", decodeUpgrade)
