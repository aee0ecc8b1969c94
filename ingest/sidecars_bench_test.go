package ingest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/metamesh/node/store/storetest"
)

// BenchmarkSidecarLinks scans a library of 10,000 movies, each in its
// folder with a poster, an English subtitle and an NFO, then times
// finding every video's sidecar links (what every extraction and relink
// does) against one path lookup per video in the same run.
//
//	go test ./ingest -run '^$' -bench SidecarLinks -benchtime 1x
func BenchmarkSidecarLinks(b *testing.B) {
	const n = 10_000
	dir, _ := filepath.EvalSymlinks(b.TempDir())
	buf := make([]byte, 4096)
	var videos []string
	for i := 0; i < n; i++ {
		sub := filepath.Join(dir, "Movies", fmt.Sprintf("Title %05d (%d)", i, 1950+i%70))
		os.MkdirAll(sub, 0o755)
		stem := fmt.Sprintf("Title.%05d.%d.1080p", i, 1950+i%70)
		buf[0], buf[1], buf[2] = byte(i), byte(i>>8), 1
		v := filepath.Join(sub, stem+".mkv")
		os.WriteFile(v, buf, 0o644)
		buf[2] = 2
		os.WriteFile(filepath.Join(sub, "poster.jpg"), buf[:1024], 0o644)
		os.WriteFile(filepath.Join(sub, stem+".en.srt"), []byte(fmt.Sprintf("1\n00:00:01,000 --> 00:00:02,000\n%d\n", i)), 0o644)
		os.WriteFile(filepath.Join(sub, stem+".nfo"), []byte(fmt.Sprintf("<movie><title>Title %05d</title></movie>", i)), 0o644)
		videos = append(videos, v)
	}
	st := storetest.New(b)
	cfg := Config{Libraries: []string{dir}, Settle: time.Millisecond, Logger: storetest.Logger(b),
		Extractors: []Extractor{FileInfo{}, Filename{}, NFOReader{}}}
	ctx := context.Background()
	start := time.Now()
	if _, err := Scan(ctx, st, cfg, time.Hour, nil); err != nil {
		b.Fatal(err)
	}
	scan := time.Since(start)
	in, err := New(st, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start = time.Now()
	linked := 0
	for _, v := range videos {
		if l := in.sidecarLinks(ctx, v, -1); l["art/poster"] != "" && l["subtitles/eng/0"] != "" {
			linked++
		}
	}
	links := time.Since(start)
	start = time.Now()
	for _, v := range videos {
		if _, err := st.Path(ctx, v); err != nil {
			b.Fatal(err)
		}
	}
	lookup := time.Since(start)
	b.StopTimer()
	if linked != n {
		b.Fatalf("%d of %d videos have their poster and subtitle linked", linked, n)
	}
	per := float64(links.Microseconds()) / n
	fmt.Printf("\nsidecar links, %d movies with a poster, a subtitle and an NFO each (first scan of the %d files %s):\n", n, 4*n, scan.Round(10*time.Millisecond))
	fmt.Printf("  %.0f µs per video, %.2f × one path lookup (%.0f µs)\n\n", per, links.Seconds()/lookup.Seconds(), float64(lookup.Microseconds())/n)
	b.ReportMetric(per, "µs/video")
	b.ReportMetric(links.Seconds()/lookup.Seconds(), "links/lookup")
}
