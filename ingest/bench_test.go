package ingest_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/store/storetest"
)

// bigFile writes size bytes of a cheap pattern and reads it once, so the
// page cache holds it.
func bigFile(b *testing.B, dir, name string, size int64) string {
	b.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i*131 + len(name))
	}
	for w := int64(0); w < size; w += int64(len(buf)) {
		buf[0], buf[1] = byte(w>>20), byte(w>>28) // no two MiB alike
		n := min(int64(len(buf)), size-w)
		if _, err := f.Write(buf[:n]); err != nil {
			b.Fatal(err)
		}
	}
	f.Close()
	warm(b, p)
	return p
}

func warm(b *testing.B, p string) {
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	io.Copy(io.Discard, f)
}

// measure runs fn as a sub-benchmark and returns its ns/op.
func measure(b *testing.B, name string, fn func()) float64 {
	var ns float64
	b.Run(name, func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			fn()
		}
		ns = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	return ns
}

// BenchmarkHasher measures, in one run on the same page-cached 1 GiB file,
// the one-pass hasher (midhash + sha2-256 + IPFS CID) against a bare
// single-core crypto/sha256 pass (goal: ratio <= 1.15), and midhash time
// on a 1 GiB against a 10 MiB file (goal <= 1.5: it is O(1)).
func BenchmarkHasher(b *testing.B) {
	dir := b.TempDir()
	big := bigFile(b, dir, "big.bin", 1<<30)
	small := bigFile(b, dir, "small.bin", 10<<20)

	bare := measure(b, "sha256-1core", func() {
		f, _ := os.Open(big)
		h := sha256.New()
		io.CopyBuffer(h, f, make([]byte, 1<<20))
		f.Close()
	})
	onePass := measure(b, "one-pass", func() {
		if _, err := ingest.HashFile(context.Background(), big); err != nil {
			b.Fatal(err)
		}
	})
	mid := func(name, p string) float64 {
		return measure(b, name, func() {
			f, _ := os.Open(p)
			fi, _ := f.Stat()
			if _, err := ingest.MidhashFile(f, fi.Size()); err != nil {
				b.Fatal(err)
			}
			f.Close()
		})
	}
	midBig, midSmall := mid("midhash-1GiB", big), mid("midhash-10MiB", small)

	ratio := onePass / bare
	midRatio := midBig / midSmall
	fmt.Printf("\nhasher on a page-cached 1 GiB file (one run)\n")
	fmt.Printf("  bare crypto/sha256, one core : %8.0f ms  (%.0f MB/s)\n", bare/1e6, float64(1<<30)/bare*1e3)
	fmt.Printf("  one pass midhash+sha256+IPFS : %8.0f ms  (%.0f MB/s)\n", onePass/1e6, float64(1<<30)/onePass*1e3)
	fmt.Printf("  ratio one-pass / bare sha256 : %8.2f  (goal <= 1.15)\n", ratio)
	fmt.Printf("  midhash 1 GiB / 10 MiB       : %8.2f  (goal <= 1.5; %.0f µs vs %.0f µs)\n\n", midRatio, midBig/1e3, midSmall/1e3)
	b.ReportMetric(ratio, "onepass/sha256")
	b.ReportMetric(midRatio, "midhash-1GiB/10MiB")
}

// BenchmarkScan measures initial-scan throughput through the real
// pipeline and a real redis-server: 10,000 files of 4 KiB (files/s) and
// 2 GiB of large files (MB/s).
func BenchmarkScan(b *testing.B) {
	run := func(name string, fill func(dir string)) ingest.Progress {
		s := storetest.New(b)
		dir, _ := filepath.EvalSymlinks(b.TempDir())
		fill(dir)
		cfg := ingest.Config{Libraries: []string{dir}, Settle: time.Millisecond, Extractors: []ingest.Extractor{ingest.FileInfo{}, ingest.Filename{}},
			Logger: storetest.Logger(b)}
		start := time.Now()
		p, err := ingest.Scan(context.Background(), s, cfg, time.Hour, nil)
		if err != nil {
			b.Fatal(err)
		}
		el := time.Since(start).Seconds()
		fmt.Printf("  %-28s %6d files %8.1f MiB in %6.2fs: %8.0f files/s %8.1f MB/s\n", name, p.FilesDone,
			float64(p.BytesDone)/(1<<20), el, float64(p.FilesDone)/el, float64(p.BytesDone)/el/1e6)
		return p
	}
	fmt.Printf("\ninitial scan (real redis-server, one run)\n")
	small := run("10,000 files of 4 KiB", func(dir string) {
		buf := make([]byte, 4096)
		for i := 0; i < 10000; i++ {
			sub := filepath.Join(dir, fmt.Sprintf("d%02d", i%100))
			os.MkdirAll(sub, 0o755)
			buf[0], buf[1], buf[2] = byte(i), byte(i>>8), 1
			os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d.bin", i)), buf, 0o644)
		}
	})
	large := run("2 GiB in 8 files of 256 MiB", func(dir string) {
		for i := 0; i < 8; i++ {
			bigFile(b, dir, fmt.Sprintf("large%d.bin", i), 256<<20)
		}
	})
	fmt.Println()
	b.ReportMetric(float64(small.FilesDone), "small-files")
	b.ReportMetric(float64(large.BytesDone)/(1<<20), "large-MiB")
}
