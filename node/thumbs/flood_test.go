package thumbs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/metamesh/node/internal/peakmem"
)

// flood asks c for the thumbnails of n images at once, each of its own
// CID and the bytes src, and returns the first error other than want.
func flood(c *Cache, n int, src []byte, want error) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(src)), nil }
			if _, err := c.Get(context.Background(), fmt.Sprintf("bafkflood%03d", i), 320, open); err != nil && !errors.Is(err, want) {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// BenchmarkCache_Flood: 36 page views asking at once for the thumbnails
// of 36 large posters (2400 × 3600 16-bit PNG, 66 MiB each decoded),
// against one asked alone, in peak heap and peak RSS; and 36 at once of
// the 7071 × 7071 16-bit PNG that is refused from its header.
func BenchmarkCache_Flood(b *testing.B) {
	big := png16(b, 2400, 3600, [4]uint16{0x4000, 0x8000, 0xc000, 0xffff})
	bomb := png16(b, 7071, 7071, [4]uint16{0, 0, 0, 0xffff})
	const n = 36
	for b.Loop() {
		var one, many, bombs [2]uint64
		var err error
		one[0], one[1] = peakmem.Measure(func() { err = flood(mustOpen(b), 1, big, nil) })
		if err != nil {
			b.Fatal(err)
		}
		many[0], many[1] = peakmem.Measure(func() { err = flood(mustOpen(b), n, big, nil) })
		if err != nil {
			b.Fatal(err)
		}
		bombs[0], bombs[1] = peakmem.Measure(func() { err = flood(mustOpen(b), n, bomb, ErrTooLarge) })
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(one[0])/(1<<20), "heap-MiB-1")
		b.ReportMetric(float64(many[0])/(1<<20), "heap-MiB-36")
		b.ReportMetric(float64(many[0])/float64(one[0]), "heap-36/1")
		b.ReportMetric(float64(one[1])/(1<<20), "rss-MiB-1")
		b.ReportMetric(float64(many[1])/(1<<20), "rss-MiB-36")
		b.ReportMetric(float64(many[1])/float64(max(one[1], 1)), "rss-36/1")
		b.ReportMetric(float64(bombs[1])/(1<<20), "rss-MiB-36-bombs")
	}
}

func mustOpen(tb testing.TB) *Cache {
	c, err := Open(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
