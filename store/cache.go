package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// docCache keeps documents read by DocumentByCID, so a hot GET
// /api/meta is a map lookup. It is coherent in two ways:
//
//   - The node's own writes: every write script bumps own when it ends,
//     and an entry is valid only for the own it was read under. A read
//     that starts after a write returned never sees what the write
//     replaced (read-your-writes); while writes are under way (a scan,
//     peers' merges) the cache simply misses.
//   - Outside writers (the open schema: file:<root>/… and cid:<cid>
//     STRING keys): keyspace notifications drop the entries of the root
//     or CID a key names as they arrive, within milliseconds. Until the
//     subscription is in place, and whenever it is lost, nothing is
//     served from the cache and it starts empty again. A beat published
//     every beatEvery on the same subscription measures how far behind
//     the notifications are: while they are more than maxLag late (a
//     burst of writes the watcher has not caught up with), or no beat
//     came for beatGone, nothing is served either, so an outside
//     writer's change shows within maxLag even under load.
//
// A read's result is kept only if neither counter moved while it ran, so
// an entry is never older than a write that finished before it was kept.
// At most max entries are kept; a full cache drops an arbitrary one.
type docCache struct {
	max int

	own  atomic.Uint64 // the node's own writes finished
	ext  atomic.Uint64 // outside writers' notifications applied
	live atomic.Bool   // the notification subscription is in place
	// beat is when the last beat arrived (Unix ns), lagging whether it
	// was more than maxLag late.
	beat    atomic.Int64
	lagging atomic.Bool

	mu     sync.Mutex
	byCID  map[string]*cachedDoc
	byRoot map[RootID][]string // the cached CIDs of a root

	hits, misses atomic.Uint64
}

// cachedDoc is one kept document, packed (packDocument): one pointer-free
// buffer the garbage collector need not go through, where the document's
// maps and strings were some 60 objects for it to scan on every cycle.
type cachedDoc struct {
	root   RootID
	packed []byte
	memo   *Memo
	own    uint64
}

// cacheTicket is what a read noted before it went to Redis.
type cacheTicket struct {
	own, ext uint64
	ok       bool
}

// The beat of the notification subscription.
const (
	beatEvery = 50 * time.Millisecond
	maxLag    = 100 * time.Millisecond
	beatGone  = 500 * time.Millisecond
)

// serving reports whether the cache may answer now.
func (c *docCache) serving() bool {
	return c.live.Load() && !c.lagging.Load() && time.Since(time.Unix(0, c.beat.Load())) < beatGone
}

func newDocCache(max int) *docCache {
	return &docCache{max: max, byCID: map[string]*cachedDoc{}, byRoot: map[RootID][]string{}}
}

// wrote records that one of the node's own writes ended.
func (c *docCache) wrote() {
	if c != nil {
		c.own.Add(1)
	}
}

// get returns the cached document of cid, a copy the caller may change.
func (c *docCache) get(cid string) (Document, bool) {
	if c == nil || !c.serving() {
		return Document{}, false
	}
	own := c.own.Load()
	c.mu.Lock()
	e := c.byCID[cid]
	if e != nil && e.own != own {
		c.dropLocked(cid, e.root)
		e = nil
	}
	c.mu.Unlock()
	if e == nil {
		c.misses.Add(1)
		return Document{}, false
	}
	c.hits.Add(1)
	d := unpackDocument(e.packed)
	d.memo = e.memo
	return d, true
}

// memo returns the memo of cid's cached document, without copying the
// document; nil when it is not cached.
func (c *docCache) memo(cid string) *Memo {
	if c == nil || !c.serving() {
		return nil
	}
	own := c.own.Load()
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byCID[cid]
	if e == nil || e.own != own {
		return nil
	}
	c.hits.Add(1)
	return e.memo
}

// CachedMemo is the memo of cid's document when the cache holds it
// (Document.Memo), read without reading or copying the document: what a
// reader derived from it earlier, nil otherwise.
func (s *Store) CachedMemo(cid string) *Memo { return s.cache.memo(cid) }

