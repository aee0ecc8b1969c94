package store_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/metamesh/node/internal/peakmem"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// BenchmarkSnapshot weighs a snapshot of METAMESH_SNAPSHOT_ROOTS roots
// (default 100,000; ingestCorpus's files) exported to a file and imported
// into an empty store (make bench, one run): time and peak heap, each
// against a baseline of the same run: for the export, reading every
// root's document root by root (RootIDs, then Document: the store's own
// full read of the same roots); for the import, ingesting the same files
// (IngestBatch, 500 a round trip, as the scan does).
func BenchmarkSnapshot(b *testing.B) {
	n := 100_000
	if v := os.Getenv("METAMESH_SNAPSHOT_ROOTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatalf("METAMESH_SNAPSHOT_ROOTS=%q: %v", v, err)
		}
	}
	src := storetest.New(b)
	t0 := time.Now()
	ingestCorpus(b, src, n)
	ingestTime := time.Since(t0)
	file := filepath.Join(b.TempDir(), "snapshot")
	for b.Loop() {
		var readTime, exportTime time.Duration
		readHeap, _ := peakmem.Measure(func() {
			t := time.Now()
			for _, r := range must[[]store.RootID](b)(src.RootIDs(ctx)) {
				must[store.Document](b)(src.Document(ctx, r))
			}
			readTime = time.Since(t)
		})
		exportHeap, _ := peakmem.Measure(func() {
			f := must[*os.File](b)(os.Create(file))
			t := time.Now()
			if got := must[int](b)(src.ExportSnapshot(ctx, f, store.ExportOptions{})); got != n {
				b.Fatalf("exported %d roots, want %d", got, n)
			}
			exportTime = time.Since(t)
			f.Close()
		})
		dst := storetest.New(b)
		var importTime time.Duration
		importHeap, _ := peakmem.Measure(func() {
			t := time.Now()
			rep := must[store.ImportReport](b)(dst.ImportSnapshot(ctx, func() (io.ReadCloser, error) { return os.Open(file) },
				store.ImportOptions{Mode: store.ImportMerge}))
			importTime = time.Since(t)
			if rep.Added != n {
				b.Fatalf("imported %+v, want %d added", rep, n)
			}
		})
		// Every document, read by each of its CIDs, is the same in both
		// stores, and the imported store holds to every invariant.
		cids := 0
		for _, r := range must[[]store.RootID](b)(src.RootIDs(ctx)) {
			for _, c := range must[store.Document](b)(src.Document(ctx, r)).CIDs {
				want := must[store.Document](b)(src.DocumentByCID(ctx, c))
				got := must[store.Document](b)(dst.DocumentByCID(ctx, c))
				want.Root, got.Root = "", ""
				if !reflect.DeepEqual(got, want) {
					b.Fatalf("CID %s: imported\n%+v\nexported\n%+v", c, got, want)
				}
				cids++
			}
		}
		mustCheck(b, dst)
		fmt.Printf("every document the same by each of its %d CIDs after the import; fsck clean\n", cids)
		fi := must[os.FileInfo](b)(os.Stat(file))
		fmt.Printf("snapshot of %d roots (%.1f MB): export %s, peak heap %.1f MB (reading every document: %s, %.1f MB): %.2f× the time, %.2f× the heap\n",
			n, float64(fi.Size())/1e6, exportTime.Round(time.Millisecond), float64(exportHeap)/1e6, readTime.Round(time.Millisecond),
			float64(readHeap)/1e6, exportTime.Seconds()/readTime.Seconds(), float64(exportHeap)/float64(readHeap))
		fmt.Printf("import into an empty store %s, peak heap %.1f MB (ingesting the same files: %s): %.2f× the time\n",
			importTime.Round(time.Millisecond), float64(importHeap)/1e6, ingestTime.Round(time.Millisecond), importTime.Seconds()/ingestTime.Seconds())
		b.ReportMetric(exportTime.Seconds()/readTime.Seconds(), "export/read")
		b.ReportMetric(importTime.Seconds()/ingestTime.Seconds(), "import/ingest")
		b.ReportMetric(float64(exportHeap)/1e6, "export-heap-MB")
		b.ReportMetric(float64(importHeap)/1e6, "import-heap-MB")
	}
}
