package search

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/metamesh/node/store"
)

// syncBuf is a log written and read at once.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// filledIndex writes n roots titled "lighthouse wordI" into an index in
// dir and closes it.
func filledIndex(t *testing.T, dir string, n int) {
	t.Helper()
	ti, err := OpenTextIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := ti.Put(store.RootID(fmt.Sprint("r", i)), titled("lighthouse", fmt.Sprint("word", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := ti.Close(); err != nil {
		t.Fatal(err)
	}
}

// flipSegments inverts 40 bytes of every segment at frac of its length;
// fixCRC writes the checksum of what is left, so that bleve reads it.
func flipSegments(t *testing.T, dir string, frac float64, fixCRC bool) {
	t.Helper()
	zaps, _ := filepath.Glob(filepath.Join(dir, "index", "store", "*.zap"))
	if len(zaps) == 0 {
		t.Fatal("no segment")
	}
	for _, z := range zaps {
		b, err := os.ReadFile(z)
		if err != nil {
			t.Fatal(err)
		}
		at := int(float64(len(b)) * frac)
		for i := at; i < at+40; i++ {
			b[i] ^= 0xff
		}
		if fixCRC {
			binary.BigEndian.PutUint32(b[len(b)-4:], crc32.ChecksumIEEE(b[:len(b)-4]))
		}
		if err := os.WriteFile(z, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// A damaged index on disk is moved aside, said at WARN, and made anew
// (the indexer's sweep fills it); never a panic.
func TestTextIndex_Damaged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
	}{
		{"flipped bytes in a segment", func(t *testing.T, dir string) { flipSegments(t, dir, 0.5, false) }},
		{"truncated segment", func(t *testing.T, dir string) {
			zaps, _ := filepath.Glob(filepath.Join(dir, "index", "store", "*.zap"))
			for _, z := range zaps {
				if err := os.Truncate(z, 100); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"garbled index_meta.json", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "index", "index_meta.json"), []byte("{garbled"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "search")
			filledIndex(t, dir, 200)
			tc.damage(t, dir)
			ti, err := OpenTextIndex(dir)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer ti.Close()
			var logs syncBuf
			ti.setIndexer(slog.New(slog.NewTextHandler(&logs, nil)), nil)
			moved, _ := filepath.Glob(dir + ".corrupt-*")
			if len(moved) != 1 {
				t.Fatalf("moved aside: %v, want one", moved)
			}
			if l := logs.String(); !strings.Contains(l, `level=WARN msg="search index: does not open; moved aside, built anew from the store"`) ||
				!strings.Contains(l, "movedTo="+moved[0]) {
				t.Errorf("log: %s", l)
			}
			if got := roots(t, ti, "lighthouse"); got != nil {
				t.Errorf("the index made anew holds %v", got)
			}
			ti.Put("r1", titled("lighthouse"))
			ti.Flush()
			if got := roots(t, ti, "lighthouse"); !slices.Equal(got, []store.RootID{"r1"}) {
				t.Errorf("after a put: %v", got)
			}
		})
	}
}

// A segment damaged while the index is open makes bleve panic: the
// search fails, the index is moved aside and made anew, and the indexer
// is asked to sweep into it.
func TestTextIndex_DamagedWhileRunning(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "search")
	filledIndex(t, dir, 200)
	ti, err := OpenTextIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ti.Close()
	var logs syncBuf
	swept := 0
	ti.setIndexer(slog.New(slog.NewTextHandler(&logs, nil)), func() { swept++ })
	flipSegments(t, dir, 0.05, true)
	for i := range 200 {
		if _, err := ti.Search(fmt.Sprint("word", i), 10, ""); err != nil {
			break
		}
	}
	if swept != 1 {
		t.Fatalf("swept %d times, want 1; log: %s", swept, logs.String())
	}
	moved, _ := filepath.Glob(dir + ".corrupt-*")
	if len(moved) != 1 || !strings.Contains(logs.String(), `level=WARN msg="search index: damaged while running; moved aside, built anew from the store"`) {
		t.Errorf("moved aside: %v; log: %s", moved, logs.String())
	}
	ti.Put("r1", titled("lighthouse"))
	ti.Flush()
	if got := roots(t, ti, "lighthouse"); !slices.Equal(got, []store.RootID{"r1"}) {
		t.Errorf("after a put: %v", got)
	}
}
