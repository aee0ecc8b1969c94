package node_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"image"
	"image/jpeg"
	"image/png"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metamesh/node/internal/waiting"
)

// GET /api/thumb/<cid> answers a poster's thumbnail (a JPEG of the width
// asked for, the same for every CID of the image), and GET
// /api/subtitle/<cid> a SubRip file as WebVTT; what is neither gets a
// precise error.
func TestAPI_ThumbnailsAndSubtitles(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	dir := filepath.Join(lib, "Movies", "Heat (1995)")
	video := make([]byte, 40<<10)
	rand.Read(video)
	writeOld(t, filepath.Join(dir, "Heat.1995.mkv"), video)
	img := image.NewRGBA(image.Rect(0, 0, 600, 900))
	rand.Read(img.Pix) // a photograph's noise, which PNG cannot squeeze
	var poster bytes.Buffer
	if err := png.Encode(&poster, img); err != nil {
		t.Fatal(err)
	}
	writeOld(t, filepath.Join(dir, "poster.png"), poster.Bytes())
	writeOld(t, filepath.Join(dir, "Heat.1995.en.srt"), []byte("1\r\n00:00:01,000 --> 00:00:02,500\r\n<i>Hello</i>\r\n"))
	n := startNodeWith(t, lib, nil)
	vcid, art, sub := canonicalOf(t, filepath.Join(dir, "Heat.1995.mkv")), canonicalOf(t, filepath.Join(dir, "poster.png")), canonicalOf(t, filepath.Join(dir, "Heat.1995.en.srt"))
	waiting.For(t, "the poster's link in the list", func() bool {
		p := library(t, n, "view=movies")
		return len(p.Entries) == 1 && p.Entries[0].Poster == art
	})

	resp, body := do(t, n, "GET", "/api/thumb/"+art+"?w=200", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/jpeg" || !strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
		t.Fatalf("thumb: %s %v", resp.Status, resp.Header)
	}
	th, err := jpeg.Decode(bytes.NewReader(body))
	if err != nil || th.Bounds().Dx() != 320 || th.Bounds().Dy() != 480 {
		t.Fatalf("thumb of w=200 (served at 320): %v %v", th.Bounds(), err)
	}
	if len(body) >= poster.Len()/4 {
		t.Errorf("the thumbnail takes %d bytes of the poster's %d", len(body), poster.Len())
	}
	if resp, again := do(t, n, "GET", "/api/thumb/"+art+"?w=320", nil); resp.StatusCode != 200 || !bytes.Equal(again, body) {
		t.Errorf("a second request: %s, %d bytes (first %d)", resp.Status, len(again), len(body))
	}

	resp, body = do(t, n, "GET", "/api/subtitle/"+sub, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/vtt; charset=utf-8" ||
		string(body) != "WEBVTT\n\n00:00:01.000 --> 00:00:02.500\n<i>Hello</i>\n" {
		t.Errorf("subtitle: %s %q %q", resp.Status, resp.Header.Get("Content-Type"), body)
	}

	for _, tt := range []struct {
		path string
		code int
		says string
	}{
		{"/api/thumb/" + vcid, 422, "not an image"},
		{"/api/subtitle/" + art, 422, "not a subtitle file"},
		{"/api/thumb/" + art + "?w=0", 400, "want a width in pixels, 1 to 4096"},
		{"/api/thumb/" + art + "?w=x&w=2", 400, "w"},
		{"/api/thumb/bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku", 404, "not found"},
		{"/api/thumb/nope", 400, "CID"},
		{"/api/subtitle/", 400, "missing CID"},
	} {
		resp, body := do(t, n, "GET", tt.path, nil)
		var e struct {
			Error string `json:"error"`
		}
		if resp.StatusCode != tt.code || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error, tt.says) {
			t.Errorf("%s: %s %s, want %d saying %q", tt.path, resp.Status, body, tt.code, tt.says)
		}
	}
}
