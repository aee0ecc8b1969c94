package node_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/metamesh/node/internal/waiting"
)

// TestWeb_PosterPlotSubtitles: a record's page shows its poster (through
// /api/file), its plot from the NFO and its subtitles by language.
func TestWeb_PosterPlotSubtitles(t *testing.T) {
	t.Parallel()
	ctx, consoleErrors := browser(t)
	lib := t.TempDir()
	dir := filepath.Join(lib, "Movies", "Heat (1995)")
	video := filepath.Join(dir, "Heat.1995.mkv")
	data := make([]byte, 40<<10)
	rand.Read(data)
	writeOld(t, video, data)
	img := image.NewRGBA(image.Rect(0, 0, 20, 30))
	for i := range img.Pix {
		img.Pix[i] = 0x80
	}
	img.Set(3, 3, color.RGBA{255, 0, 0, 255})
	var pngBytes bytes.Buffer
	if err := png.Encode(&pngBytes, img); err != nil {
		t.Fatal(err)
	}
	writeOld(t, filepath.Join(dir, "poster.png"), pngBytes.Bytes())
	writeOld(t, filepath.Join(dir, "Heat.1995.nfo"), []byte(`<movie><title>Heat</title><plot>A group of professional bank robbers.</plot></movie>`))
	writeOld(t, filepath.Join(dir, "Heat.1995.en.srt"), []byte("1\n00:00:01,000 --> 00:00:02,000\nHello\n"))
	writeOld(t, filepath.Join(dir, "Heat.1995.fr.forced.srt"), []byte("1\n00:00:01,000 --> 00:00:02,000\nBonjour\n"))
	n := startNodeWith(t, lib, nil)
	canonical := canonicalOf(t, video)
	waiting.Until(t, "the poster's and the subtitles' links", func() string {
		_, body := do(t, n, "GET", "/api/meta/"+canonical+"?local=1", nil)
		var doc struct {
			Art       map[string]string   `json:"art"`
			Subtitles map[string][]string `json:"subtitles"`
		}
		if json.Unmarshal(body, &doc) == nil && doc.Art["poster"] != "" && len(doc.Subtitles) == 2 {
			return ""
		}
		return string(body)
	}, waiting.Every(50*time.Millisecond))

	ce := consoleErrors
	must(t, ctx, "open the record", ce, chromedp.Navigate("http://"+n.APIAddr()+"/#cid="+canonical))
	must(t, ctx, "wait for the poster", ce, chromedp.Poll[bool](
		`(() => { const i = document.querySelector("#poster img"); return !!i && i.complete && i.naturalWidth === 20; })()`,
		chromedp.WithPollingTimeout(10*time.Second)))
	plot := must(t, ctx, "read the plot", ce, chromedp.TextContent(chromedp.CSS("#plot")))
	if plot != "A group of professional bank robbers." {
		t.Errorf("plot %q", plot)
	}
	subs := must(t, ctx, "read the subtitles", ce, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#subtitles li a")].map(a => a.textContent + " " + a.getAttribute("href"))`))
	if len(subs) != 2 || subs[0][:4] != "eng " || subs[1][:15] != "fre (forced) /a" {
		t.Errorf("subtitles %q", subs)
	}
}
