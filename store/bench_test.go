package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/protocol"
)

// BenchmarkStoreScaling measures, in one run on one server, GetByCID and
// Document latency at 1,000 and 100,000 roots (3 CIDs and ~20 fields
// each) as ratios to a bare GET round trip, the 100k/1k ratio of Document
// (O(fields) means about 1), and Redis memory per root.
//
//	go test ./store -run '^$' -bench StoreScaling -benchtime 20000x
func BenchmarkStoreScaling(b *testing.B) {
	ctx := context.Background()
	srv, err := StartServer(ctx, ServerConfig{Dir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	s, err := Open(ctx, Options{URL: srv.URL()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()

	type figures struct{ get, byCID, doc float64 }
	res := map[int]figures{}
	loaded := 0
	mem0, _ := s.MemoryUsed(ctx)
	var memPerRoot float64
	for _, n := range []int{1_000, 100_000} {
		if err := benchLoad(ctx, s, loaded, n); err != nil {
			b.Fatal(err)
		}
		loaded = n
		if n == 100_000 {
			mem1, _ := s.MemoryUsed(ctx)
			memPerRoot = float64(mem1-mem0) / float64(n)
		}
		var f figures
		probe := benchHashes(n / 2) // a root in the middle
		root, err := s.GetByCID(ctx, probe.IPFS)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("roots=%d/GET", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := s.rdb.Get(ctx, "cid:"+probe.IPFS).Err(); err != nil {
					b.Fatal(err)
				}
			}
			f.get = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
		b.Run(fmt.Sprintf("roots=%d/GetByCID", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := s.GetByCID(ctx, probe.IPFS); err != nil {
					b.Fatal(err)
				}
			}
			f.byCID = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
		b.Run(fmt.Sprintf("roots=%d/Document", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				d, err := s.Document(ctx, root)
				if err != nil || len(d.CIDs) != 3 {
					b.Fatalf("document: %v %v", d.CIDs, err)
				}
			}
			f.doc = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
		res[n] = f
	}
	small, large := res[1_000], res[100_000]
	fmt.Printf("\nstore scaling (one server, one run)\n")
	fmt.Printf("%-8s %12s %12s %12s %14s %14s\n", "roots", "GET ns", "GetByCID ns", "Document ns", "GetByCID/GET", "Document/GET")
	for _, n := range []int{1_000, 100_000} {
		f := res[n]
		fmt.Printf("%-8d %12.0f %12.0f %12.0f %14.2f %14.2f\n", n, f.get, f.byCID, f.doc, f.byCID/f.get, f.doc/f.get)
	}
	fmt.Printf("Document 100k/1k ratio: %.2f (goal <= 1.3)\n", large.doc/small.doc)
	fmt.Printf("Redis memory per root: %.0f bytes\n\n", memPerRoot)
	b.ReportMetric(large.doc/small.doc, "doc-100k/1k")
	b.ReportMetric(large.byCID/large.get, "getbycid/GET")
	b.ReportMetric(large.doc/large.get, "doc/GET")
	b.ReportMetric(memPerRoot, "B/root")
}

// benchHashes gives root i three distinct CIDs.
func benchHashes(i int) Hashes {
	d := func(kind byte) []byte {
		var buf [9]byte
		buf[0] = kind
		binary.BigEndian.PutUint64(buf[1:], uint64(i))
		sum := sha256.Sum256(buf[:])
		return sum[:]
	}
	m, _ := protocol.MidhashCID(d('m'))
	sh, _ := protocol.SHA256CID(d('s'))
	mh, _ := multihash.Encode(d('i'), protocol.CodeSHA2_256)
	return Hashes{Midhash: m.String(), SHA256: sh.String(), IPFS: cid.NewCidV1(protocol.CodeDagPB, mh).String()}
}

// benchLoad adds roots [from, to) through the real lifecycle scripts,
// pipelined: arrive, confirm, then 17 metadata fields (~20 with the schema
// fields).
func benchLoad(ctx context.Context, s *Store, from, to int) error {
	for _, sc := range []*redis.Script{luaArrive.sc, luaConfirm.sc, luaSetFields.sc} {
		if err := sc.Load(ctx, s.rdb).Err(); err != nil {
			return err
		}
	}
	start := time.Now()
	const batch = 500
	for lo := from; lo < to; lo += batch {
		hi := min(lo+batch, to)
		pipe := s.rdb.Pipeline()
		roots := make([]string, 0, hi-lo)
		for i := lo; i < hi; i++ {
			h := benchHashes(i)
			p := "/library/movies/Some.Movie.Title." + strconv.Itoa(i) + ".2010.1080p.BluRay.x264.mkv"
			f := FileStat{Path: p, Size: int64(1_000_000 + i), MtimeNs: int64(1_700_000_000_000_000_000 + i)}
			root := NewRootID()
			roots = append(roots, string(root))
			luaArrive.sc.EvalSha(ctx, pipe, nil, luaArrive.args(s, arriveArgs{newRoot: root, file: f, midhash: h.Midhash})...)
			luaConfirm.sc.EvalSha(ctx, pipe, nil, luaConfirm.args(s, confirmArgs{file: f, hashes: h, splitRoot: NewRootID(), leaveRoot: NewRootID()})...)
			fields := setFieldsArgs{root: root, fields: map[string]string{}}
			for _, kv := range [][2]string{
				{"fileType", "video"}, {"mimeType", "video/x-matroska"}, {"titles/eng", "Some Movie Title"},
				{"originalTitle", "Some Movie Title"}, {"movieYear", "2010"}, {"videoType", "movie"},
				{"fileinfo/duration", "7200.5"}, {"fileinfo/formatName", "matroska,webm"},
				{"fileinfo/streamdetails/video/0/codec", "h264"}, {"fileinfo/streamdetails/video/0/width", "1920"},
				{"fileinfo/streamdetails/video/0/height", "1080"}, {"fileinfo/streamdetails/audio/0/codec", "aac"},
				{"fileinfo/streamdetails/audio/0/language", "eng"}, {"fileinfo/streamdetails/audio/0/channels", "6"},
				{"fileinfo/streamdetails/subtitle/0/language", "eng"}, {"fileinfo/streamdetails/subtitle/0/format", "subrip"},
				{"genre/0", "Action"},
			} {
				fields.names = append(fields.names, kv[0])
				fields.fields[kv[0]] = kv[1]
			}
			luaSetFields.sc.EvalSha(ctx, pipe, nil, luaSetFields.args(s, fields)...)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("bench load: %w", err)
		}
	}
	fmt.Printf("loaded roots %d..%d in %s\n", from, to, time.Since(start).Round(time.Millisecond))
	return nil
}