// ticket notes the counters before a read goes to Redis.
func (c *docCache) ticket() cacheTicket {
	if c == nil {
		return cacheTicket{}
	}
	return cacheTicket{own: c.own.Load(), ext: c.ext.Load(), ok: c.serving()}
}

// put keeps d, read for cid under t, unless anything was written since,
// and returns the memo of what it kept (nil for nothing kept).
func (c *docCache) put(t cacheTicket, cid string, d Document) *Memo {
	if c == nil || !t.ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live.Load() || c.own.Load() != t.own || c.ext.Load() != t.ext {
		return nil
	}
	if old := c.byCID[cid]; old != nil {
		c.dropLocked(cid, old.root)
	}
	for len(c.byCID) >= c.max {
		for k, e := range c.byCID {
			c.dropLocked(k, e.root)
			break
		}
	}
	e := &cachedDoc{root: d.Root, packed: packDocument(d), memo: &Memo{}, own: t.own}
	c.byCID[cid] = e
	c.byRoot[d.Root] = append(c.byRoot[d.Root], cid)
	return e.memo
}

func (c *docCache) dropLocked(cid string, root RootID) {
	delete(c.byCID, cid)
	list := slices.DeleteFunc(c.byRoot[root], func(x string) bool { return x == cid })
	if len(list) == 0 {
		delete(c.byRoot, root)
	} else {
		c.byRoot[root] = list
	}
}

// invalidate drops what key (a keyspace notification's key) may have
// changed: the entries of its root for file:<root>/…, the entry of the
// CID for cid:<cid>.
func (c *docCache) invalidate(key string) {
	var root RootID
	var cid string
	switch {
	case strings.HasPrefix(key, "file:"):
		r, _, ok := strings.Cut(key[len("file:"):], "/")
		if !ok {
			return // file:__index__: a root's own keys go with it
		}
		root = RootID(r)
	case strings.HasPrefix(key, "cid:"):
		cid = key[len("cid:"):]
	default:
		return
	}
	c.ext.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cid != "" {
		if e := c.byCID[cid]; e != nil {
			c.dropLocked(cid, e.root)
		}
		return
	}
	for _, k := range slices.Clone(c.byRoot[root]) {
		c.dropLocked(k, root)
	}
}

// reset empties the cache and sets whether it may serve.
func (c *docCache) reset(live bool) {
	c.mu.Lock()
	c.live.Store(live)
	c.ext.Add(1)
	clear(c.byCID)
	clear(c.byRoot)
	c.mu.Unlock()
}

