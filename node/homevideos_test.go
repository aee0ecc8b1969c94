package node_test

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
)

// TestHomeVideos_ByName: a camera's files and counted clips are listed
// as home videos by their names alone, never as films or a show, with
// the date their names hold.
func TestHomeVideos_ByName(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	names := []string{"DCIM/100APPLE/IMG_0042.MOV", "Phone/VID_20190314_181510.mp4", "clips/clip_0102.mp4",
		"clips/clip_0103.mp4", "clips/clip_1964.mp4", "GoPro/GOPR0123.MP4", "Films/Quiet.Harbour.2015.mkv"}
	writeLibrary(t, lib, names...)
	n := startNodeWith(t, lib, nil)
	waiting.Until(t, "every video listed", func() string {
		if o, m := library(t, n, "view=other"), library(t, n, "view=movies"); o.Total != len(names)-1 || m.Total != 1 {
			return fmt.Sprintf("home videos %d, films %d", o.Total, m.Total)
		}
		return ""
	})
	if s := library(t, n, "view=shows"); s.Total != 0 {
		t.Errorf("shows made of home videos: %+v", s.Entries)
	}
	for _, e := range library(t, n, "view=other").Entries {
		if e.Year != 0 || e.Season != nil || e.Episode != nil {
			t.Errorf("a home video listed with a year or an episode: %+v", e)
		}
	}
	var doc map[string]any
	getJSON(t, n, "/api/meta/"+canonicalOf(t, filepath.Join(lib, "Phone/VID_20190314_181510.mp4")), &doc)
	if doc["recorded"] != "2019-03-14" || doc["videoType"] != "other" {
		t.Errorf("VID_20190314_181510: recorded %v, videoType %v", doc["recorded"], doc["videoType"])
	}
	// Search finds a home video by the day it was recorded.
	for _, q := range []string{"2019", "2019-03-14"} {
		waiting.Until(t, "search "+q+" to find the video of 2019-03-14", func() string {
			var res api.SearchResult
			getJSON(t, n, "/api/search?q="+q, &res)
			if len(res.Hits) != 1 || !strings.Contains(res.Hits[0].Title, "20190314") {
				return fmt.Sprintf("hits %+v", res.Hits)
			}
			return ""
		})
	}
}

