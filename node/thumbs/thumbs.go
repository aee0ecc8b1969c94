package thumbs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	// The formats posters come in: JPEG and PNG (the standard library),
	// GIF, and WebP (decoding only).
	_ "image/gif"
	_ "image/png"

	_ "golang.org/x/image/webp"
)

// Widths are the widths thumbnails are made in, in pixels: a request is
// served the narrowest at least as wide as it asks (the widest when it
// asks for more), so a library's posters take a few files each, whatever
// sizes pages ask for.
var Widths = []int{160, 320, 640}

// Errors of Get.
var (
	// ErrNotImage: the file is not an image of a format the node reads.
	ErrNotImage = errors.New("not an image the node can read (JPEG, PNG, GIF or WebP)")
	// ErrTooLarge: the file or its pixels are beyond MaxSource or
	// MaxPixels.
	ErrTooLarge = errors.New("image too large to make a thumbnail of")
)

// Cache makes thumbnails and keeps them under a directory, one JPEG file
// per image CID and width (<cid>-<width>.jpg): the CID names the image's
// bytes forever, so a thumbnail made once is never stale. At most
// Decoders images are decoded at once (a page asks for 50 posters
// together), and two requests for the same thumbnail make it once. An
// image that cannot be made into one (ErrNotImage, ErrTooLarge) is
// remembered by its CID, the last MaxFailed of them, in memory: asked
// again, it is refused at once, without a read of its bytes.
type Cache struct {
	dir  string
	sem  chan struct{}
	mu   sync.Mutex
	busy map[string]*making
	// failed are the CIDs of images that are none, or too large, with
	// the error; guarded by mu.
	failed map[string]error
}

// Decoders is how many images a Cache decodes at once: each may take up
// to MaxDecoded bytes, and more would only share the same cores.
const Decoders = 2

// bigDecode is the decoded size past which the garbage of a decode is
// collected at once.
const bigDecode = 16 << 20

// MaxFailed bounds the CIDs a Cache remembers as no thumbnail's (a CID
// and its error take some 200 bytes).
const MaxFailed = 4096

// making is a thumbnail being made: done closes when err is set.
type making struct {
	done chan struct{}
	err  error
}

// Open opens the cache under dir, creating it.
func Open(dir string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("thumbnails: %w", err)
	}
	return &Cache{dir: dir, sem: make(chan struct{}, Decoders), busy: map[string]*making{}, failed: map[string]error{}}, nil
}

// Width is the width a request for w pixels is served in.
func Width(w int) int {
	for _, x := range Widths {
		if w <= x {
			return x
		}
	}
	return Widths[len(Widths)-1]
}

// Get returns the path of the thumbnail of the image named cid, width
// pixels wide (Width), making it from the bytes open gives when it is not
// cached yet. An image narrower than the width keeps its own. cid must be
// a CID in canonical form (it names a file).
func (c *Cache) Get(ctx context.Context, cid string, width int, open func() (io.ReadCloser, error)) (string, error) {
	width = Width(width)
	path := filepath.Join(c.dir, fmt.Sprintf("%s-%d.jpg", cid, width))
	for {
		if _, err := os.Stat(path); err == nil {
			return path, nil
		}
		c.mu.Lock()
		if err := c.failed[cid]; err != nil {
			c.mu.Unlock()
			return "", err
		}
		m := c.busy[path]
		if m == nil {
			m = &making{done: make(chan struct{})}
			c.busy[path] = m
			c.mu.Unlock()
			m.err = c.make(ctx, path, width, open)
			c.mu.Lock()
			delete(c.busy, path)
			if errors.Is(m.err, ErrNotImage) || errors.Is(m.err, ErrTooLarge) {
				c.remember(cid, m.err)
			}
			c.mu.Unlock()
			close(m.done)
			if m.err != nil {
				return "", m.err
			}
			return path, nil
		}
		c.mu.Unlock()
		select {
		case <-m.done:
			if m.err != nil && ctx.Err() == nil && !errors.Is(m.err, context.Canceled) {
				return "", m.err
			}
			// Made, or its maker gave up: look again.
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
	}
}

// remember records that cid's image makes no thumbnail (err), forgetting
// another when MaxFailed are remembered. c.mu is held.
func (c *Cache) remember(cid string, err error) {
	if len(c.failed) >= MaxFailed {
		for k := range c.failed {
			delete(c.failed, k)
			break
		}
	}
	c.failed[cid] = err
}

// make decodes the image, scales it and writes the thumbnail to path
// (through a temporary file, so a reader never sees half of one).
func (c *Cache) make(ctx context.Context, path string, width int, open func() (io.ReadCloser, error)) error {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.sem }()
	rc, err := open()
	if err != nil {
		return err
	}
	src, err := io.ReadAll(io.LimitReader(rc, MaxSource+1))
	rc.Close()
	if err != nil {
		return fmt.Errorf("thumbnails: read the image: %w", err)
	}
	if len(src) > MaxSource {
		return fmt.Errorf("%w: more than %d MiB", ErrTooLarge, MaxSource>>20)
	}
	out, decoded, err := thumbnail(src, width)
	if decoded > bigDecode {
		// The pixels are garbage now: collected at once, the next
		// decode does not stack on them (a page of large posters would
		// otherwise hold several times Decoders × their size).
		runtime.GC()
	}
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(c.dir, ".thumb-*")
	if err != nil {
		return fmt.Errorf("thumbnails: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return fmt.Errorf("thumbnails: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("thumbnails: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("thumbnails: %w", err)
	}
	return nil
}
