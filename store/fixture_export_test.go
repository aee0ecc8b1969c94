package store

// The command log: a store's whole keyspace as Redis commands, one per
// line, every argument Go-quoted, so a fixture of a layout is text that
// rebuilds it byte for byte (stream entry IDs included).

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// DebugWriteCommandLog writes every key of the store as the commands
// that rebuild it; tests only.
func (s *Store) DebugWriteCommandLog(ctx context.Context, w io.Writer) error {
	keys, err := s.DebugKeys(ctx)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	line := func(args ...string) {
		for i, a := range args {
			if i > 0 {
				bw.WriteByte(' ')
			}
			bw.WriteString(strconv.Quote(a))
		}
		bw.WriteByte('\n')
	}
	for _, k := range keys {
		typ, err := s.rdb.Type(ctx, k).Result()
		if err != nil {
			return err
		}
		switch typ {
		case "string":
			v, err := s.rdb.Get(ctx, k).Result()
			if err != nil {
				return err
			}
			line("SET", k, v)
		case "hash":
			m, err := s.rdb.HGetAll(ctx, k).Result()
			if err != nil {
				return err
			}
			args := []string{"HSET", k}
			for _, f := range sortedKeys(m) {
				args = append(args, f, m[f])
			}
			line(args...)
		case "set":
			m, err := s.rdb.SMembers(ctx, k).Result()
			if err != nil {
				return err
			}
			sort.Strings(m)
			line(append([]string{"SADD", k}, m...)...)
		case "zset":
			m, err := s.rdb.ZRangeWithScores(ctx, k, 0, -1).Result()
			if err != nil {
				return err
			}
			args := []string{"ZADD", k}
			for _, z := range m {
				args = append(args, strconv.FormatFloat(z.Score, 'g', -1, 64), z.Member.(string))
			}
			line(args...)
		case "stream":
			msgs, err := s.rdb.XRange(ctx, k, "-", "+").Result()
			if err != nil {
				return err
			}
			for _, m := range msgs {
				args := []string{"XADD", k, m.ID}
				for _, f := range sortedKeys(m.Values) {
					args = append(args, f, fmt.Sprint(m.Values[f]))
				}
				line(args...)
			}
			info, err := s.rdb.XInfoStream(ctx, k).Result()
			if err != nil {
				return err
			}
			line("XSETID", k, info.LastGeneratedID, "ENTRIESADDED", strconv.FormatInt(info.EntriesAdded, 10), "MAXDELETEDID", info.MaxDeletedEntryID)
		default:
			return fmt.Errorf("command log: key %q has type %s", k, typ)
		}
	}
	return bw.Flush()
}

// DebugReplayCommandLog runs a command log (DebugWriteCommandLog) against
// the Redis at url, as it is (no Open); tests only.
func DebugReplayCommandLog(ctx context.Context, url string, r io.Reader) error {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	pipe := rdb.Pipeline()
	n := 0
	for sc.Scan() {
		rest := strings.TrimSpace(sc.Text())
		if rest == "" {
			continue
		}
		var args []any
		for rest != "" {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return fmt.Errorf("command log: %q: %w", rest, err)
			}
			a, _ := strconv.Unquote(q)
			args = append(args, a)
			rest = strings.TrimLeft(rest[len(q):], " ")
		}
		pipe.Do(ctx, args...)
		if n++; n%500 == 0 {
			if _, err := pipe.Exec(ctx); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	_, err = pipe.Exec(ctx)
	if err == redis.Nil {
		err = nil
	}
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// DebugFootprint sums MEMORY USAGE of every key by key family (the key
// name up to its first ':'; file: keys by the kind of field); tests and
// benchmarks only.
func (s *Store) DebugFootprint(ctx context.Context) (map[string]int64, int, error) {
	keys, err := s.DebugKeys(ctx)
	if err != nil {
		return nil, 0, err
	}
	out := map[string]int64{}
	for i := 0; i < len(keys); i += 1000 {
		chunk := keys[i:min(i+1000, len(keys))]
		pipe := s.rdb.Pipeline()
		cmds := make([]*redis.IntCmd, len(chunk))
		for j, k := range chunk {
			cmds[j] = pipe.MemoryUsage(ctx, k, 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return nil, 0, err
		}
		for j, k := range chunk {
			out[keyFamily(k)] += cmds[j].Val()
		}
	}
	return out, len(keys), nil
}

func keyFamily(k string) string {
	fam, rest, ok := strings.Cut(k, ":")
	if !ok || fam != "file" {
		return fam + ":"
	}
	if rest == "__index__" {
		return "file:__index__"
	}
	_, field, _ := strings.Cut(rest, "/")
	switch {
	case strings.HasPrefix(field, "cids/"):
		return "file:<root>/cids/<cid>"
	case field == "duplicates":
		return "file:<root>/duplicates"
	case strings.HasPrefix(field, "origin/"):
		return "file:<root>/origin/…"
	}
	return "file:<root>/<field>"
}

// DebugCopyKeys copies the keys for which keep is true to the empty Redis
// at url (DUMP and RESTORE, pipelined) and returns how many it copied:
// a fresh server holds them as if nothing else had ever been written;
// benchmarks only.
func (s *Store) DebugCopyKeys(ctx context.Context, url string, keep func(string) bool) (int, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return 0, err
	}
	dst := redis.NewClient(opt)
	defer dst.Close()
	keys, err := s.DebugKeys(ctx)
	if err != nil {
		return 0, err
	}
	keys = slices.DeleteFunc(keys, func(k string) bool { return !keep(k) })
	for i := 0; i < len(keys); i += 1000 {
		chunk := keys[i:min(i+1000, len(keys))]
		pipe := s.rdb.Pipeline()
		dumps := make([]*redis.StringCmd, len(chunk))
		for j, k := range chunk {
			dumps[j] = pipe.Dump(ctx, k)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return 0, err
		}
		put := dst.Pipeline()
		for j, k := range chunk {
			put.Restore(ctx, k, 0, dumps[j].Val())
		}
		if _, err := put.Exec(ctx); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// SeedsKey reports whether k is one of the seeds' own keys (file:… and
// cid:…), not one of the node's indexes.
func SeedsKey(k string) bool {
	return strings.HasPrefix(k, "file:") || strings.HasPrefix(k, "cid:")
}
