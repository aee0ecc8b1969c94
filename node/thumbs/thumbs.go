package thumbs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"sync"

	// The formats posters come in: JPEG and PNG (the standard library),
	// GIF, and WebP (decoding only).
	_ "image/gif"
	_ "image/png"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp"
)

// Widths are the widths thumbnails are made in, in pixels: a request is
// served the narrowest at least as wide as it asks (the widest when it
// asks for more), so a library's posters take a few files each, whatever
// sizes pages ask for.
var Widths = []int{160, 320, 640}

// Limits on what is decoded: an image file larger than MaxSource bytes,
// or of more than MaxPixels pixels, is refused before its pixels are
// read (a poster is a few megabytes; a decompression bomb is not).
const (
	MaxSource = 64 << 20
	MaxPixels = 50_000_000
)

// quality is the JPEG quality of thumbnails: a 320-pixel poster takes
// some 20 KB.
const quality = 82

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
// bytes forever, so a thumbnail made once is never stale. At most two
// images are decoded at once (a page asks for 50 posters together), and
// two requests for the same thumbnail make it once.
type Cache struct {
	dir  string
	sem  chan struct{}
	mu   sync.Mutex
	busy map[string]*making
}

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
	return &Cache{dir: dir, sem: make(chan struct{}, 2), busy: map[string]*making{}}, nil
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
		m := c.busy[path]
		if m == nil {
			m = &making{done: make(chan struct{})}
			c.busy[path] = m
			c.mu.Unlock()
			m.err = c.make(ctx, path, width, open)
			c.mu.Lock()
			delete(c.busy, path)
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
	out, err := Make(src, width)
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

// Make is the JPEG thumbnail of the image src, width pixels wide (its
// own width when narrower), its height in proportion.
func Make(src []byte, width int) ([]byte, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(src))
	if err != nil {
		return nil, ErrNotImage
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, ErrNotImage
	}
	if int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return nil, fmt.Errorf("%w: %d × %d pixels, at most %d million", ErrTooLarge, cfg.Width, cfg.Height, MaxPixels/1_000_000)
	}
	img, _, err := image.Decode(bytes.NewReader(src))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotImage, err)
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w > width {
		w, h = width, max(1, int(int64(h)*int64(width)/int64(w)))
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	// White under what is transparent: JPEG has no alpha.
	draw.Draw(dst, dst.Bounds(), image.White, image.Point{}, draw.Src)
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, b, draw.Over, nil)
	var out bytes.Buffer
	if err := jpeg.Encode(&out, dst, &jpeg.Options{Quality: quality}); err != nil {
		return nil, fmt.Errorf("thumbnails: encode: %w", err)
	}
	return out.Bytes(), nil
}
