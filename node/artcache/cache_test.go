package artcache

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
)

// cidOf is the raw sha2-256 CID of b, as a name to keep b under.
func cidOf(tb testing.TB, b []byte) string {
	tb.Helper()
	h, err := multihash.Sum(b, multihash.SHA2_256, -1)
	if err != nil {
		tb.Fatal(err)
	}
	return cid.NewCidV1(cid.Raw, h).String()
}

func image(i, size int) []byte {
	b := bytes.Repeat([]byte{byte(i)}, size)
	copy(b, fmt.Sprintf("image %d", i))
	return b
}

func TestCache_PutFoundAgainAfterRestart(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	b := image(1, 1000)
	id := cidOf(t, b)
	if _, ok := c.Path(id); ok {
		t.Fatal("an empty cache holds an image")
	}
	p, err := c.Put(id, bytes.NewReader(b), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, b) {
		t.Fatalf("kept %d bytes, want %d", len(got), len(b))
	}
	os.WriteFile(filepath.Join(dir, ".art-leftover"), []byte("x"), 0o600)
	c, err = Open(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := c.Path(id); !ok || got != p {
		t.Errorf("after a restart: %q %v, want %q", got, ok, p)
	}
	if _, err := os.Stat(filepath.Join(dir, ".art-leftover")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a leftover temporary file survived the scan: %v", err)
	}
	if st := c.Stats(); st.Files != 1 || st.Bytes != 1000 || st.Requests != 1 || st.Hits != 1 {
		t.Errorf("stats %+v", st)
	}
}

// The cap evicts the least recently used image, at once and at the next
// start under a smaller cap.
func TestCache_CapEvictsLeastRecentlyUsed(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir, 3000)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 3 {
		b := image(i, 1000)
		ids = append(ids, cidOf(t, b))
		if _, err := c.Put(ids[i], bytes.NewReader(b), nil); err != nil {
			t.Fatal(err)
		}
	}
	c.Path(ids[0]) // 1 is now the least recently used
	b := image(3, 1000)
	if _, err := c.Put(cidOf(t, b), bytes.NewReader(b), nil); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false, true} {
		if _, ok := c.Path(ids[i]); ok != want {
			t.Errorf("image %d held: %v, want %v", i, ok, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ids[1])); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the evicted image's file: %v", err)
	}
	if st := c.Stats(); st.Bytes != 3000 || st.Files != 3 {
		t.Errorf("stats %+v, want 3 files of 3000 bytes", st)
	}
	c, err = Open(dir, 1500)
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Files != 1 || st.Bytes != 1000 {
		t.Errorf("reopened under 1500 bytes: %+v, want 1 file", st)
	}
}

// An image beyond MaxImage, and one its check refuses, are not kept.
func TestCache_RefusesOversizedAndUnchecked(t *testing.T) {
	c, err := Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	big := image(1, 6<<20)
	if _, err := c.Put(cidOf(t, big), bytes.NewReader(big), nil); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a 6 MiB image: %v, want ErrTooLarge", err)
	}
	b := image(2, 100)
	wrong := errors.New("not the bytes of the CID")
	if _, err := c.Put(cidOf(t, b), bytes.NewReader(b), func([]byte) error { return wrong }); !errors.Is(err, wrong) {
		t.Errorf("a refused check: %v", err)
	}
	if _, err := c.Put("../etc", bytes.NewReader(b), nil); err == nil {
		t.Error("a name that is no CID was kept")
	}
	if st := c.Stats(); st.Files != 0 || st.Bytes != 0 {
		t.Errorf("kept %+v, want nothing", st)
	}
}

// BenchmarkCache_HitRate reports hits/requests of the art cache for
// three ways of asking, each under a cap and, as the baseline measured in
// the same run, without one (a cache that holds every poster asked):
//
//   - grid: a page's grid of 50 peers' posters asked twice (the second
//     time all hits);
//   - scan: a list of 200 posters browsed twice through a cache that
//     holds 100 of them (an LRU's worst case: every request misses);
//   - browse: 2,000 requests over 500 posters, some asked far more often
//     than others (Zipf, s = 1.1), through a cache that holds 100.
func BenchmarkCache_HitRate(b *testing.B) {
	const size = 30 << 10 // a poster of 30 KiB
	zipf := func(n, count int) []int {
		z := rand.NewZipf(rand.New(rand.NewPCG(1, 2)), 1.1, 1, uint64(n-1))
		out := make([]int, count)
		for i := range out {
			out[i] = int(z.Uint64())
		}
		return out
	}
	seq := func(n, times int) []int {
		var out []int
		for range times {
			for i := range n {
				out = append(out, i)
			}
		}
		return out
	}
	for _, bc := range []struct {
		name          string
		posters, held int
		asks          []int
	}{
		{"grid50_twice", 50, 100, seq(50, 2)},
		{"scan200_cap100", 200, 100, seq(200, 2)},
		{"browse500_zipf_cap100", 500, 100, zipf(500, 2000)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			imgs := make([][]byte, bc.posters)
			ids := make([]string, bc.posters)
			for i := range imgs {
				imgs[i] = image(i, size)
				ids[i] = cidOf(b, imgs[i])
			}
			run := func(held int) Stats {
				c, err := Open(b.TempDir(), int64(held*size))
				if err != nil {
					b.Fatal(err)
				}
				for _, i := range bc.asks {
					if _, ok := c.Path(ids[i]); !ok {
						if _, err := c.Put(ids[i], bytes.NewReader(imgs[i]), nil); err != nil {
							b.Fatal(err)
						}
					}
				}
				return c.Stats()
			}
			var capped, all Stats
			for b.Loop() {
				capped, all = run(bc.held), run(bc.posters)
			}
			rate := func(s Stats) float64 { return float64(s.Hits) / float64(s.Requests) }
			b.ReportMetric(rate(capped), "hits/request")
			b.ReportMetric(rate(all), "uncapped_hits/request")
			b.ReportMetric(float64(capped.Requests), "requests")
		})
	}
}

// FuzzPut: whatever name and bytes a peer's answer and a request bring,
// the cache keeps a file only under a CID, inside its directory, and
// never more than MaxImage bytes.
func FuzzPut(f *testing.F) {
	f.Add("bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku", []byte("poster"))
	f.Add("../../etc/passwd", []byte("x"))
	f.Add("", []byte{})
	f.Add("QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG", bytes.Repeat([]byte{0xff}, 1024))
	dir := f.TempDir()
	c, err := Open(dir, 1<<20)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id string, data []byte) {
		p, err := c.Put(id, bytes.NewReader(data), nil)
		if err != nil {
			return
		}
		if _, err := cid.Decode(id); err != nil {
			t.Fatalf("kept %q, which is no CID", id)
		}
		if filepath.Dir(p) != dir || filepath.Base(p) != id {
			t.Fatalf("kept %q at %s, outside %s", id, p, dir)
		}
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("kept %d bytes (%v), want %d", len(got), err, len(data))
		}
		if got, ok := c.Path(id); !ok || got != p {
			t.Fatalf("Path(%q) = %q %v after a Put", id, got, ok)
		}
	})
}
