package thumbs

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"

	"golang.org/x/image/draw"
)

// Limits on what is decoded: an image file larger than MaxSource bytes,
// of more than MaxPixels pixels, or whose pixels take more than
// MaxDecoded bytes once decoded (width × height × the bytes of a pixel
// of its kind: 8 for 16-bit RGBA, 4 for 8-bit RGB or RGBA, 3 for JPEG's
// YCbCr, 2 for 16-bit grey, 1 for grey or a palette) is refused from its
// header, before its pixels are read. A poster is a few megabytes and a
// 4K fanart 33 MB decoded; a 400 KB PNG of 7071 × 7071 16-bit pixels is
// 400 MB.
const (
	MaxSource  = 64 << 20
	MaxPixels  = 50_000_000
	MaxDecoded = 128 << 20
)

// quality is the JPEG quality of thumbnails: a 320-pixel poster takes
// some 20 KB.
const quality = 82

// Make is the JPEG thumbnail of the image src, width pixels wide (its
// own width when narrower), its height in proportion.
func Make(src []byte, width int) ([]byte, error) {
	out, _, err := thumbnail(src, width)
	return out, err
}

// thumbnail is Make's work; decoded is the bytes its pixels took (0 when
// they were not decoded).
func thumbnail(src []byte, width int) (out []byte, decoded int64, err error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(src))
	if err != nil {
		return nil, 0, ErrNotImage
	}
	if err := checkSize(cfg); err != nil {
		return nil, 0, err
	}
	if truncated(format, src) {
		return nil, 0, fmt.Errorf("%w: the %s file ends before its end marker (truncated)", ErrNotImage, format)
	}
	decoded = int64(cfg.Width) * int64(cfg.Height) * pixelBytes(cfg.ColorModel)
	img, _, err := image.Decode(bytes.NewReader(src))
	if err != nil {
		return nil, decoded, fmt.Errorf("%w: %v", ErrNotImage, err)
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w > width {
		w, h = width, max(1, int(int64(h)*int64(width)/int64(w)))
	}
	// A source many times wider than the thumbnail is first averaged down
	// in boxes to about twice its width: the filter below then works on
	// a few hundred rows, not thousands, and the decoded image can go.
	src2 := reduce(img, 2*w)
	img = nil
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	// White under what is transparent: JPEG has no alpha.
	draw.Draw(dst, dst.Bounds(), image.White, image.Point{}, draw.Src)
	draw.CatmullRom.Scale(dst, dst.Bounds(), src2, src2.Bounds(), draw.Over, nil)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, dst, &jpeg.Options{Quality: quality}); err != nil {
		return nil, decoded, fmt.Errorf("thumbnails: encode: %w", err)
	}
	return buf.Bytes(), decoded, nil
}

// checkSize refuses an image whose header claims more pixels, or more
// decoded bytes, than the limits.
func checkSize(cfg image.Config) error {
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return ErrNotImage
	}
	px := int64(cfg.Width) * int64(cfg.Height)
	if px > MaxPixels {
		return fmt.Errorf("%w: %d × %d pixels, at most %d million", ErrTooLarge, cfg.Width, cfg.Height, MaxPixels/1_000_000)
	}
	if n := px * pixelBytes(cfg.ColorModel); n > MaxDecoded {
		return fmt.Errorf("%w: %d × %d pixels of %d bytes are %d MiB decoded, at most %d MiB",
			ErrTooLarge, cfg.Width, cfg.Height, pixelBytes(cfg.ColorModel), n>>20, MaxDecoded>>20)
	}
	return nil
}

// pixelBytes is what a pixel of an image of model m takes once decoded,
// as the standard library's decoders store it (the most for a kind they
// store in several ways).
func pixelBytes(m color.Model) int64 {
	switch m {
	case color.GrayModel, color.AlphaModel:
		return 1
	case color.Gray16Model, color.Alpha16Model:
		return 2
	case color.YCbCrModel:
		return 3
	case color.RGBAModel, color.NRGBAModel, color.CMYKModel, color.NYCbCrAModel:
		return 4
	}
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	return 8
}

// truncated reports a PNG or JPEG file without its end marker (the IEND
// chunk, the EOI marker): the decoders read one to its end before they
// fail, so a file cut short is refused before that. What follows the
// marker is ignored, as the decoders ignore it.
func truncated(format string, src []byte) bool {
	switch format {
	case "png":
		return !bytes.Contains(src, []byte("IEND\xaeB`\x82"))
	case "jpeg":
		return !bytes.Contains(src, []byte{0xff, 0xd9})
	}
	return false
}

// reduce averages img down in square boxes of k × k pixels, the largest
// k that keeps it at least width wide; img itself when it is less than
// twice that wide.
func reduce(img image.Image, width int) image.Image {
	b := img.Bounds()
	k := b.Dx() / max(width, 1)
	if k < 2 {
		return img
	}
	src, ok := img.(image.RGBA64Image)
	if !ok {
		return img
	}
	w, h := (b.Dx()+k-1)/k, (b.Dy()+k-1)/k
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		y0, y1 := b.Min.Y+y*k, min(b.Min.Y+(y+1)*k, b.Max.Y)
		for x := range w {
			x0, x1 := b.Min.X+x*k, min(b.Min.X+(x+1)*k, b.Max.X)
			var r, g, bl, a, n uint64
			for sy := y0; sy < y1; sy++ {
				for sx := x0; sx < x1; sx++ {
					c := src.RGBA64At(sx, sy)
					r, g, bl, a = r+uint64(c.R), g+uint64(c.G), bl+uint64(c.B), a+uint64(c.A)
					n++
				}
			}
			i := out.PixOffset(x, y)
			out.Pix[i+0] = uint8(r / n >> 8)
			out.Pix[i+1] = uint8(g / n >> 8)
			out.Pix[i+2] = uint8(bl / n >> 8)
			out.Pix[i+3] = uint8(a / n >> 8)
		}
	}
	return out
}
