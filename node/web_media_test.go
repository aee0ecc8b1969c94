package node_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"image"
	"image/png"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/metamesh/node/internal/waiting"
)

// writePoster writes a w × h PNG poster of noise (a photograph's worth of
// bytes) at path.
func writePoster(t *testing.T, path string, w, h int) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rand.Read(img.Pix)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	writeOld(t, path, b.Bytes())
}

// writeVideo writes a small file of a video's name (random bytes: the
// page's player is not what is tested with it, its tracks are).
func writeVideo(t *testing.T, path string) {
	t.Helper()
	b := make([]byte, 24<<10)
	rand.Read(b)
	writeOld(t, path, b)
}

// TestWeb_MediaLibrary: at a desktop's width and at a phone's, the lists
// are poster grids whose posters load as thumbnails (a file without one
// shows a placeholder), a record opens at the top of the page in place of
// the list, a film's subtitles are the player's WebVTT tracks (the
// default one selected), an episode's record is headed SxxEyy · title
// under a link to its show and links the next and previous episodes
// (across seasons), search runs as one types and finds by prefix, and
// the node's internals are in a view of their own.
func TestWeb_MediaLibrary(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	lib := t.TempDir()
	film := filepath.Join(lib, "Movies", "Heat (1995)")
	writeVideo(t, filepath.Join(film, "Heat.1995.mkv"))
	writePoster(t, filepath.Join(film, "poster.png"), 600, 900)
	writeOld(t, filepath.Join(film, "Heat.1995.en.default.srt"), []byte("1\n00:00:01,000 --> 00:00:02,000\nHello\n"))
	writeOld(t, filepath.Join(film, "Heat.1995.fr.srt"), []byte("1\n00:00:01,000 --> 00:00:02,000\nBonjour\n"))
	writeVideo(t, filepath.Join(lib, "Movies", "Alien.1979.mkv")) // no poster
	show := filepath.Join(lib, "Shows", "Lighthouse Keepers")
	writePoster(t, filepath.Join(show, "poster.png"), 400, 600)
	writeOld(t, filepath.Join(show, "tvshow.nfo"), []byte(`<tvshow><title>Lighthouse Keepers</title><plot>Keepers of a light.</plot><year>2020</year><genre>Documentary</genre></tvshow>`))
	writePoster(t, filepath.Join(show, "fanart.png"), 300, 170)
	writeOld(t, filepath.Join(show, "Season 01", "Lighthouse.Keepers.S01E02.The.Storm.nfo"), []byte(`<episodedetails><title>The Storm</title><plot>A storm comes.</plot></episodedetails>`))
	for _, ep := range []string{"Season 01/Lighthouse.Keepers.S01E01.The.Lamp.mkv", "Season 01/Lighthouse.Keepers.S01E02.The.Storm.mkv", "Season 02/Lighthouse.Keepers.S02E01.The.Return.mkv"} {
		writeVideo(t, filepath.Join(show, ep))
	}
	n := startNodeWith(t, lib, nil)
	heat, alien := canonicalOf(t, filepath.Join(film, "Heat.1995.mkv")), canonicalOf(t, filepath.Join(lib, "Movies", "Alien.1979.mkv"))
	waiting.For(t, "the posters' links in the lists", func() bool {
		movies, shows := library(t, n, "view=movies"), library(t, n, "view=shows")
		return len(movies.Entries) == 2 && movies.Entries[1].Poster != "" && len(shows.Entries) == 1 && shows.Entries[0].Poster != "" &&
			library(t, n, "").Total == 5
	})
	episodes := map[string]string{}
	for _, se := range []string{"1", "2"} {
		for _, e := range library(t, n, "show=lighthouse+keepers&season="+se).Entries {
			episodes[fmt.Sprintf("S%02dE%02d", *e.Season, *e.Episode)] = e.CID
		}
	}

	for _, size := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
		t.Run(size.name, func(t *testing.T) {
			p := openPage(t, n)
			p.t = t
			p.resize(size.w, size.h)

			// The movies as a grid of posters: thumbnails, not the files.
			p.navigate("/?view=movies")
			p.waitList("the movies", `l.entries.length === 2`)
			must(t, p.ctx, "wait for the poster", p.ce, chromedp.Poll[bool](`(() => {
			  const i = document.querySelector('#entries li[data-cid="`+heat+`"] img.thumb');
			  return !!i && i.complete && i.naturalWidth === 320 && i.getAttribute("src").startsWith("/api/thumb/"); })()`,
				chromedp.WithPollingTimeout(15*time.Second)))
			if ph := p.eval("look at Alien's picture", `String(!!document.querySelector('#entries li[data-cid="`+alien+`"] .placeholder'))`); ph != "true" {
				t.Error("a film without a poster has no placeholder")
			}
			cols := p.eval("count the grid's columns", `String(getComputedStyle(document.getElementById("entries")).gridTemplateColumns.split(" ").length)`)
			if size.w < 500 && cols != "2" || size.w > 1000 && len(cols) == 1 && cols < "5" {
				t.Errorf("%s columns of posters at %d px", cols, size.w)
			}
			p.screenshot("movies-" + size.name)

			// A film's record, at the top, with its subtitles as tracks.
			p.click("open Heat", `#entries li[data-cid="`+heat+`"] a.title`)
			p.waitList("Heat's record", `l.record === "Heat"`)
			got := must(t, p.ctx, "read the record", p.ce, chromedp.Evaluate[map[string]any](`({
			  top: document.getElementById("record").getBoundingClientRect().top,
			  listShown: !document.getElementById("library").hidden,
			  tracks: [...document.querySelectorAll("#player video track")].map((t) => t.label + " " + (t.default ? "default " : "") + t.getAttribute("src").split("/")[2]),
			  poster: (document.querySelector("#player video") || {}).poster || "",
			})`))
			if top, _ := got["top"].(float64); top < 0 || top > float64(size.h)/2 || got["listShown"] != false {
				t.Errorf("the record's top is at %v px of %d, the list shown %v: want the record at the top, alone", got["top"], size.h, got["listShown"])
			}
			tracks, _ := got["tracks"].([]any)
			if len(tracks) != 2 || !strings.HasPrefix(fmt.Sprint(tracks[0]), "eng (default) default ") || !strings.HasPrefix(fmt.Sprint(tracks[1]), "fre ") {
				t.Errorf("tracks %q, want eng (default, selected) and fre", tracks)
			}
			if poster, _ := got["poster"].(string); !strings.Contains(poster, "/api/thumb/") {
				t.Errorf("the player's poster frame %q", poster)
			}
			vtt := p.eval("fetch the English track", `(() => { const x = new XMLHttpRequest(); x.open("GET", document.querySelector("#player track").src, false); x.send(); return x.responseText; })()`)
			if !strings.HasPrefix(vtt, "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nHello") {
				t.Errorf("the track reads %q", vtt)
			}
			p.screenshot("record-" + size.name)

			// A show's episodes, each linked to the next, across seasons.
			p.navigate("/?view=shows")
			p.waitList("the shows", `l.entries.length === 1`)
			if src := p.eval("read the show's poster", `(document.querySelector("#entries li.show img.thumb") || {}).src || ""`); !strings.Contains(src, "/api/thumb/") {
				t.Errorf("the show's card shows %q, want its poster's thumbnail", src)
			}
			p.click("open the show", `#entries li.show a.title`)
			p.waitList("its seasons", `l.entries.length === 2`)
			must(t, p.ctx, "wait for the show's header", p.ce, chromedp.Poll[bool](`(() => {
			  const h = document.getElementById("show-header");
			  return !h.hidden && h.textContent.includes("Keepers of a light.") && h.textContent.includes("2020 · Documentary") &&
			    h.classList.contains("fanart") && !!h.querySelector("img.thumb"); })()`, chromedp.WithPollingTimeout(10*time.Second)))
			if n := p.eval("count the seasons' posters", `String(document.querySelectorAll("#entries li.season img.thumb").length)`); n != "2" {
				t.Errorf("%s seasons with a poster, want 2", n)
			}
			p.screenshot("show-" + size.name)
			p.click("open season 1", `#entries li[data-season="1"] a.title`)
			p.waitList("season 1", `l.entries.length === 2`)
			must(t, p.ctx, "wait for the episode's own plot", p.ce, chromedp.Poll[bool](`(() => {
			  const plots = [...document.querySelectorAll("#entries li .plot")].map((p) => p.textContent);
			  return plots.length === 1 && plots[0] === "A storm comes."; })()`, chromedp.WithPollingTimeout(10*time.Second)))
			p.screenshot("season-" + size.name)
			p.click("open the first episode", `#entries li[data-cid="`+episodes["S01E01"]+`"] a.title`)
			p.waitList("the first episode", `l.record === "S01E01 · The Lamp"`)
			if sl := p.eval("read the show link", `document.querySelector("#record-episode a.show-link").textContent`); sl != "Lighthouse Keepers" {
				t.Errorf("show link %q", sl)
			}
			must(t, p.ctx, "wait for the next episode's link", p.ce, chromedp.Poll[bool](`!document.getElementById("next-episode").hidden`, chromedp.WithPollingTimeout(10*time.Second)))
			if prev := p.eval("look for a previous episode", `String(document.getElementById("prev-episode").hidden)`); prev != "true" {
				t.Error("the first episode links a previous one")
			}
			p.click("go to the next episode", `#next-episode`)
			p.waitList("the second episode", `l.record === "S01E02 · The Storm"`)
			must(t, p.ctx, "wait for the links", p.ce, chromedp.Poll[bool](`!document.getElementById("next-episode").hidden && !document.getElementById("prev-episode").hidden`, chromedp.WithPollingTimeout(10*time.Second)))
			if next := p.eval("read the next episode's link", `document.getElementById("next-episode").dataset.cid`); next != episodes["S02E01"] {
				t.Errorf("after S01E02 comes %s, want S02E01 %s", next, episodes["S02E01"])
			}
			p.screenshot("episode-" + size.name)

			// Search as one types, by prefix.
			p.navigate("/")
			p.waitList("the library", `l.entries.length === 5`)
			p.screenshot("recent-" + size.name)
			must(t, p.ctx, "type a word's beginning", p.ce, chromedp.SendKeys("#q", "ligh"))
			must(t, p.ctx, "wait for the hits", p.ce, chromedp.Poll[bool](`location.search === "?q=ligh" && document.querySelectorAll("#results li.hit").length === 3`, chromedp.WithPollingTimeout(10*time.Second)))
			must(t, p.ctx, "type on", p.ce, chromedp.SendKeys("#q", "thouse s02"))
			must(t, p.ctx, "wait for the hits of the whole words", p.ce, chromedp.Poll[bool](`location.search === "?q=lighthouse+s02" &&
			  (document.querySelector("#results li.hit a.title") || {dataset: {}}).dataset.cid === "`+episodes["S02E01"]+`"`, chromedp.WithPollingTimeout(10*time.Second)))
			p.screenshot("search-" + size.name)
			must(t, p.ctx, "empty the box", p.ce, chromedp.SetValue("#q", "x"))
			must(t, p.ctx, "and type it empty", p.ce, chromedp.SendKeys("#q", kb.Backspace))
			p.waitList("the library again", `!l.search && l.entries.length === 5`)

			// The node's internals, in their own view.
			if shown := p.eval("look for the node's view", `String(!document.getElementById("node").hidden)`); shown != "false" {
				t.Error("the node's internals are on the library's view")
			}
			p.click("open the Node view", `#views a[data-view="node"]`)
			must(t, p.ctx, "wait for the node's view", p.ce, chromedp.Poll[bool](`!document.getElementById("node").hidden && document.getElementById("peer-id").textContent !== "" && getComputedStyle(document.getElementById("entries")).display === "none"`, chromedp.WithPollingTimeout(10*time.Second)))
			// A file added while the page is open reads as the log says it,
			// relative to the library, once (a note: no list changes).
			writeOld(t, filepath.Join(lib, "Movies", size.name+".txt"), []byte("notes of "+size.name))
			must(t, p.ctx, "wait for the event", p.ce, chromedp.Poll[bool](`[...document.querySelectorAll("#events li")].map((li) => li.textContent).join("|").includes("added Movies/`+size.name+`.txt")`, chromedp.WithPollingTimeout(20*time.Second)))
			if evs := p.eval("read the events", `[...document.querySelectorAll("#events li")].map((li) => li.textContent).join("|")`); strings.Count(evs, size.name+".txt") != 1 || strings.Contains(evs, lib) {
				t.Errorf("events %q: want the file once, relative to the library", evs)
			}
			p.screenshot("node-" + size.name)
			p.navigate("/?view=peers")
			p.waitList("the files from other households", `l.status === "No files yet."`)
			p.screenshot("peers-" + size.name)
			p.noConsoleErrors()
		})
	}
}
