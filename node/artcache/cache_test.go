package artcache

import (
	"bytes"
	"errors"
	"fmt"
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

// BenchmarkCache_HitRate: a page's grid of 50 peers' posters asked
// twice (the second time all hits), and a library of 200 posters browsed
// twice through a cache that holds 100 of them (an LRU under its cap: a
// scan larger than the cap misses every time). It reports hits/requests.
func BenchmarkCache_HitRate(b *testing.B) {
	const size = 30 << 10 // a poster of 30 KiB
	for _, bc := range []struct {
		name          string
		posters, held int
	}{{"grid50_twice", 50, 200}, {"scan200_cap100", 200, 100}} {
		b.Run(bc.name, func(b *testing.B) {
			imgs := make([][]byte, bc.posters)
			ids := make([]string, bc.posters)
			for i := range imgs {
				imgs[i] = image(i, size)
				ids[i] = cidOf(b, imgs[i])
			}
			var st Stats
			for b.Loop() {
				c, err := Open(b.TempDir(), int64(bc.held*size))
				if err != nil {
					b.Fatal(err)
				}
				for range 2 {
					for i, id := range ids {
						if _, ok := c.Path(id); !ok {
							if _, err := c.Put(id, bytes.NewReader(imgs[i]), nil); err != nil {
								b.Fatal(err)
							}
						}
					}
				}
				st = c.Stats()
			}
			b.ReportMetric(float64(st.Hits)/float64(st.Requests), "hits/request")
			b.ReportMetric(float64(st.Requests), "requests")
		})
	}
}
