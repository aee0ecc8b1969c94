package node_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// writeLibrary writes files of distinct random bytes under lib, by their
// path relative to it, each behind a head no file signature matches: a
// video by its name. Bare random bytes read as another kind of file
// (zlib, MPEG audio, a Windows program) one time in a thousand.
func writeLibrary(t *testing.T, lib string, names ...string) {
	t.Helper()
	for i, name := range names {
		data := make([]byte, 4<<10+i)
		rand.Read(data)
		copy(data, "\x00\x00\x00\x00clip\x00\x00\x00\x00")
		writeOld(t, filepath.Join(lib, name), data)
	}
}

// farPeer is a peer ID in the shape of libp2p's, of the peer whose
// records the tests merge.
const farPeer = "12D3KooWFarPeerFarPeerFarPeerFarPeerFarPeerFarPeer"

// library answers GET /api/library?query on n.
func library(t *testing.T, n *node.Node, query string) api.LibraryPage {
	t.Helper()
	var p api.LibraryPage
	getJSON(t, n, "/api/library?"+query, &p)
	return p
}

// line is an entry in a few words: its title, year, SxxEyy, episode
// title, source when not local, the counts of a show or season.
func line(e api.LibraryEntry) string {
	s := e.Title
	if e.Year > 0 {
		s += fmt.Sprintf(" (%d)", e.Year)
	}
	if e.Season != nil && e.Episode != nil {
		s += fmt.Sprintf(" S%02dE%02d", *e.Season, *e.Episode)
	} else if e.Season != nil {
		s += fmt.Sprintf(" season %d", *e.Season)
	}
	if e.EpisodeTitle != "" {
		s += " " + e.EpisodeTitle
	}
	if e.Kind == "show" {
		s += fmt.Sprintf(": %d seasons", e.Seasons)
	}
	if e.Kind != "file" {
		s += fmt.Sprintf(", %d episodes", e.Episodes)
	}
	if e.Source != "" && e.Source != "local" {
		s += " from " + e.Source
	}
	return s
}

func lines(p api.LibraryPage) []string {
	out := []string{}
	for _, e := range p.Entries {
		out = append(out, line(e))
	}
	return out
}

