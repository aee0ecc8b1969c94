package node_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/metamesh/node/node"
)

// TestWeb_PeerArt: peers' films have their posters on the page, in the
// grid of files from other households and in a federated search's hits,
// fetched by this node from the household whose film it is, though that
// household does not share its files. A household that runs
// --share-art=false leaves its films with placeholders, and this node's
// log says why, once.
func TestWeb_PeerArt(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	film := make([]byte, 200<<10)
	libA := t.TempDir()
	heat := filepath.Join(libA, "Movies", "Heat (1995)")
	writeOld(t, filepath.Join(heat, "Heat.1995.mkv"), append([]byte("heat"), film...))
	writeOld(t, filepath.Join(heat, "poster.jpg"), jpegPoster(t, 400, 600, 3))
	a := startNodeWith(t, libA, func(c *node.Config) { c.Name = "Film House" })
	libQ := t.TempDir()
	alien := filepath.Join(libQ, "Movies", "Alien (1979)")
	writeOld(t, filepath.Join(alien, "Alien.1979.mkv"), append([]byte("alien"), film...))
	writeOld(t, filepath.Join(alien, "poster.jpg"), jpegPoster(t, 400, 600, 4))
	quiet := startNodeWith(t, libQ, func(c *node.Config) { c.Name = "Quiet House"; c.NoShareArt = true })
	b, logB := startNodeLogged(t, t.TempDir(), nil)
	for _, n := range []*node.Node{a, quiet} {
		if err := connect(b, n); err != nil {
			t.Fatal(err)
		}
	}
	heatCID, alienCID := canonicalOf(t, filepath.Join(heat, "Heat.1995.mkv")), canonicalOf(t, filepath.Join(alien, "Alien.1979.mkv"))
	for _, c := range []string{heatCID, alienCID} {
		var doc map[string]any
		getJSON(t, b, "/api/meta/"+c, &doc) // the record, from its household
	}
	p := openPage(t, b)

	// loaded waits until the card of cid in list shows its poster's
	// thumbnail, loaded (not a placeholder).
	loaded := func(what, list, cid string) {
		t.Helper()
		must(t, p.ctx, what, p.ce, chromedp.Poll[bool](`(() => {
		  const i = document.querySelector('`+list+` li a[data-cid="`+cid+`"] img.thumb') ||
		    [...document.querySelectorAll('`+list+` li')].filter((li) => li.querySelector('a[data-cid="`+cid+`"]')).map((li) => li.querySelector("img.thumb"))[0];
		  return !!i && i.complete && i.naturalWidth > 0 && i.getAttribute("src").startsWith("/api/thumb/"); })()`,
			chromedp.WithPollingTimeout(30*time.Second)))
	}
	// placeholder waits until the card of cid in list shows a placeholder.
	placeholder := func(what, list, cid string) {
		t.Helper()
		must(t, p.ctx, what, p.ce, chromedp.Poll[bool](`[...document.querySelectorAll('`+list+` li')].some((li) =>
		  li.querySelector('a[data-cid="`+cid+`"]') && li.querySelector(".placeholder") && !li.querySelector("img.thumb"))`,
			chromedp.WithPollingTimeout(30*time.Second)))
	}

	p.navigate("/?view=peers")
	p.waitList("the files from other households", `l.entries.length === 2`)
	loaded("Heat's poster in the grid", "#entries", heatCID)
	placeholder("Alien's placeholder in the grid", "#entries", alienCID)
	// The list is drawn again when the posters' records arrive: the
	// screenshot is of the list drawn last, its images loaded again.
	p.navigate("/?view=peers")
	p.waitList("the files from other households", `l.entries.length === 2`)
	loaded("Heat's poster in the grid", "#entries", heatCID)
	placeholder("Alien's placeholder in the grid", "#entries", alienCID)
	p.screenshot("peers-posters")

	p.navigate("/?q=heat&federated=1")
	must(t, p.ctx, "wait for the hits", p.ce, chromedp.Poll[bool](`document.querySelectorAll("#results li").length > 0`,
		chromedp.WithPollingTimeout(30*time.Second)))
	loaded("Heat's poster in the search hits", "#results", heatCID)
	p.navigate("/?q=alien&federated=1")
	must(t, p.ctx, "wait for the hits", p.ce, chromedp.Poll[bool](`document.querySelectorAll("#results li").length > 0`,
		chromedp.WithPollingTimeout(30*time.Second)))
	placeholder("Alien's placeholder in the search hits", "#results", alienCID)

	// The record of the peer's film shows its poster.
	p.navigate("/?cid=" + heatCID)
	p.waitList("Heat's record", `l.record === "Heat"`)
	must(t, p.ctx, "Heat's poster in its record", p.ce, chromedp.Poll[bool](`(() => {
	  const i = document.querySelector("#poster img");
	  return !!i && i.complete && i.naturalWidth > 0; })()`, chromedp.WithPollingTimeout(30*time.Second)))

	const why = "a peer names artwork it does not serve (it may run --share-art=false)"
	if got := strings.Count(logB.String(), why); got != 1 || !strings.Contains(logB.String(), quiet.PeerID()) {
		t.Errorf("B's log says %d times %q (want once, naming the peer)", got, why)
	}
}
