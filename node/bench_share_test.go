package node_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ipfs/go-cid"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/kubotest"
	"github.com/metamesh/node/node"
)

// BenchmarkShareFile moves one 1 GiB file (random bytes: every block
// distinct) from a sharing household to another over loopback, through
// GET /api/file on the fetching household, and in the same run between
// two Kubo 0.42 daemons over bitswap (when Kubo is built:
// scripts/kubo.sh), and from the holder's own /api/file for scale. It
// prints the throughputs, the fetch as a ratio of Kubo's, the time to the
// first byte with the block index present and cold (the index dropped:
// built on the first want), and the time to the first byte of a Range in
// the middle of the file.
func BenchmarkShareFile(b *testing.B) {
	const size = 1 << 30
	lib, _ := filepath.EvalSymlinks(b.TempDir())
	p := filepath.Join(lib, "Film (2001).mkv")
	writeRandom(b, p, size)
	a := startNodeWith(b, lib, func(c *node.Config) { c.ShareFiles = true; c.Workers = 2 })
	h, err := ingest.HashFile(context.Background(), p) // also warms the page cache
	if err != nil {
		b.Fatal(err)
	}
	f := p2pNode(b, nil)
	if err := connect(f, a); err != nil {
		b.Fatal(err)
	}
	var meta map[string]any
	getJSON(b, f, "/api/meta/"+h.Canonical, &meta)

	get := func(n *node.Node, rng string) (ttfb, total time.Duration, got int64) {
		req, _ := http.NewRequest("GET", "http://"+n.APIAddr()+"/api/file/"+h.Canonical, nil)
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		one := make([]byte, 1)
		if _, err := io.ReadFull(resp.Body, one); err != nil {
			b.Fatalf("GET /api/file: %s: %v", resp.Status, err)
		}
		ttfb = time.Since(start)
		n2, _ := io.Copy(io.Discard, resp.Body)
		return ttfb, time.Since(start), n2 + 1
	}
	root, _ := cid.Decode(h.IPFS)
	// Cold: the holder's index dropped, nothing fetched before.
	if err := a.Share().Forget(context.Background(), root); err != nil {
		b.Fatal(err)
	}
	cold, _, _ := get(f, "bytes=0-0")
	warm, _, _ := get(f, "bytes=1-1")
	seek, _, _ := get(f, fmt.Sprintf("bytes=%d-%d", size/2+12345, size/2+12345+(1<<20)-1))

	var fetch, local []float64
	for range 3 {
		_, t, n := get(f, "")
		if n != size {
			b.Fatalf("fetched %d bytes of %d", n, size)
		}
		fetch = append(fetch, t.Seconds())
		_, t, _ = get(a, "")
		local = append(local, t.Seconds())
	}
	fm, lm := median3(fetch), median3(local)
	fmt.Printf("\n1 GiB, household to household over loopback (medians of three):\n")
	fmt.Printf("  fetching household's /api/file  %6.0f MB/s\n", size/fm/1e6)
	if _, err := kubotest.Find(); err == nil {
		var kubo []float64
		for range 3 {
			bps, _ := kubotest.BitswapThroughput(b, p)
			kubo = append(kubo, bps)
		}
		k := median3(kubo)
		fmt.Printf("  Kubo to Kubo bitswap            %6.0f MB/s   fetch / Kubo: %.2f\n", k/1e6, size/fm/k)
		b.ReportMetric(size/fm/k, "fetch/kubo")
	} else {
		fmt.Printf("  Kubo to Kubo bitswap            (no Kubo 0.42: scripts/kubo.sh builds it)\n")
	}
	fmt.Printf("  holder's own /api/file          %6.0f MB/s   fetch / local: %.2f\n", size/lm/1e6, lm/fm)
	fmt.Printf("  first byte, index cold          %6.0f ms\n", ms(cold))
	fmt.Printf("  first byte, index present       %6.0f ms\n", ms(warm))
	fmt.Printf("  first byte of a Range at 512 MiB %5.0f ms\n\n", ms(seek))
	b.ReportMetric(size/fm/1e6, "fetch-MB/s")
	b.ReportMetric(ms(cold), "cold-ttfb-ms")
	b.ReportMetric(ms(warm), "ttfb-ms")
	b.ReportMetric(ms(seek), "seek-ttfb-ms")
}

// writeRandom writes size random bytes to p, an hour old (settled).
func writeRandom(b testing.TB, p string, size int) {
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.NewChaCha8([32]byte{1})
	buf := make([]byte, 1<<20)
	for range size / len(buf) {
		r.Read(buf)
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
	f.Close()
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
}
