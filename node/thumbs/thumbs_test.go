package thumbs

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"testing"
)

// poster is a w × h image with a gradient, encoded as format.
func poster(tb testing.TB, format string, w, h int) []byte {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	var b bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&b, img)
	case "jpeg":
		err = jpeg.Encode(&b, img, nil)
	case "gif":
		err = gif.Encode(&b, img, nil)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

func TestMake(t *testing.T) {
	tests := []struct {
		name         string
		src          []byte
		width        int
		wantW, wantH int
	}{
		{"a JPEG poster scaled down", poster(t, "jpeg", 1000, 1500), 320, 320, 480},
		{"a PNG poster scaled down", poster(t, "png", 600, 900), 160, 160, 240},
		{"a GIF", poster(t, "gif", 400, 200), 160, 160, 80},
		{"a narrower image keeps its width", poster(t, "png", 100, 150), 640, 100, 150},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Make(tt.src, tt.width)
			if err != nil {
				t.Fatal(err)
			}
			img, format, err := image.Decode(bytes.NewReader(out))
			if err != nil || format != "jpeg" {
				t.Fatalf("the thumbnail is %q: %v", format, err)
			}
			if b := img.Bounds(); b.Dx() != tt.wantW || b.Dy() != tt.wantH {
				t.Errorf("%d × %d, want %d × %d", b.Dx(), b.Dy(), tt.wantW, tt.wantH)
			}
		})
	}
}

// pngHeader is the start of a PNG claiming w × h pixels: enough for its
// size to be read, not its pixels.
func pngHeader(w, h uint32) []byte {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 2 // 8-bit RGB
	chunk := append([]byte("IHDR"), ihdr...)
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	binary.Write(&b, binary.BigEndian, uint32(len(ihdr)))
	b.Write(chunk)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return b.Bytes()
}

func TestMake_Refuses(t *testing.T) {
	tests := []struct {
		name string
		src  []byte
		want error
	}{
		{"not an image", []byte("1\n00:00:01,000 --> 00:00:02,000\nHi\n"), ErrNotImage},
		{"empty", nil, ErrNotImage},
		{"a truncated JPEG", poster(t, "jpeg", 200, 300)[:300], ErrNotImage},
		{"a bomb: 100,000 × 100,000 pixels claimed", pngHeader(100_000, 100_000), ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Make(tt.src, 320); !errors.Is(err, tt.want) {
				t.Errorf("Make = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestWidth(t *testing.T) {
	for w, want := range map[int]int{0: 160, 1: 160, 160: 160, 161: 320, 320: 320, 500: 640, 5000: 640} {
		if got := Width(w); got != want {
			t.Errorf("Width(%d) = %d, want %d", w, got, want)
		}
	}
}

// A thumbnail asked for by many at once is made once, and served from
// the disk after that; one that cannot be made is an error to each.
func TestCache_MakesOnce(t *testing.T) {
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := poster(t, "png", 800, 1200)
	var opens atomic.Int32
	open := func() (io.ReadCloser, error) {
		opens.Add(1)
		return io.NopCloser(bytes.NewReader(src)), nil
	}
	const cid = "bafkreigqhlg4mucvasivirrm4jbbs4vjvlmh7d567ydyt5ywvfovy5qn4y"
	var wg sync.WaitGroup
	paths := make([]string, 8)
	for i := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := c.Get(context.Background(), cid, 300, open)
			if err != nil {
				t.Error(err)
			}
			paths[i] = p
		}()
	}
	wg.Wait()
	if n := opens.Load(); n != 1 {
		t.Errorf("the image was opened %d times, want once", n)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if img, err := jpeg.Decode(bytes.NewReader(b)); err != nil || img.Bounds().Dx() != 320 {
		t.Errorf("cached thumbnail: %v", err)
	}
	for _, p := range paths {
		if p != paths[0] {
			t.Errorf("paths differ: %q, %q", p, paths[0])
		}
	}
	if _, err := c.Get(context.Background(), cid, 320, open); err != nil || opens.Load() != 1 {
		t.Errorf("a second request opened the image again (%d) or failed: %v", opens.Load(), err)
	}
	bad := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader([]byte("no image"))), nil }
	if _, err := c.Get(context.Background(), "bafkreibad", 320, bad); !errors.Is(err, ErrNotImage) {
		t.Errorf("a file that is no image: %v", err)
	}
}

// FuzzMake: whatever bytes a file holds, Make answers an error or a
// JPEG, and never panics.
func FuzzMake(f *testing.F) {
	f.Add(poster(f, "png", 20, 30))
	f.Add(poster(f, "jpeg", 20, 30))
	f.Add(poster(f, "gif", 20, 30))
	f.Add(pngHeader(100_000, 100_000))
	f.Add([]byte("RIFF\x00\x00\x00\x00WEBPVP8 "))
	f.Fuzz(func(t *testing.T, src []byte) {
		out, err := Make(src, 160)
		if err != nil {
			return
		}
		if _, err := jpeg.Decode(bytes.NewReader(out)); err != nil {
			t.Errorf("Make gave no JPEG: %v", err)
		}
	})
}
