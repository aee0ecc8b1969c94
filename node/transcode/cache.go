package transcode

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// The files of Dir: a stream being made, and one kept whole.
const (
	partExt = ".part"
	keptExt = ".mp4"
)

// cache is the streams kept whole in Dir, least recently used first
// out once they hold more than max bytes.
type cache struct {
	dir string
	max int64

	mu    sync.Mutex
	items map[string]*kept
	total int64
}

type kept struct {
	path string
	size int64
	used time.Time
}

// openCache indexes dir's kept streams (by their modification time, the
// last use) and removes the half-made ones an earlier run left.
func openCache(dir string, max int64) (*cache, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("transcode: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("transcode: %w", err)
	}
	c := &cache{dir: dir, max: max, items: map[string]*kept{}}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch key, ok := strings.CutSuffix(e.Name(), keptExt); {
		case strings.HasSuffix(e.Name(), partExt):
			os.Remove(p)
		case ok && e.Type().IsRegular():
			if fi, err := e.Info(); err == nil {
				c.items[key] = &kept{path: p, size: fi.Size(), used: fi.ModTime()}
				c.total += fi.Size()
			}
		}
	}
	c.mu.Lock()
	c.evict()
	c.mu.Unlock()
	return c, nil
}

// get is the path of key's stream, marked used.
func (c *cache) get(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it := c.items[key]
	if it == nil {
		return "", false
	}
	it.used = time.Now()
	_ = os.Chtimes(it.path, it.used, it.used)
	return it.path, true
}

func (c *cache) add(key, path string) {
	fi, err := os.Stat(path)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.items[key]; old != nil {
		c.total -= old.size
	}
	c.items[key] = &kept{path: path, size: fi.Size(), used: time.Now()}
	c.total += fi.Size()
	c.evict()
}

func (c *cache) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if it := c.items[key]; it != nil {
		c.total -= it.size
		delete(c.items, key)
		os.Remove(it.path)
	}
}

// evict removes the least recently used streams while they hold more
// than max, under c.mu. A player reading one reads on: it holds the
// file open.
func (c *cache) evict() {
	if c.total <= c.max {
		return
	}
	keys := make([]string, 0, len(c.items))
	for k := range c.items {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return c.items[keys[a]].used.Before(c.items[keys[b]].used) })
	for _, k := range keys {
		if c.total <= c.max {
			return
		}
		it := c.items[k]
		os.Remove(it.path)
		c.total -= it.size
		delete(c.items, k)
	}
}
