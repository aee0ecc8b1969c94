package node_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/store/storetest"
)

// BenchmarkFileThroughput serves a page-cached 1 GiB file through
// GET /api/file/<cid> and reads it with cat > /dev/null, in the same run:
// the API's throughput as a ratio of cat's.
func BenchmarkFileThroughput(b *testing.B) {
	const size = 1 << 30
	lib, _ := filepath.EvalSymlinks(b.TempDir())
	p := filepath.Join(lib, "big.bin")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	for i := 0; i < size/len(buf); i++ {
		buf[0], buf[1], buf[2] = byte(i), byte(i>>8), 7
		f.Write(buf)
	}
	f.Close()
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	srv := storetest.Server(b)
	n, err := node.New(node.Config{
		Libraries: []string{lib}, RedisURL: srv.URL(), APIAddr: "127.0.0.1:0", DataDir: storetest.Dir(b),
		P2P: p2p.Config{Listen: []string{"/ip4/127.0.0.1/tcp/0"}}, Logger: storetest.Logger(b),
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := n.Ingester().WaitIdle(ctx); err != nil {
		b.Fatal(err)
	}
	h, err := ingest.HashFile(ctx, p) // also warms the page cache
	if err != nil {
		b.Fatal(err)
	}
	timeCat := func() float64 {
		start := time.Now()
		if out, err := exec.Command("sh", "-c", "cat '"+p+"' > /dev/null").CombinedOutput(); err != nil {
			b.Fatalf("cat: %v %s", err, out)
		}
		return time.Since(start).Seconds()
	}
	timeAPI := func() float64 {
		start := time.Now()
		resp, err := http.Get("http://" + n.APIAddr() + "/api/file/" + h.Canonical)
		if err != nil {
			b.Fatal(err)
		}
		got, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || got != size {
			b.Fatalf("GET /api/file: %d, %d bytes", resp.StatusCode, got)
		}
		return time.Since(start).Seconds()
	}
	var cat, api []float64
	for i := 0; i < 3; i++ {
		cat = append(cat, timeCat())
		api = append(api, timeAPI())
	}
	c, a := median3(cat), median3(api)
	fmt.Printf("\n1 GiB, page-cached, medians of three interleaved runs:\n")
	fmt.Printf("  cat > /dev/null      %6.0f MB/s\n", size/c/1e6)
	fmt.Printf("  GET /api/file/<cid>  %6.0f MB/s   api / cat: %.2f\n\n", size/a/1e6, c/a)
	b.ReportMetric(size/a/1e6, "api-MB/s")
	b.ReportMetric(c/a, "api/cat")
}

func median3(xs []float64) float64 {
	a, b, c := xs[0], xs[1], xs[2]
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	if a > b {
		b = a
	}
	return b
}