// watch keeps the cache coherent with outside writers until ctx ends:
// it subscribes to the keyspace notifications of file:* and cid:*, and
// serves only while subscribed.
func (c *docCache) watch(ctx context.Context, rdb *redis.Client) {
	db := rdb.Options().DB
	prefix := fmt.Sprintf("__keyspace@%d__:", db)
	beat := fmt.Sprintf("metamesh:cache-beat:%d", time.Now().UnixNano())
	go func() {
		t := time.NewTicker(beatEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				rdb.Publish(ctx, beat, strconv.FormatInt(time.Now().UnixNano(), 10))
			}
		}
	}()
	for ctx.Err() == nil {
		sub := rdb.PSubscribe(ctx, prefix+"file:*", prefix+"cid:*", beat)
		done := make(chan struct{})
		go func() { // Receive does not return on ctx alone
			select {
			case <-ctx.Done():
				sub.Close()
			case <-done:
			}
		}()
		c.follow(ctx, sub, prefix, beat)
		close(done)
		sub.Close()
		c.reset(false)
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// follow applies one subscription's messages until it fails.
func (c *docCache) follow(ctx context.Context, sub *redis.PubSub, prefix, beat string) {
	subscribed := 0
	for {
		msg, err := sub.Receive(ctx)
		if err != nil {
			return
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			// Both patterns confirmed (again, after go-redis
			// reconnected): whatever happened meanwhile is unknown.
			if m.Kind == "psubscribe" {
				if subscribed++; subscribed >= 3 {
					c.reset(true)
				}
			}
		case *redis.Message:
			if m.Channel == beat {
				sent, _ := strconv.ParseInt(m.Payload, 10, 64)
				now := time.Now()
				c.lagging.Store(now.Sub(time.Unix(0, sent)) > maxLag)
				c.beat.Store(now.UnixNano())
				continue
			}
			c.invalidate(strings.TrimPrefix(m.Channel, prefix))
		case *redis.Pong:
		}
	}
}

// CacheStats are the document cache's counters.
type CacheStats struct {
	Entries      int
	Hits, Misses uint64
}

// CacheStats reports the document cache's size and hit counts (zero
// without a cache).
func (s *Store) CacheStats() CacheStats {
	c := s.cache
	if c == nil {
		return CacheStats{}
	}
	c.mu.Lock()
	n := len(c.byCID)
	c.mu.Unlock()
	return CacheStats{Entries: n, Hits: c.hits.Load(), Misses: c.misses.Load()}
}

// clone copies d's maps and slices.
// packDocument writes d (all but its memo) into one buffer: counts and
// lengths as uvarints, then the bytes of each string; a nil map or slice
// is a count of 0, a non-nil one its length plus one.
func packDocument(d Document) []byte {
	n := len(d.Root) + 16
	for k, v := range d.Fields {
		n += len(k) + len(v) + 4
	}
	for _, l := range [][]string{d.CIDs, d.Duplicates, d.Peers, d.Edited} {
		for _, x := range l {
			n += len(x) + 2
		}
	}
	for k, ps := range d.Learned {
		n += len(k) + 4
		for _, p := range ps {
			n += len(p) + 2
		}
	}
	b := make([]byte, 0, n)
	str := func(x string) {
		b = binary.AppendUvarint(b, uint64(len(x)))
		b = append(b, x...)
	}
	count := func(n int, isNil bool) {
		if isNil {
			b = append(b, 0)
			return
		}
		b = binary.AppendUvarint(b, uint64(n)+1)
	}
	list := func(l []string) {
		count(len(l), l == nil)
		for _, x := range l {
			str(x)
		}
	}
	str(string(d.Root))
	count(len(d.Fields), d.Fields == nil)
	for k, v := range d.Fields {
		str(k)
		str(v)
	}
	list(d.CIDs)
	list(d.Duplicates)
	b = binary.AppendVarint(b, d.DuplicateCount)
	list(d.Peers)
	count(len(d.Learned), d.Learned == nil)
	for k, ps := range d.Learned {
		str(k)
		list(ps)
	}
	list(d.Edited)
	return b
}

// unpackDocument reads what packDocument wrote. Its strings share one
// allocation: a document out of the cache costs a handful of them.
func unpackDocument(b []byte) Document {
	all := string(b)
	pos := 0
	uv := func() int {
		v, n := binary.Uvarint(b[pos:])
		pos += n
		return int(v)
	}
	str := func() string {
		l := uv()
		pos += l
		return all[pos-l : pos]
	}
	list := func() []string {
		n := uv()
		if n == 0 {
			return nil
		}
		out := make([]string, n-1)
		for i := range out {
			out[i] = str()
		}
		return out
	}
	var d Document
	d.Root = RootID(str())
	if n := uv(); n > 0 {
		d.Fields = make(map[string]string, n-1)
		for i := 0; i < n-1; i++ {
			k := str()
			d.Fields[k] = str()
		}
	}
	d.CIDs = list()
	d.Duplicates = list()
	v, n := binary.Varint(b[pos:])
	pos += n
	d.DuplicateCount = v
	d.Peers = list()
	if n := uv(); n > 0 {
		d.Learned = make(map[string][]string, n-1)
		for i := 0; i < n-1; i++ {
			k := str()
			d.Learned[k] = list()
		}
	}
	d.Edited = list()
	return d
}
