package store

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/protocol"
)

// BenchmarkUpgrade writes a library of layout 1 (the keys the release
// before layout versions wrote: fields:<root> sets, own:<root> hashes,
// tok:<token> sorted sets; 13 fields, 2 members, 1 path and 11 tokens a
// file) straight into a real redis-server, then times Open upgrading it
// to Layout in place, and reports the time per 100,000 files of each
// step (layout 1 → 2, whose postings and path hashes the step to 3
// converts, then 2 → 3) as the upgrade logs them.
//
//	METAMESH_UPGRADE_FILES=100000 go test ./store -run '^$' -bench Upgrade -benchtime 1x
func BenchmarkUpgrade(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("METAMESH_UPGRADE_FILES")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	steps := &upgradeSteps{}
	log := slog.New(steps)
	srv, err := StartServer(ctx, ServerConfig{Dir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	opt, _ := redis.ParseURL(srv.URL())
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	start := time.Now()
	if err := writeLayout1(ctx, rdb, n); err != nil {
		b.Fatal(err)
	}
	wrote := time.Since(start)
	start = time.Now()
	s, err := Open(ctx, Options{URL: srv.URL(), Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	defer s.Close()
	d, err := s.DocumentByCID(ctx, layout1Hashes(n/2).SHA256)
	if err != nil || d.Fields["titles/eng"] == "" {
		b.Fatalf("a file after the upgrade: %+v %v", d, err)
	}
	if paths, err := s.PathsAfter(ctx, "", 1); err != nil || len(paths) != 1 {
		b.Fatalf("paths after the upgrade: %q %v", paths, err)
	} else if st, err := s.Path(ctx, paths[0]); err != nil || !st.Hashed {
		b.Fatalf("a path after the upgrade: %+v %v", st, err)
	}
	per := took.Seconds() / float64(n) * 100_000
	fmt.Printf("\nupgrade layout 1 → %d: %d files written in %s, upgraded in %s: %.1f s per 100,000 files\n",
		Layout, n, wrote.Round(time.Millisecond), took.Round(time.Millisecond), per)
	for _, st := range steps.took {
		fmt.Printf("  layout %d → %d: %s, %.1f s per 100,000 files\n", st.to-1, st.to, st.took.Round(time.Millisecond), st.took.Seconds()/float64(n)*100_000)
		b.ReportMetric(st.took.Seconds()/float64(n)*100_000, fmt.Sprintf("s/100k-files-to-%d", st.to))
	}
	fmt.Println()
	b.ReportMetric(per, "s/100k-files")
}

// upgradeSteps is a log handler that keeps how long each upgrade step
// took, from the upgrade's "store upgraded" lines.
type upgradeSteps struct {
	took []struct {
		to   int
		took time.Duration
	}
}

func (*upgradeSteps) Enabled(context.Context, slog.Level) bool { return true }
func (h *upgradeSteps) WithAttrs([]slog.Attr) slog.Handler     { return h }
func (h *upgradeSteps) WithGroup(string) slog.Handler          { return h }
func (h *upgradeSteps) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "store upgraded" {
		return nil
	}
	var st struct {
		to   int
		took time.Duration
	}
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "to":
			st.to = int(a.Value.Int64())
		case "took":
			st.took = a.Value.Duration()
		}
		return true
	})
	h.took = append(h.took, st)
	return nil
}

func layout1Hashes(i int) Hashes {
	m, _ := protocol.MidhashCID(digestOf("m", i))
	c, _ := protocol.SHA256CID(digestOf("s", i))
	return Hashes{Midhash: m.String(), SHA256: c.String(), IPFS: c.String()}
}

func digestOf(kind string, i int) []byte {
	out := make([]byte, 32)
	copy(out, fmt.Sprintf("%s-%030d", kind, i))
	return out
}

// writeLayout1 writes n files in layout 1, pipelined.
func writeLayout1(ctx context.Context, rdb *redis.Client, n int) error {
	words := []string{"silent", "river", "night", "crimson", "echo", "harbor", "iron", "garden", "winter", "signal", "paper", "moon", "atlas", "quiet", "storm", "glass"}
	pipe := rdb.Pipeline()
	for i := 0; i < n; i++ {
		r := string(NewRootID())
		h := layout1Hashes(i)
		w1, w2, num := words[i%16], words[(i/16)%16], strconv.Itoa(i/256)
		p := fmt.Sprintf("/library/Movies/%s %s %s (2010)/%s.%s.%s.2010.1080p.BluRay.x264-GRP.mkv", w1, w2, num, w1, w2, num)
		fields := map[string]string{"filePath": p, "sizeByte": strconv.Itoa(1024 + i), "mtime": "1700000000000000000",
			"titles/eng": w1 + " " + w2 + " " + num, "originalTitle": w1 + " " + w2 + " " + num, "movieYear": "2010",
			"videoType": "movie", "mimeType": "video/matroska", "fileType": "video", "release/resolution": "1080p",
			"release/source": "BluRay", "release/videoCodec": "x264", "release/group": "GRP"}
		names := []any{}
		for f, v := range fields {
			pipe.Set(ctx, "file:"+r+"/"+f, v, 0)
			names = append(names, f)
		}
		for _, c := range []string{h.Midhash, h.SHA256} {
			pipe.Set(ctx, "file:"+r+"/cids/"+c, "true", 0)
			pipe.Set(ctx, "cid:"+c, r, 0)
			names = append(names, "cids/"+c)
		}
		pipe.SAdd(ctx, "fields:"+r, names...)
		pipe.HSet(ctx, "own:"+r, "mid", h.Midhash, "sha", h.SHA256, "ipfs", h.IPFS)
		pipe.HSet(ctx, "path:"+p, "root", r, "size", 1024+i, "mtime", "1700000000000000000", "mid", h.Midhash,
			"hashed", "1", "dev", "1", "ino", i+1, "link", "", "xv", "1")
		pipe.ZAdd(ctx, keyPaths, redis.Z{Member: p})
		pipe.SAdd(ctx, fmt.Sprintf("inode:1:%d", i+1), p)
		toks := map[string]int{w1: 2, w2: 2, num: 2, "2010": 1, "1080p": 1, "bluray": 1, "x264": 1, "grp": 1, "mkv": 1}
		for t, w := range toks {
			pipe.HSet(ctx, "toks:"+r, t, w)
			pipe.ZAdd(ctx, "tok:"+t, redis.Z{Score: float64(w), Member: r})
		}
		pipe.SAdd(ctx, keyIndex, r)
		if i%200 == 199 || i == n-1 {
			if _, err := pipe.Exec(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}
