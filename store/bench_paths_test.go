package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	mmingest "github.com/metamesh/node/ingest"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// BenchmarkPathEncodings weighs how layout 3 could store the path index
// once (make bench, one run): a library of named files (as
// BenchmarkFootprint's) is scanned, then its paths are copied into fresh
// servers in each encoding, and INFO used_memory per path is printed:
//
//   - today's: a path:<path> hash of its state, and the path again as a
//     member of the sorted set path:__index__ (the order the scan's
//     reconciliation, a removed directory and a video's sidecars read);
//   - one member per path of one sorted set, "<path>\x00<state>" (the
//     state packed: root, size, mtime, midhash, hashed, dev, ino, link,
//     extraction version), found by ZRANGEBYLEX;
//   - the same without the midhash, which the root's own digests hold.
func BenchmarkPathEncodings(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("METAMESH_FOOTPRINT_FILES")); err == nil && v > 0 {
		n = v
	}
	dir, _ := filepath.EvalSymlinks(b.TempDir())
	writeNamedLibrary(b, dir, n)
	ctx := context.Background()
	s := storetest.New(b)
	cfg := mmingest.Config{Libraries: []string{dir}, Settle: time.Millisecond, Logger: storetest.Logger(b),
		Extractors: []mmingest.Extractor{mmingest.FileInfo{}}}
	if _, err := mmingest.Scan(ctx, s, cfg, time.Hour, nil); err != nil {
		b.Fatal(err)
	}
	var paths []string
	for after := ""; ; {
		page := must[[]string](b)(s.PathsAfter(ctx, after, 1000))
		if len(page) == 0 {
			break
		}
		paths = append(paths, page...)
		after = page[len(page)-1]
	}
	states := must[map[string]store.PathState](b)(s.Paths(ctx, paths))
	packed := func(st store.PathState, mid bool) string {
		f := []string{string(st.Root), strconv.FormatInt(st.Size, 10), strconv.FormatInt(st.MtimeNs, 10)}
		if mid {
			f = append(f, st.Midhash)
		}
		hashed := "0"
		if st.Hashed {
			hashed = "1"
		}
		return strings.Join(append(f, hashed, strconv.FormatUint(st.Dev, 10), strconv.FormatUint(st.Ino, 10), "", strconv.Itoa(st.Extracted)), "\x00")
	}
	weigh := func(name, metric string, write func(p redis.Pipeliner, path string, st store.PathState)) {
		srv := storetest.Server(b)
		opts, _ := redis.ParseURL(srv.URL())
		rdb := redis.NewClient(opts)
		defer rdb.Close()
		used := func() int64 {
			info := rdb.Info(ctx, "memory").Val()
			for _, line := range strings.Split(info, "\r\n") {
				if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
					n, _ := strconv.ParseInt(v, 10, 64)
					return n
				}
			}
			b.Fatal("no used_memory")
			return 0
		}
		before := used()
		pipe := rdb.Pipeline()
		for i, p := range paths {
			write(pipe, p, states[p])
			if i%1000 == 999 {
				if _, err := pipe.Exec(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
		if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
			b.Fatal(err)
		}
		per := float64(used()-before) / float64(len(paths))
		fmt.Printf("  %-52s %5.0f bytes per path\n", name, per)
		b.ReportMetric(per, metric+"-B/path")
	}
	fmt.Printf("\nthe path index of %d files in a fresh Redis, per encoding:\n", len(paths))
	weigh("today (path:<path> hash + path:__index__ member)", "today", func(pipe redis.Pipeliner, p string, st store.PathState) {
		hashed := "0"
		if st.Hashed {
			hashed = "1"
		}
		pipe.HSet(ctx, "path:"+p, "root", string(st.Root), "size", st.Size, "mtime", st.MtimeNs, "mid", st.Midhash, "hashed", hashed,
			"dev", st.Dev, "ino", st.Ino, "xv", st.Extracted)
		pipe.ZAdd(ctx, "path:__index__", redis.Z{Member: p})
	})
	weigh("once (one sorted-set member: path and state)", "once", func(pipe redis.Pipeliner, p string, st store.PathState) {
		pipe.ZAdd(ctx, "paths", redis.Z{Member: p + "\x00" + packed(st, true)})
	})
	weigh("once, without the midhash", "once-nomid", func(pipe redis.Pipeliner, p string, st store.PathState) {
		pipe.ZAdd(ctx, "paths", redis.Z{Member: p + "\x00" + packed(st, false)})
	})
	fmt.Println()
}
