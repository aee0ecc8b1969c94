package catalog

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// What a friend's household is shown: the local films and episodes whose
// paths a filter keeps, never home videos, other files or files known only from
// peers; shows and seasons of the episodes kept; words and pages.
func TestCatalog_Shared(t *testing.T) {
	c := New()
	n := 0
	file := func(e store.Summary) store.Summary {
		n++
		e.Root, e.CID, e.Size, e.Source = store.RootID(fmt.Sprintf("%04d", n)), fmt.Sprintf("bafk%04d", n), int64(n), "local"
		if e.FileType == "" {
			e.FileType = "video"
		}
		return e
	}
	ep := func(show string, s, e int) store.Summary {
		return file(store.Summary{Title: show, Season: &s, Episode: &e, Poster: "poster-" + show})
	}
	es := []store.Summary{
		file(store.Summary{Title: "Alien", Year: 1979}),
		file(store.Summary{Title: "Heat", Year: 1995, Poster: "poster-heat"}),
		file(store.Summary{Title: "Private Film", Year: 2001}),
		file(store.Summary{Title: "Birthday", VideoType: "other"}),
		file(store.Summary{Title: "Song", FileType: "audio"}),
		ep("The Office", 1, 1), ep("The Office", 1, 2), ep("The Office", 2, 1),
		ep("Hidden Show", 1, 1), ep("The Office", 3, 1),
	}
	far := file(store.Summary{Title: "Far Away", Year: 2001})
	far.Source = "12D3KooWpeer"
	es = append(es, far)
	c.apply(nil, es, true)
	// Each local file's path, as the duplicates' copies hold it: the
	// filter keeps all but one film, one show and one season, by path.
	for _, e := range es {
		path := "/lib/" + e.Title
		if e.Season != nil {
			path += fmt.Sprintf("/S%d/E%d", *e.Season, *e.Episode)
		}
		if e.Local() {
			c.copies[e.Root] = &fileCopy{entry: e, copy: model.DuplicateCopy{CID: e.CID, Path: path}}
		}
	}
	keep := func(path string) bool {
		return path != "/lib/Private Film" && !strings.HasPrefix(path, "/lib/Hidden Show/") && !strings.HasPrefix(path, "/lib/The Office/S3/")
	}
	season := func(n int) *int { return &n }
	titles := func(a protocol.LibraryAnswer) []string {
		out := []string{}
		for _, e := range a.Entries {
			s := e.Kind + " " + e.Title
			if e.Season != nil {
				s += fmt.Sprintf(" s%d", *e.Season)
			}
			if e.Episode != nil {
				s += fmt.Sprintf("e%d", *e.Episode)
			}
			if e.Kind == "show" || e.Kind == "season" {
				s += fmt.Sprintf(" (%d/%d)", e.Seasons, e.Episodes)
			}
			out = append(out, s)
		}
		return out
	}
	for _, tt := range []struct {
		name  string
		req   protocol.LibraryRequest
		want  []string
		total int
	}{
		{"films", protocol.LibraryRequest{View: "films", Page: 1, Limit: 10}, []string{"film Alien", "film Heat"}, 2},
		{"a page of films", protocol.LibraryRequest{View: "films", Page: 2, Limit: 1}, []string{"film Heat"}, 2},
		{"films with words", protocol.LibraryRequest{View: "films", Q: "AL", Page: 1, Limit: 10}, []string{"film Alien"}, 1},
		{"films with a word in no title", protocol.LibraryRequest{View: "films", Q: "alien heat x", Page: 1, Limit: 10}, []string{}, 0},
		{"shows", protocol.LibraryRequest{View: "shows", Page: 1, Limit: 10}, []string{"show The Office (2/3)"}, 1},
		{"seasons", protocol.LibraryRequest{View: "seasons", Show: "the office", Page: 1, Limit: 10}, []string{"season The Office s1 (0/2)", "season The Office s2 (0/1)"}, 2},
		{"episodes", protocol.LibraryRequest{View: "episodes", Show: "the office", Season: season(1), Page: 1, Limit: 10}, []string{"episode The Office s1e1", "episode The Office s1e2"}, 2},
		{"a season kept from peers", protocol.LibraryRequest{View: "episodes", Show: "the office", Season: season(3), Page: 1, Limit: 10}, []string{}, 0},
		{"a show kept from peers", protocol.LibraryRequest{View: "seasons", Show: "hidden show", Page: 1, Limit: 10}, []string{}, 0},
		{"a show there is not", protocol.LibraryRequest{View: "seasons", Show: "lost", Page: 1, Limit: 10}, []string{}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := c.Shared(tt.req, keep)
			if got := titles(a); !slices.Equal(got, tt.want) || a.Total != tt.total || a.Films != 2 || a.Shows != 1 {
				t.Errorf("%q (total %d, %d films, %d shows), want %q (total %d, 2 films, 1 show)", got, a.Total, a.Films, a.Shows, tt.want, tt.total)
			}
			if a.View != tt.req.View || a.Page != tt.req.Page || a.Pages != (tt.total+tt.req.Limit-1)/tt.req.Limit {
				t.Errorf("view %q, page %d of %d: not what was asked", a.View, a.Page, a.Pages)
			}
		})
	}
	heat := c.Shared(protocol.LibraryRequest{View: "films", Q: "heat", Page: 1, Limit: 1}, keep).Entries[0]
	if heat.CID != "bafk0002" || heat.Year != 1995 || heat.Size != 2 || heat.Poster != "poster-heat" || heat.Show != "" {
		t.Errorf("Heat's entry %+v", heat)
	}
	office := c.Shared(protocol.LibraryRequest{View: "shows", Page: 1, Limit: 1}, keep).Entries[0]
	if office.Show != "the office" || office.Poster != "poster-The Office" {
		t.Errorf("the show's entry %+v", office)
	}
	all := func(string) bool { return true }
	if a := c.Shared(protocol.LibraryRequest{View: "films", Page: 1, Limit: 10}, all); a.Films != 3 {
		t.Errorf("every local film: %d, want 3 (the home video, the audio file and the peer's film are none)", a.Films)
	}
	// A file whose path the catalog does not hold yet is not listed.
	delete(c.copies, "0001")
	if a := c.Shared(protocol.LibraryRequest{View: "films", Page: 1, Limit: 10}, all); a.Films != 2 || a.Entries[0].Title != "Heat" {
		t.Errorf("films without Alien's path: %+v", a)
	}
}
