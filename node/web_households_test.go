package node_test

import (
	"fmt"
	"github.com/chromedp/chromedp"
	"path/filepath"
	"testing"
	"time"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// TestWeb_HouseholdsLibrary: on B's page, "From other households" lists
// A by name with its counts, and not C, which shows its list to no one;
// A opens as a poster grid of its films, paged, searched within; its
// shows open their seasons and a season its episodes; the households
// tab stays the current one throughout.
func TestWeb_HouseholdsLibrary(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	libA := t.TempDir()
	writeLibrary(t, libA, "Movies/Alien.1979.mkv", "Movies/Heat.1995.mkv",
		"TV/The Office/The.Office.S01E01.mkv", "TV/The Office/The.Office.S01E02.mkv", "TV/The Office/The.Office.S02E01.mkv")
	writeOld(t, filepath.Join(libA, "Movies", "Heat.1995-poster.jpg"), jpegPoster(t, 200, 300, 5))
	libC := t.TempDir()
	writeLibrary(t, libC, "Movies/Zulu.1964.mkv")
	a := startNodeWith(t, libA, func(c *node.Config) { c.Name = "Alice's NAS" })
	b := p2pNode(t, func(c *node.Config) { c.Name = "Bob" })
	c := startNodeWith(t, libC, func(c *node.Config) { c.Name = "Carol"; c.LibraryVisible = node.LibraryVisibleNone })
	waiting.Until(t, "A's catalog", func() string {
		if m, s := library(t, a, "view=movies"), library(t, a, "view=shows"); m.Total != 2 || s.Total != 1 {
			return fmt.Sprintf("films %q, shows %q", lines(m), lines(s))
		}
		return ""
	})
	for _, n := range []*node.Node{a, c} {
		if err := connect(n, b); err != nil {
			t.Fatal(err)
		}
	}
	idA, idC := a.PeerID(), c.PeerID()
	waiting.Until(t, "B to hear from A and C", func() string {
		hs := households(t, b)
		if hs[idA].Library != "shared" || hs[idC].Library != "refused" {
			return fmt.Sprintf("%+v", hs)
		}
		return ""
	})

	p := openPage(t, b)
	p.navigate("/?view=peers")
	p.waitList("the households", `document.querySelectorAll("#household-list li").length === 1`)
	got := p.eval("read the households", `[...document.querySelectorAll("#household-list li")].map((li) => li.dataset.peer + "|" + li.textContent.replace(/\s+/g, " ").trim()).join("\n")`)
	if want := idA + "|Alice's NAS2 films · 1 show"; got != want {
		t.Errorf("households listed %q, want %q (A alone, by name: not C)", got, want)
	}
	p.click("open A's library", `#household-list li[data-peer="`+idA+`"] a.title`)
	l := p.waitList("A's films", `l.entries.length === 2`)
	if !eq(l.Entries, []string{"Alien", "Heat"}) || l.View != "peers" || !eq(l.Sources, []string{"peer", "peer"}) {
		t.Errorf("A's films: %+v", l)
	}

	// A page at a time, then a search within A's films.
	p.navigate("/?view=household&peer=" + idA + "&limit=1")
	if l := p.waitList("A's first page", `l.entries.length === 1 && l.pager !== ""`); !eq(l.Entries, []string{"Alien"}) || l.Pager != "Page 1 of 2" {
		t.Errorf("page 1: %+v", l)
	}
	p.click("turn the page", "#next")
	if l := p.waitList("A's second page", `l.url.includes("page=2") && l.entries.length === 1`); !eq(l.Entries, []string{"Heat"}) || l.Pager != "Page 2 of 2" {
		t.Errorf("page 2: %+v", l)
	}
	must(t, p.ctx, "Heat's poster, fetched from A", p.ce, chromedp.Poll[bool](
		`(() => { const i = document.querySelector("#entries img.thumb"); return !!i && i.complete && i.naturalWidth > 0; })()`, chromedp.WithPollingTimeout(30*time.Second)))
	p.eval("search A's films", `(() => { document.getElementById("hq").value = "alie"; document.getElementById("household-search").requestSubmit(); return ""; })()`)
	if l := p.waitList("the search within A's films", `l.url.includes("hq=alie") && l.entries.length === 1`); !eq(l.Entries, []string{"Alien"}) || l.Status != "1 film" {
		t.Errorf("search: %+v", l)
	}

	// A's show, its seasons, a season's episodes.
	p.click("A's shows", `#crumbs a[data-list="shows"]`)
	if l := p.waitList("A's shows", `l.url.includes("list=shows") && l.entries.length === 1`); !eq(l.Entries, []string{"The Office"}) {
		t.Errorf("shows: %+v", l)
	}
	p.click("open the show", `#entries a.title[data-show]`)
	if l := p.waitList("the show's seasons", `l.entries.length === 2`); !eq(l.Entries, []string{"Season 1", "Season 2"}) {
		t.Errorf("seasons: %+v", l)
	}
	p.click("open season 1", `#entries a.title[data-season="1"]`)
	l = p.waitList("season 1's episodes", `l.url.includes("season=1") && l.entries.length === 2`)
	if !eq(l.Entries, []string{"Episode 1", "Episode 2"}) || l.Crumbs != "Households › Alice's NAS › 2 films · 1 show › The Office › Season 1" {
		t.Errorf("episodes: %+v", l)
	}
	p.screenshot("household-episodes")
	p.noConsoleErrors()
}