// TestHomeVideos_TwoThousandClips: a library of 2,000 counted clips
// (clip_0102 once read as S01E02 of "clip", clip_1964 as a film of
// 1964) and a camera's folder is all home videos, on the API and on the
// page: no film, no show, and the Home videos list opens with the
// camera's dated videos, newest first, each card showing its day.
func TestHomeVideos_TwoThousandClips(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	const clips = 2000
	lib := t.TempDir()
	// The camera's videos by what the list shows: the dated ones newest
	// first (shown as the page writes the day), then those without a
	// date.
	camera := []struct{ name, recorded, shown string }{ // the dated first
		{"DCIM/100APPLE/VID_20210704_193012.mp4", "2021-07-04", "4 Jul 2021"},
		{"DCIM/100APPLE/VID_20200101_000001.mp4", "2020-01-01", "1 Jan 2020"},
		{"DCIM/100APPLE/VID_20190314_181510.mp4", "2019-03-14", "14 Mar 2019"},
		{"DCIM/100APPLE/IMG_0042.MOV", "", ""},
		{"DCIM/100APPLE/IMG_1964.MOV", "", ""},
	}
	var names []string
	for i := range clips {
		names = append(names, fmt.Sprintf("clips/clip_%04d.mp4", i))
	}
	for _, c := range camera {
		names = append(names, c.name)
	}
	cids := map[string]string{} // name → canonical CID
	for _, name := range names {
		// Random bytes behind a head no signature matches: a video by
		// its name, as a damaged container is, which ffprobe is not run
		// on (2,000 runs of it would be most of the test). Bare random
		// bytes read as another kind of file (zlib, MPEG audio, a
		// Windows program) one time in a thousand, and a file of
		// another kind is no video to list.
		data := make([]byte, 2<<10)
		rand.Read(data)
		copy(data, "\x00\x00\x00\x00clip\x00\x00\x00\x00")
		writeOld(t, filepath.Join(lib, name), data)
		cids[name] = canonicalOf(t, filepath.Join(lib, name))
	}
	n := startNodeWith(t, lib, nil)
	waiting.Until(t, "every clip listed under Home videos", func() string {
		if o := library(t, n, "view=other&limit=1"); o.Total != len(names) {
			return fmt.Sprintf("%d of %d home videos", o.Total, len(names))
		}
		return ""
	}, waiting.Limit(3*time.Minute))

	for _, view := range []string{"movies", "shows"} {
		if l := library(t, n, "view="+view); l.Total != 0 {
			t.Errorf("view=%s lists %d of the clips: %v", view, l.Total, l.Entries[:min(5, len(l.Entries))])
		}
	}
	var listed []api.LibraryEntry
	for page := 1; ; page++ {
		l := library(t, n, fmt.Sprintf("view=other&limit=%d&page=%d", api.MaxLibraryLimit, page))
		listed = append(listed, l.Entries...)
		if page >= l.Pages {
			break
		}
	}
	seen := map[string]bool{}
	for _, e := range listed {
		seen[e.CID] = true
		if e.Year != 0 || e.Season != nil || e.Episode != nil {
			t.Errorf("a home video listed with a year or an episode: %+v", e)
		}
	}
	for _, name := range names {
		if !seen[cids[name]] {
			t.Errorf("%s is not listed under Home videos", name)
		}
	}
	if len(listed) != len(names) {
		t.Fatalf("Home videos lists %d entries, want %d", len(listed), len(names))
	}
	const dated = 3 // camera[:dated]
	for i, c := range camera[:dated] {
		if e := listed[i]; e.CID != cids[c.name] || e.Recorded != c.recorded {
			t.Errorf("Home videos' entry %d: %s recorded %q, want %s recorded %s", i, e.Title, e.Recorded, c.name, c.recorded)
		}
	}
	// Then the rest by title: clip_0000 … clip_1999, IMG_0042, IMG_1964.
	if first, last := listed[dated], listed[len(listed)-1]; first.CID != cids["clips/clip_0000.mp4"] || first.Recorded != "" || last.CID != cids[camera[4].name] {
		t.Errorf("after the dated videos: first %+v, last %+v; want clip_0000 first and IMG_1964 last", first, last)
	}

	p := openPage(t, n)
	p.navigate("/")
	p.waitList("the recently added files", `l.view === "recent" && l.entries.length > 0`)
	p.click("open the Movies tab", `#views a[data-view=movies]`)
	if l := p.waitList("no movies", `l.view === "movies" && l.status !== ""`); len(l.Entries) != 0 || l.Status != "No movies yet." {
		t.Errorf("movies: %+v", l)
	}
	p.click("open the Shows tab", `#views a[data-view=shows]`)
	if l := p.waitList("no shows", `l.view === "shows" && l.status !== ""`); len(l.Entries) != 0 || l.Status != "No shows yet." {
		t.Errorf("shows: %+v", l)
	}
	p.click("open the Home videos tab", `#views a[data-view=other]`)
	l := p.waitList("the home videos", `l.view === "other" && l.entries.length > 0`)
	if want := fmt.Sprintf("%d videos · page 1 of %d", len(names), (len(names)+49)/50); l.URL != "?view=other" || len(l.Entries) != 50 || l.Status != want {
		t.Errorf("home videos: %+v, want 50 cards and %q", l, want)
	}
	type card struct{ CID, Line string } // the line under the title
	cards := must(t, p.ctx, "read the cards", p.ce, chromedp.Evaluate[[]card](`[...document.querySelectorAll("#entries li")].slice(0, `+fmt.Sprint(dated+1)+`).map((li) => ({cid: li.dataset.cid, line: li.querySelector(".muted").textContent}))`))
	if len(cards) != dated+1 {
		t.Fatalf("%d cards read, want %d", len(cards), dated+1)
	}
	for i, c := range camera[:dated] {
		if date, _, _ := strings.Cut(cards[i].Line, " · "); cards[i].CID != cids[c.name] || date != c.shown {
			t.Errorf("card %d: %+v, want %s showing %q", i, cards[i], c.name, c.shown)
		}
	}
	if c := cards[dated]; c.CID != cids["clips/clip_0000.mp4"] || !strings.HasPrefix(c.Line, "video · ") {
		t.Errorf("card %d, the first with no date: %+v, want clip_0000 with no day", dated, c)
	}
	p.screenshot("home-videos")
	p.noConsoleErrors()
}
