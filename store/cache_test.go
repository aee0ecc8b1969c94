package store_test

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// openCached opens a store with a document cache on a Redis of its own,
// and a raw client of that Redis for an outside writer.
func openCached(t *testing.T, size int) (*store.Store, *redis.Client) {
	t.Helper()
	srv := storetest.Server(t)
	s := must[*store.Store](t)(store.Open(ctx, store.Options{URL: srv.URL(), Logger: storetest.Logger(t), DocCache: size}))
	t.Cleanup(func() { s.Close() })
	opt := must[*redis.Options](t)(redis.ParseURL(srv.URL()))
	raw := redis.NewClient(opt)
	t.Cleanup(func() { raw.Close() })
	// The cache serves once its subscription is in place.
	probe := ingest(t, s, stat("/l/probe.mkv", 1), content{9000, 9000})
	c := must[store.Hashes](t)(s.Own(ctx, probe.Root)).SHA256
	waiting.For(t, "the cache to serve", func() bool {
		resolve(t, s, c)
		before := s.CacheStats().Hits
		resolve(t, s, c)
		return s.CacheStats().Hits > before
	})
	return s, raw
}

// A read never returns a document older than a write that finished
// before the read started, whether the write was the node's own (fields,
// ingest of other files going on at the same time) or an outside
// writer's; and an outside writer's change is seen without any own write.
func TestDocCache_Coherent(t *testing.T) {
	s, raw := openCached(t, 64)
	a := ingest(t, s, stat("/l/a.mkv", 10), content{1, 1})
	b := ingest(t, s, stat("/l/b.mkv", 20), content{2, 2})
	ca, cb := content{1, 1}.hashes().SHA256, content{2, 2}.hashes().SHA256
	// The outside writer writes a field the root lists (an unlisted one
	// is not part of the document until Follow or Repair lists it).
	must[int](t)(s.SetFields(ctx, b.Root, map[string]string{"counter": "0"}))
	var ownDone, extDone atomic.Int64 // the last value whose write returned
	stop := make(chan struct{})
	var wg sync.WaitGroup
	fail := make(chan string, 8)
	wg.Add(3)
	var rd sync.WaitGroup
	rd.Add(1)
	go func() { // the node's own writes
		defer wg.Done()
		for i := int64(1); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.SetFields(ctx, a.Root, map[string]string{"counter": strconv.FormatInt(i, 10)}); err != nil {
				fail <- err.Error()
				return
			}
			ownDone.Store(i)
			time.Sleep(time.Duration(i%3) * time.Millisecond) // reads hit between writes
		}
	}()
	go func() { // an outside writer on the same Redis
		defer wg.Done()
		for i := int64(1); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := raw.Set(ctx, "file:"+string(b.Root)+"/counter", strconv.FormatInt(i, 10), 0).Err(); err != nil {
				fail <- err.Error()
				return
			}
			extDone.Store(i)
			time.Sleep(time.Millisecond)
		}
	}()
	go func() { // an ingest of other files going on
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.IngestBatch(ctx, []store.IngestItem{{File: stat(fmt.Sprintf("/l/other-%d.mkv", i), int64(100+i)), Hashes: content{100 + i, 100 + i}.hashes()}}); err != nil {
				fail <- err.Error()
				return
			}
			time.Sleep(3 * time.Millisecond)
		}
	}()
	go func() { // readers of the own writes
		defer rd.Done()
		for n := 0; n < 3000; n++ {
			w := ownDone.Load()
			d := must[store.Document](t)(s.DocumentByCID(ctx, ca))
			if got, _ := strconv.ParseInt(d.Fields["counter"], 10, 64); got < w {
				fail <- fmt.Sprintf("read counter %d after the write of %d had returned", got, w)
				return
			}
		}
	}()
	// Outside writes show: each value read is eventually the latest.
	waiting.For(t, "the outside writer to start", func() bool { return extDone.Load() > 0 })
	for n := 0; n < 20; n++ {
		want := extDone.Load()
		waiting.For(t, "an outside write to show", func() bool {
			d := must[store.Document](t)(s.DocumentByCID(ctx, cb))
			got, _ := strconv.ParseInt(d.Fields["counter"], 10, 64)
			return got >= want
		})
	}
	// Let the readers finish, then stop the writers.
	rd.Wait()
	close(stop)
	wg.Wait()
	close(fail)
	for f := range fail {
		t.Error(f)
	}
	st := s.CacheStats()
	if st.Hits == 0 {
		t.Error("no read came from the cache: the test proves nothing")
	}
	if st.Entries > 64 {
		t.Errorf("the cache holds %d documents, more than its 64", st.Entries)
	}
	// The outside writer's field is listed once Follow (not run here)
	// or Repair sees it.
	must[store.RepairReport](t)(s.Repair(ctx, false))
	mustCheck(t, s)
}

