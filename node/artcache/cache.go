package artcache

import (
	"container/list"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ipfs/go-cid"
)

// MaxImage is the largest image the cache keeps (and the node fetches):
// artwork is small, and a peer is not trusted to say it is.
const MaxImage = 5 << 20

// DefaultMax is the cache's default size cap (--art-cache).
const DefaultMax = 500 << 20

// ErrTooLarge: an image beyond MaxImage.
var ErrTooLarge = fmt.Errorf("artwork larger than %d MiB is not fetched", MaxImage>>20)

// Cache is a directory of images by CID with an LRU size cap.
type Cache struct {
	dir string
	max int64

	mu    sync.Mutex
	bytes int64
	ll    *list.List // of *item, most recently used first
	items map[string]*list.Element
	hits  int64
	asked int64
}

type item struct {
	cid  string
	size int64
}

// Stats are a cache's counters since Open.
type Stats struct {
	// Requests are the Path calls, Hits those that found the image.
	Requests, Hits int64
	// Files and Bytes are what the cache holds now.
	Files int
	Bytes int64
}

// Open opens the cache under dir (created if missing), capped at max
// bytes (DefaultMax when max ≤ 0), and finds what it holds by scanning
// the directory, the most recently modified first; files beyond the cap
// are removed, and so are temporary files and names that are no CID.
func Open(dir string, max int64) (*Cache, error) {
	if max <= 0 {
		max = DefaultMax
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("art cache: %w", err)
	}
	c := &Cache{dir: dir, max: max, ll: list.New(), items: map[string]*list.Element{}}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("art cache: %w", err)
	}
	type found struct {
		cid  string
		size int64
		mod  time.Time
	}
	var fs []found
	for _, e := range ents {
		name := e.Name()
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if _, err := cid.Decode(name); err != nil || fi.Size() > MaxImage {
			os.Remove(filepath.Join(dir, name))
			continue
		}
		fs = append(fs, found{name, fi.Size(), fi.ModTime()})
	}
	// Oldest first, each pushed to the front: the newest ends up first.
	slices.SortFunc(fs, func(a, b found) int { return a.mod.Compare(b.mod) })
	for _, f := range fs {
		c.items[f.cid] = c.ll.PushFront(&item{f.cid, f.size})
		c.bytes += f.size
	}
	c.mu.Lock()
	c.evict()
	c.mu.Unlock()
	return c, nil
}

// Path is the path of the image c names when the cache holds it (it is
// then the most recently used), else "" and false.
func (c *Cache) Path(id string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked++
	el, ok := c.items[id]
	if !ok {
		return "", false
	}
	c.hits++
	c.ll.MoveToFront(el)
	p := filepath.Join(c.dir, id)
	now := time.Now()
	_ = os.Chtimes(p, now, now) // the order a restart finds again
	return p, true
}

// Put keeps the bytes r gives as the image id names, refusing more than
// MaxImage (ErrTooLarge), and returns its path. check, when not nil, is
// given the bytes before they are kept: an error there keeps nothing.
// The least recently used images go until the cache is under its cap.
func (c *Cache) Put(id string, r io.Reader, check func([]byte) error) (string, error) {
	if _, err := cid.Decode(id); err != nil || strings.ContainsAny(id, `/\`) {
		return "", fmt.Errorf("art cache: %q is not a CID", id)
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxImage+1))
	if err != nil {
		return "", err
	}
	if len(b) > MaxImage {
		return "", ErrTooLarge
	}
	if check != nil {
		if err := check(b); err != nil {
			return "", err
		}
	}
	tmp, err := os.CreateTemp(c.dir, ".art-*")
	if err != nil {
		return "", fmt.Errorf("art cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return "", fmt.Errorf("art cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("art cache: %w", err)
	}
	p := filepath.Join(c.dir, id)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := os.Rename(tmp.Name(), p); err != nil {
		return "", fmt.Errorf("art cache: %w", err)
	}
	if el, ok := c.items[id]; ok {
		it := el.Value.(*item)
		c.bytes += int64(len(b)) - it.size
		it.size = int64(len(b))
		c.ll.MoveToFront(el)
	} else {
		c.items[id] = c.ll.PushFront(&item{id, int64(len(b))})
		c.bytes += int64(len(b))
	}
	c.evict()
	return p, nil
}

// evict removes the least recently used images until the cache is under
// its cap, the most recent one kept whatever its size. c.mu is held.
func (c *Cache) evict() {
	for c.bytes > c.max && c.ll.Len() > 1 {
		el := c.ll.Back()
		it := c.ll.Remove(el).(*item)
		delete(c.items, it.cid)
		c.bytes -= it.size
		if err := os.Remove(filepath.Join(c.dir, it.cid)); err != nil && !errors.Is(err, os.ErrNotExist) {
			// Counted out anyway: the next scan finds it again.
			continue
		}
	}
}

// Stats are the cache's counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Requests: c.asked, Hits: c.hits, Files: c.ll.Len(), Bytes: c.bytes}
}
