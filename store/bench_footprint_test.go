package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	mmingest "github.com/metamesh/node/ingest"
	"github.com/metamesh/node/node/search"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// BenchmarkFootprint scans a library of named video files (release names
// of movies and episodes in the folders households keep them in, 1 KiB
// each) through the real pipeline into a real redis-server, indexes every
// root for search as the node does, and reports Redis memory per file
// (INFO used_memory over the roots), the bytes of each key family
// (MEMORY USAGE of every key), the first scan, the index pass and a
// restart's reconciliation scan.
//
//	METAMESH_FOOTPRINT_FILES=100000 go test ./store -run '^$' -bench Footprint -benchtime 1x
func BenchmarkFootprint(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("METAMESH_FOOTPRINT_FILES")); err == nil && v > 0 {
		n = v
	}
	dir, _ := filepath.EvalSymlinks(b.TempDir())
	writeNamedLibrary(b, dir, n)
	srv := storetest.Server(b)
	open := func() *store.Store {
		s, err := store.Open(context.Background(), store.Options{URL: srv.URL(), Logger: storetest.Logger(b)})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	s := open()
	ctx := context.Background()
	mem0, _ := s.MemoryUsed(ctx)
	cfg := mmingest.Config{Libraries: []string{dir}, Settle: time.Millisecond, Logger: storetest.Logger(b),
		Extractors: []mmingest.Extractor{mmingest.FileInfo{}, mmingest.Filename{}}}
	start := time.Now()
	p, err := mmingest.Scan(ctx, s, cfg, time.Hour, nil)
	if err != nil {
		b.Fatal(err)
	}
	scanTime := time.Since(start)
	roots, _ := s.RootIDs(ctx)
	start = time.Now()
	text := must[*search.TextIndex](b)(search.OpenTextIndex(filepath.Join(b.TempDir(), "search")))
	defer text.Close()
	for _, r := range roots {
		d := must[store.Document](b)(s.Document(ctx, r))
		if err := text.Put(r, search.EntryOf(d)); err != nil {
			b.Fatal(err)
		}
	}
	if err := text.Flush(); err != nil {
		b.Fatal(err)
	}
	indexTime := time.Since(start)
	mem1, _ := s.SettledMemoryUsed(ctx)
	fam, keys, err := s.DebugFootprint(ctx)
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	s = open()
	start = time.Now()
	if _, err := mmingest.Scan(ctx, s, cfg, time.Hour, nil); err != nil {
		b.Fatal(err)
	}
	restart := time.Since(start)
	// The seeds' keys alone, copied into a fresh server, are the floor
	// under any layout of the node's own indexes.
	seedsSrv := storetest.Server(b)
	seedsMem0, err := serverMemory(seedsSrv.URL())
	if err != nil {
		b.Fatal(err)
	}
	seedsKeys, err := s.DebugCopyKeys(ctx, seedsSrv.URL(), store.SeedsKey)
	if err != nil {
		b.Fatal(err)
	}
	seedsMem1, err := serverMemory(seedsSrv.URL())
	if err != nil {
		b.Fatal(err)
	}
	s.Close()

	per := float64(mem1-mem0) / float64(len(roots))
	fmt.Printf("\nfootprint: %d files (%d done), %d roots, %d keys (%.1f per root)\n", n, p.FilesDone, len(roots), keys, float64(keys)/float64(len(roots)))
	fmt.Printf("  first scan %s, search index %s, restart scan %s\n", scanTime.Round(10*time.Millisecond), indexTime.Round(10*time.Millisecond), restart.Round(10*time.Millisecond))
	seedsPer := float64(seedsMem1-seedsMem0) / float64(len(roots))
	fmt.Printf("  Redis used_memory per file: %.0f bytes\n", per)
	fmt.Printf("  the seeds' keys alone (%d, %.1f per root) in a fresh server: %.0f bytes per file\n",
		seedsKeys, float64(seedsKeys)/float64(len(roots)), seedsPer)
	fmt.Printf("  used_memory / the seeds' keys alone: %.2f (goal <= 1.30)\n", per/seedsPer)
	b.ReportMetric(per/seedsPer, "×seeds")
	names := make([]string, 0, len(fam))
	var total int64
	for k, v := range fam {
		names = append(names, k)
		total += v
	}
	sort.Slice(names, func(i, j int) bool { return fam[names[i]] > fam[names[j]] })
	for _, k := range names {
		fmt.Printf("  %-28s %7.0f bytes per file\n", k, float64(fam[k])/float64(len(roots)))
	}
	fmt.Printf("  %-28s %7.0f bytes per file (MEMORY USAGE sum)\n\n", "all keys", float64(total)/float64(len(roots)))
	b.ReportMetric(per, "bytes/file")
	b.ReportMetric(scanTime.Seconds(), "scan-s")
	b.ReportMetric(restart.Seconds(), "restart-s")
}

// serverMemory is INFO used_memory of the Redis at url.
func serverMemory(url string) (int64, error) {
	s, err := store.Open(context.Background(), store.Options{URL: url})
	if err != nil {
		return 0, err
	}
	defer s.Close()
	return s.SettledMemoryUsed(context.Background())
}

// writeNamedLibrary writes n small files with release names: two thirds
// movies (Movies/Title (Year)/Title.Year.1080p.BluRay.x264-GRP.mkv), one
// third episodes (Shows/Show/Season 02/Show.S02E07.720p.WEB-DL.mkv).
func writeNamedLibrary(b *testing.B, dir string, n int) {
	words := []string{"Silent", "River", "Night", "Crimson", "Echo", "Harbor", "Iron", "Garden", "Winter", "Signal", "Paper", "Moon", "Atlas", "Quiet", "Storm", "Glass"}
	buf := make([]byte, 1024)
	for i := 0; i < n; i++ {
		title := words[i%16] + " " + words[(i/16)%16] + " " + strconv.Itoa(i/256)
		var p string
		if i%3 == 2 {
			show := words[(i/3)%16] + " " + words[(i/48)%16] + " " + strconv.Itoa(i/3000)
			p = filepath.Join(dir, "Shows", show, fmt.Sprintf("Season %02d", 1+i%5),
				fmt.Sprintf("%s.S%02dE%02d.720p.WEB-DL.x264-GRP.mkv", dotted(show), 1+i%5, 1+(i/5)%20))
		} else {
			year := 1960 + i%60
			p = filepath.Join(dir, "Movies", fmt.Sprintf("%s (%d)", title, year), fmt.Sprintf("%s.%d.1080p.BluRay.x264-GRP.mkv", dotted(title), year))
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		for j := 0; j < 8; j++ {
			buf[j] = byte(i >> (8 * j))
		}
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

func dotted(s string) string {
	out := []byte(s)
	for i, c := range out {
		if c == ' ' {
			out[i] = '.'
		}
	}
	return string(out)
}