// With nothing written, documents come from the cache; an outside
// writer's DEL of a field and a repointed alias show; the cache stays
// within its size.
func TestDocCache_HitsAndOutsideChanges(t *testing.T) {
	s, raw := openCached(t, 8)
	r := ingest(t, s, stat("/l/a.mkv", 10), content{1, 1})
	c := content{1, 1}.hashes().SHA256
	must[int](t)(s.SetFields(ctx, r.Root, map[string]string{"rating": "7"}))
	// A read from the cache: the write's own notification, which may
	// come after the first read kept the document, has been applied.
	// While the notifications lag (a busy machine), reads go to Redis and
	// count neither as hits nor as misses.
	read := func() {
		if d := resolve(t, s, c); d.Fields["rating"] != "7" {
			t.Fatalf("rating %q", d.Fields["rating"])
		}
	}
	hit := func(n uint64) func() bool {
		from := s.CacheStats().Hits
		return func() bool { read(); return s.CacheStats().Hits-from >= n }
	}
	waiting.For(t, "a read from the cache", hit(1))
	before := s.CacheStats()
	waiting.For(t, "ten reads from the cache", hit(10))
	if got := s.CacheStats().Misses - before.Misses; got != 0 {
		t.Errorf("%d reads missed the cache with nothing written", got)
	}
	if err := raw.Del(ctx, "file:"+string(r.Root)+"/rating").Err(); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the DEL to show", func() bool { _, ok := resolve(t, s, c).Fields["rating"]; return !ok })
	// A read of a document must not change what a later read returns.
	d := resolve(t, s, c)
	d.Fields["title"] = "changed by the caller"
	if resolve(t, s, c).Fields["title"] != "" {
		t.Error("a caller's change to a document reached the cache")
	}
	for i := 0; i < 40; i++ {
		ingest(t, s, stat(fmt.Sprintf("/l/f%d.mkv", i), int64(100+i)), content{100 + i, 100 + i})
		resolve(t, s, content{100 + i, 100 + i}.hashes().SHA256)
	}
	if n := s.CacheStats().Entries; n > 8 {
		t.Errorf("%d documents cached, the size is 8", n)
	}
}

// Reads of one cached document share its memo; a change of the document
// leaves the next read a fresh one.
func TestDocCache_Memo(t *testing.T) {
	s, _ := openCached(t, 8)
	r := ingest(t, s, stat("/l/a.mkv", 10), content{1, 1})
	c := content{1, 1}.hashes().SHA256
	waiting.For(t, "the document to be cached", func() bool { return resolve(t, s, c).Memo() != nil })
	m := resolve(t, s, c).Memo()
	m.Store([]byte("encoded"))
	if got := resolve(t, s, c).Memo().Load(); string(got) != "encoded" {
		t.Fatalf("the next read's memo holds %v", got)
	}
	must[int](t)(s.SetFields(ctx, r.Root, map[string]string{"rating": "7"}))
	waiting.For(t, "the changed document to be cached", func() bool { return resolve(t, s, c).Memo() != nil })
	if got := resolve(t, s, c).Memo().Load(); got != nil {
		t.Errorf("after a change the memo still holds %v", got)
	}
}

// The document cache keeps documents packed; one read back is the
// document kept, nil and empty told apart.
func TestDocCache_PackRoundTrip(t *testing.T) {
	long := strings.Repeat("é/\x00x", 100) // lengths past one uvarint byte, NUL inside
	tests := []store.Document{
		{},
		{Root: "01ARZ3NDEKTSV4RRFFQ69G5FAV", Fields: map[string]string{}, CIDs: []string{}, Duplicates: []string{}, Peers: []string{}, Learned: map[string][]string{}},
		{Root: "01ARZ3NDEKTSV4RRFFQ69G5FAV",
			Fields:     map[string]string{"filePath": "/lib/a.mkv", "titles/eng": "A", "": "", long: long},
			CIDs:       []string{"bafkreia", "bafkreib"},
			Duplicates: []string{"/lib/b.mkv", long}, DuplicateCount: 1 << 40,
			Peers:   []string{"12D3KooWa"},
			Learned: map[string][]string{"bafkreic": {"12D3KooWa", "12D3KooWb"}, "bafkreid": nil, "bafkreie": {}}},
		{Root: "r", DuplicateCount: -1},
	}
	for i, d := range tests {
		if got := store.PackRoundTrip(d); !reflect.DeepEqual(got, d) {
			t.Errorf("%d: read back %#v\nkept %#v", i, got, d)
		}
	}
}
