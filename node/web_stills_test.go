package node_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// TestWeb_Stills: the grid shows each video without a poster by its
// still (a thumbnail loaded, not a placeholder), and the player shows it
// as its poster frame.
func TestWeb_Stills(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	lib := t.TempDir()
	a := filepath.Join(lib, "Movies", "Aurora (2019)", "Aurora.2019.webm")
	b := filepath.Join(lib, "Movies", "Borealis (2021)", "Borealis.2021.webm")
	writeClip(t, a, 10)
	writeClip(t, b, 20)
	n := startNodeWith(t, lib, func(c *node.Config) { c.Stills = true })
	ca, cb := canonicalOf(t, a), canonicalOf(t, b)
	waiting.For(t, "both stills in the list", func() bool {
		shown := 0
		for _, e := range library(t, n, "view=movies").Entries {
			if e.Poster != "" && e.Poster == stillOf(t, n, e.CID) {
				shown++
			}
		}
		return shown == 2
	})
	p := openPage(t, n)

	p.navigate("/?view=movies")
	p.waitList("the movies", `l.entries.length === 2`)
	must(t, p.ctx, "wait for the cards' stills", p.ce, chromedp.Poll[bool](`(() => {
	  const imgs = [...document.querySelectorAll("#entries li img.thumb")];
	  return imgs.length === 2 && document.querySelectorAll("#entries li .placeholder").length === 0 &&
	    imgs.every((i) => i.complete && i.naturalWidth > 0); })()`, chromedp.WithPollingTimeout(20*time.Second)))
	srcs := must(t, p.ctx, "read the cards' images", p.ce, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#entries li img.thumb")].map((i) => i.getAttribute("src")).sort()`))
	want := []string{"/api/thumb/" + stillOf(t, n, ca) + "?w=320", "/api/thumb/" + stillOf(t, n, cb) + "?w=320"}
	if want[0] > want[1] {
		want[0], want[1] = want[1], want[0]
	}
	if !eq(srcs, want) {
		t.Errorf("the cards' images: %q, want %q", srcs, want)
	}

	p.navigate("/?cid=" + cb)
	frame := must(t, p.ctx, "wait for the player's poster frame", p.ce, chromedp.Poll[string](`(() => {
	  const v = document.querySelector("#player video");
	  return v && v.getAttribute("poster") || false; })()`, chromedp.WithPollingTimeout(20*time.Second)))
	if want := "/api/thumb/" + stillOf(t, n, cb) + "?w=640"; frame != want {
		t.Errorf("the player's poster frame: %q, want %q", frame, want)
	}
	p.noConsoleErrors()
}
