package dav

import (
	"encoding/xml"
	"slices"
	"strings"
	"testing"

	"github.com/metamesh/node/store"
)

func num(n int) *int { return &n }

// paths lists every path of t, folders with a trailing "/".
func paths(t *Tree) []string {
	var out []string
	var walk func(e *Entry, dir string)
	walk = func(e *Entry, dir string) {
		for _, k := range e.Entries() {
			if k.Dir {
				out = append(out, dir+k.Name+"/")
				walk(k, dir+k.Name+"/")
				continue
			}
			out = append(out, dir+k.Name)
		}
	}
	walk(t.Root, "")
	return out
}

func video(root, cid string, s store.Summary, ext string) Item {
	s.FileType = "video"
	return Item{Root: store.RootID(root), CID: cid, Summary: s, Ext: ext}
}

func TestLayout(t *testing.T) {
	film := video("01", "film", store.Summary{Title: "Heat", Year: 1995, VideoType: "movie"}, ".mkv")
	film.Subtitles = []Subtitle{{"eng", "sub-en"}, {"eng", "sub-en2"}, {"fre", "sub-missing"}}
	film.Poster = "poster"
	sidecars := []Item{
		{Root: "90", CID: "sub-en", Summary: store.Summary{FileType: "text", Size: 10}, Ext: ".srt"},
		{Root: "91", CID: "sub-en2", Summary: store.Summary{FileType: "text", Size: 11}, Ext: ".ass"},
		{Root: "92", CID: "poster", Summary: store.Summary{FileType: "image", Size: 12}, Ext: ".jpg"},
	}
	tests := []struct {
		name  string
		items []Item
		want  []string
	}{
		{"a film with its subtitles and poster", append([]Item{film}, sidecars...), []string{
			"Movies/", "Movies/Heat (1995)/", "Movies/Heat (1995)/Heat (1995).eng.2.ass", "Movies/Heat (1995)/Heat (1995).eng.srt",
			"Movies/Heat (1995)/Heat (1995).mkv", "Movies/Heat (1995)/Heat (1995).nfo", "Movies/Heat (1995)/poster.jpg"}},
		{"a film without a year", []Item{video("01", "a", store.Summary{Title: "Heat", VideoType: "movie"}, ".mp4")}, []string{
			"Movies/", "Movies/Heat/", "Movies/Heat/Heat.mp4", "Movies/Heat/Heat.nfo"}},
		{"unsafe title", []Item{video("01", "a", store.Summary{Title: "AC/DC: Live", Year: 1992, VideoType: "movie"}, ".mkv")}, []string{
			"Movies/", "Movies/AC-DC - Live (1992)/", "Movies/AC-DC - Live (1992)/AC-DC - Live (1992).mkv", "Movies/AC-DC - Live (1992)/AC-DC - Live (1992).nfo"}},
		{"two films of one title and year, the older plain", []Item{
			video("02", "b", store.Summary{Title: "Twin", Year: 2001, VideoType: "movie"}, ".mkv"),
			video("01", "a", store.Summary{Title: "twin", Year: 2001, VideoType: "movie"}, ".mkv")}, []string{
			"Movies/", "Movies/Twin (2001) (2)/", "Movies/Twin (2001) (2)/Twin (2001) (2).mkv", "Movies/Twin (2001) (2)/Twin (2001) (2).nfo",
			"Movies/twin (2001)/", "Movies/twin (2001)/twin (2001).mkv", "Movies/twin (2001)/twin (2001).nfo"}},
		{"episodes, with and without a title", []Item{
			video("01", "a", store.Summary{Title: "The Wire", Season: num(1), Episode: num(1), EpisodeTitle: "The Target", VideoType: "episode"}, ".mkv"),
			video("02", "b", store.Summary{Title: "the wire", Season: num(1), Episode: num(2), VideoType: "episode"}, ".mkv"),
			video("03", "c", store.Summary{Title: "The Wire", Season: num(2), Episode: num(1), VideoType: "episode"}, ".mkv")}, []string{
			"TV Shows/", "TV Shows/The Wire/", "TV Shows/The Wire/Season 01/",
			"TV Shows/The Wire/Season 01/The Wire - S01E01 - The Target.mkv", "TV Shows/The Wire/Season 01/The Wire - S01E01 - The Target.nfo",
			"TV Shows/The Wire/Season 01/the wire - S01E02.mkv", "TV Shows/The Wire/Season 01/the wire - S01E02.nfo",
			"TV Shows/The Wire/Season 02/", "TV Shows/The Wire/Season 02/The Wire - S02E01.mkv", "TV Shows/The Wire/Season 02/The Wire - S02E01.nfo",
			"TV Shows/The Wire/tvshow.nfo"}},
		{"other and unknown videos; a title that is the file's name", []Item{
			video("01", "a", store.Summary{Title: "VID_1.mp4", VideoType: "other"}, ".mp4"),
			video("02", "b", store.Summary{Title: "clip", VideoType: "unknown"}, "")}, []string{
			"Other videos/", "Other videos/VID_1.mp4", "Other videos/VID_1.nfo", "Other videos/clip", "Other videos/clip.nfo"}},
		{"sidecars and other files alone are not listed", sidecars, nil},
		{"a peer's subtitle is not listed beside a local film", []Item{
			{Root: "01", CID: "film", Summary: store.Summary{Title: "Heat", Year: 1995, VideoType: "movie", FileType: "video"}, Ext: ".mkv", Subtitles: []Subtitle{{"eng", "peer-sub"}}, Poster: "peer-poster"},
			{Root: "02", CID: "peer-sub", Peer: "peerA", Summary: store.Summary{FileType: "text"}, Ext: ".srt"},
			{Root: "03", CID: "peer-poster", Peer: "peerA", Summary: store.Summary{FileType: "image"}, Ext: ".jpg"}}, []string{
			"Movies/", "Movies/Heat (1995)/", "Movies/Heat (1995)/Heat (1995).mkv", "Movies/Heat (1995)/Heat (1995).nfo"}},
		{"peers' files under their households", []Item{
			{Root: "01", CID: "p1", Peer: "peerB", Summary: store.Summary{Title: "Arrival", Year: 2016, VideoType: "movie"}, Ext: ".mkv"},
			{Root: "02", CID: "p2", Peer: "peerA", Summary: store.Summary{Title: "Dune", Year: 2021}, Ext: ".mkv"},
			{Root: "03", CID: "p3", Peer: "peerC", Summary: store.Summary{Title: "Show", Season: num(1), Episode: num(1)}}}, []string{
			"From other households/", "From other households/A - B/", "From other households/A - B/Movies/", "From other households/A - B/Movies/Dune (2021)/",
			"From other households/A - B/Movies/Dune (2021)/Dune (2021).mkv", "From other households/A - B/Movies/Dune (2021)/Dune (2021).nfo",
			"From other households/neighbours (2)/", "From other households/neighbours (2)/TV Shows/",
			"From other households/neighbours (2)/TV Shows/Show/", "From other households/neighbours (2)/TV Shows/Show/Season 01/",
			"From other households/neighbours (2)/TV Shows/Show/Season 01/Show - S01E01", "From other households/neighbours (2)/TV Shows/Show/Season 01/Show - S01E01.nfo",
			"From other households/neighbours (2)/TV Shows/Show/tvshow.nfo",
			"From other households/Neighbours/", "From other households/Neighbours/Movies/", "From other households/Neighbours/Movies/Arrival (2016)/",
			"From other households/Neighbours/Movies/Arrival (2016)/Arrival (2016).mkv", "From other households/Neighbours/Movies/Arrival (2016)/Arrival (2016).nfo"}},
	}
	names := map[string]string{"peerA": "A:B", "peerB": "Neighbours", "peerC": "neighbours"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := paths(Layout(tt.items, func(p string) string { return names[p] }))
			want := slices.Clone(tt.want)
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestLayout_FindAndBytes(t *testing.T) {
	film := video("01", "film", store.Summary{Title: "Heat", Year: 1995, VideoType: "movie", Size: 1234}, ".mkv")
	tree := Layout([]Item{film}, nil)
	for _, p := range []string{"/Movies/Heat (1995)/Heat (1995).mkv", "Movies/heat (1995)/HEAT (1995).MKV", "/Movies//Heat (1995)/./Heat (1995).mkv"} {
		e := tree.Find(p)
		if e == nil || e.CID != "film" || e.Size != 1234 || e.Peer {
			t.Errorf("Find(%q) = %+v", p, e)
		}
	}
	for _, p := range []string{"/Movies/Nope", "/Movies/Heat (1995)/Heat (1995).mkv/x", "/../etc"} {
		if e := tree.Find(p); e != nil && e != tree.Root {
			t.Errorf("Find(%q) = %+v, want none", p, e)
		}
	}
}

func TestNFO(t *testing.T) {
	film := video("01", "film", store.Summary{Title: "Amélie & <Co>", Year: 2001, IMDbID: "tt0211915"}, ".mkv")
	film.OriginalTitle, film.Plot, film.Genres, film.Rating, film.TMDbID = "Le Fabuleux Destin", "Paris.\nMontmartre.", []string{"Comedy", "Romance"}, "8.3", "194"
	var m struct {
		XMLName       xml.Name `xml:"movie"`
		Title         string   `xml:"title"`
		OriginalTitle string   `xml:"originaltitle"`
		Year          int      `xml:"year"`
		Plot          string   `xml:"plot"`
		Genre         []string `xml:"genre"`
		Rating        string   `xml:"rating"`
		IDs           []struct {
			Type    string `xml:"type,attr"`
			Default bool   `xml:"default,attr"`
			Value   string `xml:",chardata"`
		} `xml:"uniqueid"`
	}
	if err := xml.Unmarshal(movieNFO(film), &m); err != nil {
		t.Fatal(err)
	}
	if m.Title != film.Title || m.OriginalTitle != film.OriginalTitle || m.Year != 2001 || m.Plot != film.Plot || !slices.Equal(m.Genre, film.Genres) || m.Rating != "8.3" ||
		len(m.IDs) != 2 || m.IDs[0].Type != "imdb" || !m.IDs[0].Default || m.IDs[0].Value != "tt0211915" || m.IDs[1].Type != "tmdb" || m.IDs[1].Value != "194" {
		t.Errorf("movie: %+v", m)
	}
	ep := video("02", "ep", store.Summary{Title: "The Wire", Season: num(1), Episode: num(2)}, ".mkv")
	ep.Aired = "2002-06-09"
	var e struct {
		XMLName   xml.Name `xml:"episodedetails"`
		Title     string   `xml:"title"`
		ShowTitle string   `xml:"showtitle"`
		Season    int      `xml:"season"`
		Episode   int      `xml:"episode"`
		Aired     string   `xml:"aired"`
	}
	if err := xml.Unmarshal(episodeNFO(ep), &e); err != nil {
		t.Fatal(err)
	}
	if e.Title != "Episode 2" || e.ShowTitle != "The Wire" || e.Season != 1 || e.Episode != 2 || e.Aired != "2002-06-09" {
		t.Errorf("episode: %+v", e)
	}
	var s struct {
		XMLName xml.Name `xml:"tvshow"`
		Title   string   `xml:"title"`
	}
	if err := xml.Unmarshal(showNFO("A\x01B"), &s); err != nil || !strings.HasPrefix(s.Title, "A") {
		t.Errorf("tvshow with a control character: %v %+v", err, s)
	}
}
