package catalog

import (
	"fmt"
	"testing"

	"github.com/metamesh/node/store"
)

// The household's films and shows as wholes: films by title paged by
// offset, copies of a film found by its IMDb ID, a show with its
// episodes by season and episode, its IMDb ID and first year, found by
// its IMDb ID; files from peers and home videos are neither.
func TestCatalog_Works(t *testing.T) {
	c := New()
	n := func(i int) *int { return &i }
	ep := func(r, title string, s, e, year int, imdb string) store.Summary {
		return store.Summary{Root: store.RootID(r), CID: "bafk" + r, Title: title, Season: n(s), Episode: n(e), Year: year,
			ShowIMDbID: imdb, FileType: "video", Source: "local", Poster: map[bool]string{true: "poster-" + r}[s == 2]}
	}
	film := func(r, title, imdb string) store.Summary {
		return store.Summary{Root: store.RootID(r), CID: "bafk" + r, Title: title, IMDbID: imdb, FileType: "video", Source: "local"}
	}
	peer := film("p1", "Aardvark", "")
	peer.Source = "peer1"
	home := film("h1", "Beach", "")
	home.VideoType = "other"
	es := []store.Summary{
		film("f1", "Heat", "tt0113277"), film("f2", "Alien", ""), film("f3", "Heat", "tt0113277"), film("f4", "Brazil", ""), peer, home,
		ep("e1", "Lighthouse Keepers", 2, 1, 2021, "tt4000123"), ep("e2", "Lighthouse Keepers", 1, 2, 2020, ""), ep("e3", "Lighthouse Keepers", 1, 1, 2020, ""),
		ep("e4", "Quiet Harbour", 1, 1, 0, ""),
	}
	var roots []store.RootID
	for _, e := range es {
		roots = append(roots, e.Root)
	}
	c.apply(roots, es, true)

	titles := func(fs []store.Summary) string {
		s := ""
		for _, f := range fs {
			s += f.Title + "/" + string(f.Root) + " "
		}
		return s
	}
	if got, total := c.Films(0, 2); titles(got) != "Alien/f2 Brazil/f4 " || total != 4 {
		t.Errorf("Films(0, 2) = %s of %d", titles(got), total)
	}
	if got, _ := c.Films(2, 10); titles(got) != "Heat/f1 Heat/f3 " {
		t.Errorf("Films(2, 10) = %s", titles(got))
	}
	if got, _ := c.Films(9, 10); len(got) != 0 {
		t.Errorf("Films past the end = %s", titles(got))
	}
	if got := c.Film("tt0113277"); titles(got) != "Heat/f1 Heat/f3 " {
		t.Errorf("Film(tt0113277) = %s", titles(got))
	}
	if got := c.Film("bafkf2"); titles(got) != "Alien/f2 " {
		t.Errorf("Film(bafkf2) = %s", titles(got))
	}
	for _, id := range []string{"bafkp1", "bafkh1", "tt9999999"} {
		if got := c.Film(id); len(got) != 0 {
			t.Errorf("Film(%s) = %s, want none", id, titles(got))
		}
	}
	shows, total := c.Shows(0, 10)
	if total != 2 || len(shows) != 2 {
		t.Fatalf("Shows = %+v of %d", shows, total)
	}
	if s := shows[0]; s.Key != "lighthouse keepers" || s.Title != "Lighthouse Keepers" || s.IMDbID != "tt4000123" || s.Year != 2020 ||
		s.Seasons != 2 || s.Episodes != 3 || s.Poster != "poster-e1" || s.List != nil {
		t.Errorf("the first show %+v", s)
	}
	s, ok := c.Show("lighthouse keepers")
	var order string
	for _, e := range s.List {
		order += fmt.Sprintf("%s S%dE%d ", e.Root, *e.Season, *e.Episode)
	}
	if !ok || order != "e3 S1E1 e2 S1E2 e1 S2E1 " {
		t.Errorf("Show(lighthouse keepers) = %v, its episodes %s", ok, order)
	}
	if key, ok := c.ShowByIMDb("tt4000123"); !ok || key != "lighthouse keepers" {
		t.Errorf("ShowByIMDb = %q, %v", key, ok)
	}
	if _, ok := c.ShowByIMDb("tt0113277"); ok {
		t.Error("a film's IMDb ID names a show")
	}
	if _, ok := c.Show("nothing"); ok {
		t.Error("Show(nothing) found")
	}
	for id, want := range map[string]bool{"bafkf1": true, "bafke2": true, "bafkp1": false, "bafkh1": false, "bafkzz": false} {
		if got := c.Plays(id); got != want {
			t.Errorf("Plays(%s) = %v, want %v", id, got, want)
		}
	}
	if ShowKey("Lighthouse Keepers!") != "lighthouse keepers" {
		t.Errorf("ShowKey = %q", ShowKey("Lighthouse Keepers!"))
	}
}
