package catalog

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/store"
)

// render writes the lists of views as text: what a page can show of them,
// in their order.
func render(v *catalogViews) string {
	var b strings.Builder
	roots := func(ls []*listed) {
		for _, l := range ls {
			b.WriteString(string(l.Root) + " ")
		}
		b.WriteString("\n")
	}
	roots(v.recent)
	roots(v.movies)
	roots(v.other)
	roots(v.peers)
	for _, s := range v.shows {
		if v.show[s.key] != s {
			fmt.Fprintf(&b, "show %q not in the map\n", s.key)
		}
		fmt.Fprintf(&b, "show %q %q %d %q:", s.key, s.title, s.episodes, s.poster())
		for _, se := range s.seasons {
			fmt.Fprintf(&b, " season %d %q:", se.n, poster(se.episodes))
			roots(se.episodes)
		}
	}
	fmt.Fprintf(&b, "%d shows in the map\n", len(v.show))
	return b.String()
}

// Lists kept sorted change by change are the lists a sweep builds from
// the same entries, whatever the changes: new files, changed titles,
// seasons and episodes, types, home videos' days, posters and holders (a peer's file
// becoming local and back), deletes.
func TestCatalog_ChangesKeepTheListsOfASweep(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := New()
	var roots []store.RootID
	entry := func(r store.RootID) store.Summary {
		e := store.Summary{Root: r, CID: "bafk" + string(r), Size: 1, FileType: []string{"video", "video", "video", "audio", "image", ""}[rng.IntN(6)], Source: "local"}
		if rng.IntN(4) == 0 {
			e.Source = fmt.Sprintf("peer%d", rng.IntN(3))
		}
		if rng.IntN(2) == 0 {
			s, ep := rng.IntN(3), rng.IntN(4)
			e.Title, e.Season, e.Episode, e.EpisodeTitle = []string{"The Show", "Other Show", "Third"}[rng.IntN(3)], &s, &ep, fmt.Sprint("ep", rng.IntN(2))
		} else {
			e.Title, e.Year = []string{"Heat", "Alien", "Heat", "Brazil"}[rng.IntN(4)], 1979+rng.IntN(3)
		}
		if rng.IntN(4) == 0 { // a home video, of a day, a month or none
			e.VideoType, e.Recorded = "other", []string{"", "2019-03-14", "2019-03", "2021-07-04", "2019-03-14"}[rng.IntN(5)]
		}
		if rng.IntN(10) == 0 {
			e.CID = "" // a root without a CID yet
		}
		if rng.IntN(3) == 0 {
			e.Poster = fmt.Sprint("poster", rng.IntN(2))
		}
		return e
	}
	for step := range 3000 {
		var changed []store.RootID
		var es []store.Summary
		switch op := rng.IntN(10); {
		case op < 4 || len(roots) == 0:
			r := store.RootID(fmt.Sprintf("%06d", step))
			roots = append(roots, r)
			changed, es = []store.RootID{r}, []store.Summary{entry(r)}
		case op < 8:
			r := roots[rng.IntN(len(roots))]
			changed, es = []store.RootID{r}, []store.Summary{entry(r)}
		default:
			r := roots[rng.IntN(len(roots))]
			changed = []store.RootID{r} // deleted: no entry
		}
		c.apply(changed, es, false)
		want := buildViews(c.entries)
		if got := render(&c.views); got != render(&want) {
			t.Fatalf("step %d: the lists kept\n%s\nthe lists of a sweep\n%s", step, got, render(&want))
		}
	}
	// A sweep of the same entries gives the same lists too.
	var all []store.Summary
	for _, l := range c.entries {
		all = append(all, l.Summary)
	}
	before := render(&c.views)
	c.apply(nil, all, true)
	if after := render(&c.views); !reflect.DeepEqual(before, after) {
		t.Errorf("a sweep changed the lists:\n%s\nto\n%s", before, after)
	}
	// A sweep that reads a root twice (queued, and in the store's list)
	// counts it once.
	counts := c.Counts()
	c.apply(nil, append(all, all...), true)
	if got := c.Counts(); got != counts {
		t.Errorf("a sweep reading every root twice counts %+v, want %+v", got, counts)
	}
}

