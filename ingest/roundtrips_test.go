package ingest_test

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// countStore is the real store that records, for each path, the calls
// of the file lifecycle that name it: each is one round trip to Redis.
type countStore struct {
	ingest.Store
	mu    sync.Mutex
	calls map[string][]string
}

func (c *countStore) add(method, path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[path] = append(c.calls[path], method)
}

// take returns the calls that named path since the last take.
func (c *countStore) take(path string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls[path]
	delete(c.calls, path)
	return out
}

func (c *countStore) Path(ctx context.Context, p string) (store.PathState, error) {
	c.add("Path", p)
	return c.Store.Path(ctx, p)
}

func (c *countStore) Paths(ctx context.Context, ps []string) (map[string]store.PathState, error) {
	for _, p := range ps {
		c.add("Paths", p)
	}
	return c.Store.Paths(ctx, ps)
}

func (c *countStore) Arrive(ctx context.Context, f store.FileStat, mid string) (store.Outcome, error) {
	c.add("Arrive", f.Path)
	return c.Store.Arrive(ctx, f, mid)
}

func (c *countStore) Ingest(ctx context.Context, f store.FileStat, h store.Hashes, m store.Meta) (store.Outcome, int, error) {
	c.add("Ingest", f.Path)
	return c.Store.Ingest(ctx, f, h, m)
}

func (c *countStore) IngestBatch(ctx context.Context, items []store.IngestItem) ([]store.IngestResult, error) {
	for _, it := range items {
		c.add("IngestBatch", it.File.Path)
	}
	return c.Store.IngestBatch(ctx, items)
}

func (c *countStore) Change(ctx context.Context, f store.FileStat, h store.Hashes, m store.Meta) (store.Outcome, error) {
	c.add("Change", f.Path)
	return c.Store.Change(ctx, f, h, m)
}

func (c *countStore) SetExtracted(ctx context.Context, p string, m store.Meta) (store.Outcome, int, error) {
	c.add("SetExtracted", p)
	return c.Store.SetExtracted(ctx, p, m)
}

func (c *countStore) RemovePath(ctx context.Context, p string) (store.Outcome, error) {
	c.add("RemovePath", p)
	return c.Store.RemovePath(ctx, p)
}

// A new or changed file reaches the store in at most two round trips,
// watched one at a time: the calls that name it, in order.
func TestIngest_RoundTripsPerFile(t *testing.T) {
	s := storetest.New(t)
	c := &countStore{Store: s, calls: map[string][]string{}}
	l := newLib(t)
	in := watchWith(t, c, testConfig(l))
	settle := func(p string, size int64) {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		waiting.For(t, p+" stored as it is", func() bool {
			st, err := s.Path(bg, p)
			return err == nil && st.Hashed && st.Size == size && st.MtimeNs == fi.ModTime().UnixNano()
		})
		idle(t, in)
	}
	// Another mtime, whole seconds away from the last (a file system's
	// mtime may be coarse).
	touch := func(p string) {
		t.Helper()
		at := time.Now().Add(time.Hour).Truncate(time.Second)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name string
		do   func() (path string, size int64)
		want []string
	}{
		{"a new small file", func() (string, int64) { return l.write("notes/a.txt", randBytes(t, 4<<10)), 4 << 10 },
			[]string{"Path", "Ingest"}},
		{"a new video", func() (string, int64) { return l.write("Films/Heat.1995.mkv", randBytes(t, 70<<10)), 70 << 10 },
			[]string{"Arrive", "Ingest"}},
		{"a new large file", func() (string, int64) { return l.write("big.bin", randBytes(t, 3<<20)), 3 << 20 },
			[]string{"Arrive", "Ingest"}},
		{"a small file changed", func() (string, int64) { return l.write("notes/a.txt", randBytes(t, 5<<10)), 5 << 10 },
			[]string{"Path", "Change"}},
		{"a small file touched", func() (string, int64) { p := l.path("notes/a.txt"); touch(p); return p, 5 << 10 },
			[]string{"Path", "Change"}},
		{"a video changed", func() (string, int64) { return l.write("Films/Heat.1995.mkv", randBytes(t, 71<<10)), 71 << 10 },
			[]string{"Arrive", "Change"}},
		{"a large file changed", func() (string, int64) { return l.write("big.bin", randBytes(t, 3<<20+1)), 3<<20 + 1 },
			[]string{"Arrive", "Change"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, size := tt.do()
			settle(p, size)
			if got := c.take(p); !slices.Equal(got, tt.want) {
				t.Errorf("calls naming %s: %v, want %v", p, got, tt.want)
			}
		})
	}
	// The changed files' metadata came with their changes.
	for _, p := range []string{l.path("notes/a.txt"), l.path("Films/Heat.1995.mkv"), l.path("big.bin")} {
		if st, err := s.Path(bg, p); err != nil || !st.Primary || st.Extracted < 0 {
			t.Errorf("%s: %+v, %v: want a primary with its metadata extracted", p, st, err)
		}
	}
	if _, d := docOf(t, s, l.path("Films/Heat.1995.mkv")); d.Fields["movieYear"] != "1995" {
		t.Errorf("the changed video's fields: %v", d.Fields)
	}
	mustCheck(t, s)
}

// A rescan that extracts an unchanged sidecar again (its metadata older
// than the extractors) does not write its video's links again: the
// sidecar did not change.
func TestScan_UnchangedSidecarRelinksNothing(t *testing.T) {
	s, raw := storeWithRaw(t)
	l := newLib(t)
	video := l.write("Movies/Heat (1995)/Heat.1995.mkv", randBytes(t, 70<<10))
	sub := l.write("Movies/Heat (1995)/Heat.1995.en.srt", []byte("1\n00:00:01,000 --> 00:00:02,000\nHi\n"))
	cfg := testConfig(l)
	if _, err := ingest.Scan(bg, s, cfg, time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	if _, d := docOf(t, s, video); d.Fields["subtitles/eng/0"] == "" {
		t.Fatalf("the first scan did not link the subtitle: %v", d.Fields)
	}
	// What an older release left: the subtitle's extraction unversioned.
	storetest.SetPathField(t, raw, sub, "xv", "")

	c := &countStore{Store: s, calls: map[string][]string{}}
	if _, err := ingest.Scan(bg, c, cfg, time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	if got := c.take(sub); !slices.Contains(got, "SetExtracted") {
		t.Errorf("the subtitle was not extracted again: %v", got)
	}
	if got := c.take(video); slices.Contains(got, "SetExtracted") {
		t.Errorf("the unchanged subtitle relinked its video: %v", got)
	}
	if st, _ := docOf(t, s, sub); st.Extracted < 0 {
		t.Errorf("the subtitle's extraction: %+v", st)
	}
}
