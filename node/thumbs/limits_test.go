package thumbs

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"errors"
	"hash/adler32"
	"hash/crc32"
	"image/jpeg"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// png16 is a complete 16-bit RGBA PNG of w × h pixels, each of colour
// rgba (16 bits a channel), its rows written one at a time.
func png16(tb testing.TB, w, h int, rgba [4]uint16) []byte {
	tb.Helper()
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(kind string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		c := append([]byte(kind), data...)
		b.Write(c)
		binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(c))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 16, 6 // 16-bit RGBA
	chunk("IHDR", ihdr)
	row := make([]byte, 1+8*w) // filter type 0, then the pixels
	for x := range w {
		for c, v := range rgba {
			binary.BigEndian.PutUint16(row[1+8*x+2*c:], v)
		}
	}
	chunk("IDAT", zlibRows(tb, row, h))
	chunk("IEND", nil)
	return b.Bytes()
}

// zlibRows is the zlib stream of row repeated h times: a batch of rows
// deflated once, its blocks repeated (each batch refers only to itself),
// so a 400 MB image takes a moment to write even under -race.
func zlibRows(tb testing.TB, row []byte, h int) []byte {
	tb.Helper()
	deflate := func(rows int) []byte {
		var b bytes.Buffer
		f, _ := flate.NewWriter(&b, flate.BestCompression)
		for range rows {
			f.Write(row)
		}
		if err := f.Flush(); err != nil { // ends on a byte boundary
			tb.Fatal(err)
		}
		return b.Bytes()
	}
	const batch = 64
	var out bytes.Buffer
	out.Write([]byte{0x78, 0xda}) // zlib header: deflate, best compression
	whole := deflate(batch)
	for range h / batch {
		out.Write(whole)
	}
	out.Write(deflate(h % batch))
	out.Write([]byte{0x01, 0x00, 0x00, 0xff, 0xff}) // the final, empty, block
	sum := adler32.New()
	for range h {
		sum.Write(row)
	}
	out.Write(sum.Sum(nil))
	return out.Bytes()
}

// allocated is the bytes f allocated (the whole process's, so the tests
// that use it do not run in parallel).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestMake_DecodedSize: a small file of many 16-bit pixels (a 7071 ×
// 7071 PNG of some 400 KB, 400 MB decoded, under the pixel limit) is
// refused from its header, without its pixels decoded; one within the
// limit is made, averaged down first.
func TestMake_DecodedSize(t *testing.T) {
	bomb := png16(t, 7071, 7071, [4]uint16{0, 0, 0, 0xffff})
	t.Logf("the 16-bit PNG of 7071 × 7071 pixels is %d KB", len(bomb)>>10)
	var err error
	took := allocated(func() { _, err = Make(bomb, 320) })
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "MiB decoded") {
		t.Errorf("Make = %v, want ErrTooLarge for its decoded size", err)
	}
	if took > 16<<20 {
		t.Errorf("refusing it allocated %d MiB: its pixels were decoded", took>>20)
	}

	red := png16(t, 1400, 2100, [4]uint16{0xffff, 0, 0, 0xffff}) // 22 MiB decoded
	out, err := Make(red, 320)
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 320 || b.Dy() != 480 {
		t.Errorf("%d × %d, want 320 × 480", b.Dx(), b.Dy())
	}
	if r, g, b, _ := img.At(160, 240).RGBA(); r>>8 < 0xf0 || g>>8 > 0x10 || b>>8 > 0x10 {
		t.Errorf("the middle pixel is %02x %02x %02x, want red", r>>8, g>>8, b>>8)
	}
}

// TestMake_Truncated: a PNG or JPEG cut short (its last rows missing) is
// refused before it is decoded, saying so.
func TestMake_Truncated(t *testing.T) {
	big := png16(t, 800, 1200, [4]uint16{0x8000, 0x8000, 0x8000, 0xffff})
	for _, tt := range []struct {
		name string
		src  []byte
	}{
		{"a PNG without its last row", big[:len(big)-20]},
		{"a JPEG without its last rows", poster(t, "jpeg", 1000, 1500)[:20_000]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			took := allocated(func() { _, err = Make(tt.src, 320) })
			if !errors.Is(err, ErrNotImage) || !strings.Contains(err.Error(), "truncated") {
				t.Errorf("Make = %v, want ErrNotImage saying truncated", err)
			}
			if took > 4<<20 {
				t.Errorf("refusing it allocated %d MiB: it was decoded", took>>20)
			}
		})
	}
}

// TestCache_RemembersFailures: an image that makes no thumbnail is read
// once, and refused at once after that, whatever width is asked; a
// failure to open it is not remembered.
func TestCache_RemembersFailures(t *testing.T) {
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cut := poster(t, "png", 800, 1200)
	cut = cut[:len(cut)-100]
	var opens atomic.Int32
	open := func() (io.ReadCloser, error) {
		opens.Add(1)
		return io.NopCloser(bytes.NewReader(cut)), nil
	}
	const cid = "bafkreigqhlg4mucvasivirrm4jbbs4vjvlmh7d567ydyt5ywvfovy5qn4y"
	for _, w := range []int{320, 320, 160, 640} {
		if _, err := c.Get(context.Background(), cid, w, open); !errors.Is(err, ErrNotImage) {
			t.Errorf("Get(w=%d) = %v, want ErrNotImage", w, err)
		}
	}
	if n := opens.Load(); n != 1 {
		t.Errorf("the broken image was read %d times, want once", n)
	}

	gone := errors.New("no such file")
	var tries atomic.Int32
	missing := func() (io.ReadCloser, error) { tries.Add(1); return nil, gone }
	const other = "bafkreibad"
	for range 2 {
		if _, err := c.Get(context.Background(), other, 320, missing); !errors.Is(err, gone) {
			t.Errorf("Get = %v, want %v", err, gone)
		}
	}
	if n := tries.Load(); n != 2 {
		t.Errorf("a file that could not be opened was tried %d times, want each time (2)", n)
	}
}