// TestAPI_Library: the lists of GET /api/library on a real node: movies
// by title then year, shows by title, a show's seasons and a season's
// episodes in number order, recent newest first, pages, counts; a file
// known only from peers listed with its source; a file added or deleted
// while the node runs enters or leaves the lists; sidecars stay out.
func TestAPI_Library(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	writeLibrary(t, lib,
		"Movies/Zulu.1964.mkv", "Movies/Heat.1995.mkv", "Movies/Heat.1986.mkv", "Movies/Alien.1979.mkv", "Movies/Heat.1995.srt",
		"TV/The Office/The.Office.S02E01.mkv", "TV/The Office/The.Office.S01E02.mkv", "TV/The Office/The.Office.S01E01.mkv",
		"TV/Arrow/Arrow.S01E01.mkv")
	n := startNodeWith(t, lib, nil)
	waiting.For(t, "the catalog's load", func() bool { return library(t, n, "").Files.Loaded && library(t, n, "").Files.Local == 9 })

	for _, tt := range []struct {
		query string
		want  []string
		pages int
	}{
		{"view=movies", []string{"Alien (1979)", "Heat (1986)", "Heat (1995)", "Zulu (1964)"}, 1},
		{"view=movies&limit=3", []string{"Alien (1979)", "Heat (1986)", "Heat (1995)"}, 2},
		{"view=movies&limit=3&page=2", []string{"Zulu (1964)"}, 2},
		{"view=movies&limit=3&page=3", []string{}, 2},
		{"view=shows", []string{"Arrow: 1 seasons, 1 episodes", "The Office: 2 seasons, 3 episodes"}, 1},
		{"show=the+office", []string{"The Office season 1, 2 episodes", "The Office season 2, 1 episodes"}, 1},
		{"show=the+office&season=1", []string{"The Office S01E01", "The Office S01E02"}, 1},
		{"show=the+office&season=2&limit=1", []string{"The Office S02E01"}, 1},
	} {
		t.Run(tt.query, func(t *testing.T) {
			p := library(t, n, tt.query)
			if got := lines(p); !slices.Equal(got, tt.want) || p.Pages != tt.pages {
				t.Errorf("%q (%d pages), want %q (%d pages)", got, p.Pages, tt.want, tt.pages)
			}
			for _, e := range p.Entries {
				if e.Kind == "file" && (e.CID == "" || e.Source != "local") {
					t.Errorf("file entry %+v: want its CID and source local", e)
				}
			}
		})
	}
	if p := library(t, n, "show=the+office&season=1"); p.View != "episodes" || p.ShowTitle != "The Office" || p.Season == nil || *p.Season != 1 {
		t.Errorf("episodes page %+v", p)
	}
	recent := library(t, n, "")
	if recent.View != "recent" || recent.Total != 8 || len(recent.Entries) != 8 {
		t.Errorf("recent: %+v, want the 8 videos (not the subtitle)", recent)
	}
	alien := canonicalOf(t, filepath.Join(lib, "Movies/Alien.1979.mkv"))
	if p := library(t, n, "view=movies"); p.Entries[0].CID != alien || p.Total != 4 || p.Files != (api.LibraryCounts{Local: 9, Loaded: true}) {
		t.Errorf("movies: %+v, want Alien first as %s", p, alien)
	}
	for query, says := range map[string]string{
		"show=lost":                `no show "lost" in the library`,
		"show=the+office&season=3": `show "the office" has no season 3`,
	} {
		if resp, body := do(t, n, "GET", "/api/library?"+query, nil); resp.StatusCode != 404 || !jsonErrorSays(body, says) {
			t.Errorf("%s: %s %s, want 404 saying %q", query, resp.Status, body, says)
		}
	}

	// A file known only from a peer, a file added and one deleted.
	peerID := farPeer
	far := "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"
	if _, err := n.Store().MergeRecord(context.Background(), peerID, []string{far},
		map[string]string{"titles/eng": "Far Away", "movieYear": "2001", "fileType": "video", "sizeByte": "7"}); err != nil {
		t.Fatal(err)
	}
	writeLibrary(t, lib, "Movies/Brazil.1985.mkv")
	if err := os.Remove(filepath.Join(lib, "Movies/Zulu.1964.mkv")); err != nil {
		t.Fatal(err)
	}
	// The household's own lists hold its own files; the peer's film is
	// in the list of files from other households.
	want := []string{"Alien (1979)", "Brazil (1985)", "Heat (1986)", "Heat (1995)"}
	waiting.For(t, "the movies to follow the changes", func() bool { return slices.Equal(lines(library(t, n, "view=movies")), want) })
	waiting.For(t, "the peer's film in view peers", func() bool {
		return slices.Equal(lines(library(t, n, "view=peers")), []string{"Far Away (2001) from " + peerID})
	})
	p := library(t, n, "limit=1")
	if got := lines(p); !slices.Equal(got, []string{"Brazil (1985)"}) || p.Pages != 8 {
		t.Errorf("recent, first page of 1: %q (%d pages), want the file added last, of the 8 local videos", got, p.Pages)
	}
	if p.Files != (api.LibraryCounts{Local: 9, FromPeers: 1, Loaded: true}) {
		t.Errorf("counts %+v, want 9 local, 1 from peers", p.Files)
	}
	var st api.Status
	getJSON(t, n, "/api/status", &st)
	if st.Files != p.Files || st.Roots != 10 || !slices.Equal(st.Libraries, []string{lib}) {
		t.Errorf("status: files %+v, roots %d, libraries %q; want %+v, 10, [%s]", st.Files, st.Roots, st.Libraries, p.Files, lib)
	}
}

// jsonErrorSays reports whether body is a JSON error whose message
// holds says.
func jsonErrorSays(body []byte, says string) bool {
	var e struct {
		Error string `json:"error"`
	}
	return json.Unmarshal(body, &e) == nil && strings.Contains(e.Error, says)
}