// The catalog as a consumer of the store's changes: each root's entry
// from its document, a root gone leaves it, and a sweep's last batch
// drops what no batch of the sweep named (a root deleted while no node
// ran).
func TestCatalog_Take(t *testing.T) {
	doc := func(r store.RootID, title string) store.Changed {
		return store.Changed{Root: r, Exists: true, Document: store.Document{Root: r, Fields: map[string]string{"filePath": "/lib/" + title + ".mkv", "title": title, "fileType": "video"}}}
	}
	titles := func(c *Catalog) map[store.RootID]string {
		c.mu.RLock()
		defer c.mu.RUnlock()
		out := map[store.RootID]string{}
		for r, l := range c.entries {
			out[r] = l.Title
		}
		return out
	}
	c := New()
	take := func(b store.ChangeBatch) {
		t.Helper()
		if err := c.Take(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	take(store.ChangeBatch{Roots: []store.Changed{doc("r1", "Heat"), doc("r2", "Alien"), doc("r3", "Brazil")}})
	take(store.ChangeBatch{Roots: []store.Changed{doc("r2", "Aliens"), {Root: "r3"}}})
	if got, want := titles(c), map[store.RootID]string{"r1": "Heat", "r2": "Aliens"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after changes: %v, want %v", got, want)
	}
	take(store.ChangeBatch{Sweep: true, First: true, Roots: []store.Changed{doc("r2", "Aliens")}})
	if got := titles(c); len(got) != 2 {
		t.Fatalf("a sweep's first batch dropped entries: %v", got)
	}
	take(store.ChangeBatch{Sweep: true, Last: true, Roots: []store.Changed{doc("r4", "Ran")}})
	if got, want := titles(c), map[store.RootID]string{"r2": "Aliens", "r4": "Ran"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after a sweep: %v, want %v", got, want)
	}
	if got := c.Counts().Local; got != 2 {
		t.Errorf("%d local files counted, want 2", got)
	}
}

// TestCatalog_HomeVideosNewestFirst: the Home videos list is by the day
// recorded, newest first (a household's year after the days it holds),
// then the videos with no date, by title (folded: clip before IMG); a
// video whose day changes moves, one that leaves Home videos leaves the
// list.
func TestCatalog_HomeVideosNewestFirst(t *testing.T) {
	video := func(r store.RootID, title, recorded string) store.Changed {
		f := map[string]string{"filePath": "/lib/DCIM/" + title + ".mp4", "title": title, "fileType": "video", "videoType": "other"}
		if recorded != "" {
			f["recorded"] = recorded
		}
		return store.Changed{Root: r, Exists: true, Document: store.Document{Root: r, CIDs: []string{"bafk" + string(r)}, Fields: f}}
	}
	c := New()
	take := func(roots ...store.Changed) {
		t.Helper()
		if err := c.Take(context.Background(), store.ChangeBatch{Roots: roots}); err != nil {
			t.Fatal(err)
		}
	}
	titles := func() string {
		t.Helper()
		var out []string
		for page := 1; ; page++ {
			p, err := c.Page(model.LibraryQuery{View: model.ViewOther, Season: -1, Page: page, Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range p.Entries {
				out = append(out, e.Title+" "+e.Recorded)
			}
			if page >= p.Pages {
				return strings.Join(out, ", ")
			}
		}
	}
	take(video("r1", "clip_0102", ""), video("r2", "VID_20190314_181510", "2019-03-14"), video("r3", "IMG_0042", ""),
		video("r4", "VID_20210704_193012", "2021-07-04"), video("r5", "summer", "2019"), video("r6", "VID_20190314_090000", "2019-03-14"))
	tests := []struct {
		name   string
		change []store.Changed
		want   string
	}{
		{"newest first, then no date by title", nil,
			"VID_20210704_193012 2021-07-04, VID_20190314_090000 2019-03-14, VID_20190314_181510 2019-03-14, summer 2019, clip_0102 , IMG_0042 "},
		{"a day given moves it", []store.Changed{video("r3", "IMG_0042", "2020-01-02")},
			"VID_20210704_193012 2021-07-04, IMG_0042 2020-01-02, VID_20190314_090000 2019-03-14, VID_20190314_181510 2019-03-14, summer 2019, clip_0102 "},
		{"a day taken away moves it back", []store.Changed{video("r4", "VID_20210704_193012", "")},
			"IMG_0042 2020-01-02, VID_20190314_090000 2019-03-14, VID_20190314_181510 2019-03-14, summer 2019, clip_0102 , VID_20210704_193012 "},
		{"gone and no longer a home video leave it", []store.Changed{{Root: "r6"},
			{Root: "r5", Exists: true, Document: store.Document{Root: "r5", CIDs: []string{"bafkr5"}, Fields: map[string]string{"filePath": "/lib/summer.mp4", "title": "summer", "fileType": "video", "recorded": "2019"}}}},
			"IMG_0042 2020-01-02, VID_20190314_181510 2019-03-14, clip_0102 , VID_20210704_193012 "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			take(tt.change...)
			if got := titles(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestCatalog_NextEpisode: the next episode of a season, then across a
// season boundary (a season missing between is skipped), none after the
// last, none for a film.
func TestCatalog_NextEpisode(t *testing.T) {
	ep := func(r store.RootID, show string, season, episode int) store.Changed {
		return store.Changed{Root: r, Exists: true, Document: store.Document{Root: r, CIDs: []string{"bafk" + string(r)}, Fields: map[string]string{
			"filePath": "/lib/" + string(r) + ".mkv", "title": show, "fileType": "video",
			"season": fmt.Sprint(season), "episode": fmt.Sprint(episode)}}}
	}
	c := New()
	film := store.Changed{Root: "f1", Exists: true, Document: store.Document{Root: "f1", CIDs: []string{"bafkf1"}, Fields: map[string]string{"filePath": "/lib/f1.mkv", "title": "Heat", "fileType": "video"}}}
	err := c.Take(context.Background(), store.ChangeBatch{Roots: []store.Changed{
		ep("e12", "Show", 1, 2), ep("e11", "Show", 1, 1), ep("e14", "Show", 1, 4), ep("e31", "Show", 3, 1), ep("e32", "Show", 3, 2),
		ep("o11", "Other", 1, 1), film}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		root store.RootID
		want store.RootID
	}{{"e11", "e12"}, {"e12", "e14"}, {"e14", "e31"}, {"e31", "e32"}, {"e32", ""}, {"o11", ""}, {"f1", ""}, {"gone", ""}} {
		got, e, ok := c.NextEpisode(tc.root)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("NextEpisode(%s) = %q %v, want %q", tc.root, got, ok, tc.want)
		}
		if ok && (e.Kind != "file" || e.Season == nil || e.Show == "") {
			t.Errorf("NextEpisode(%s) entry %+v: want an episode's entry", tc.root, e)
		}
	}
	if e, ok := c.Entry("f1"); !ok || e.Title != "Heat" {
		t.Errorf("Entry(f1) = %+v %v", e, ok)
	}
}
