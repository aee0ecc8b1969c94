package ingest_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// NFO files as the tools households use write them (testdata/nfo).
func TestParseNFO_Kodi(t *testing.T) {
	tests := []struct {
		file     string
		kind     string
		want     map[string]string
		episodes []int
	}{
		{"movie.nfo", "movie", map[string]string{
			"titles/eng": "Inception", "originalTitle": "Inception", "movieYear": "2010", "releasedate": "2010-07-15",
			"plot/eng": "A thief who steals corporate secrets through the use of dream-sharing technology.\n\nIs given the inverse task of planting an idea.",
			"genre/0":  "Action", "genre/1": "Science Fiction", "rating": "8.369", "mpaa": "PG-13", "imdbid": "tt1375666", "tmdbid": "27205",
		}, nil},
		{"tvshow.nfo", "tvshow", map[string]string{
			"titles/eng": "Breaking Bad", "originalTitle": "Breaking Bad", "movieYear": "2008", "releasedate": "2008-01-20",
			"plot/eng": "A chemistry teacher turned manufacturer.", "genre/0": "Drama", "genre/1": "Crime", "rating": "9.5",
			"mpaa": "TV-MA", "tvdbid": "81189", "imdbid": "tt0903747",
		}, nil},
		{"episode-multi.nfo", "episodedetails", map[string]string{
			"episodeTitle": "Pilot (1)", "titles/eng": "Lost", "season": "1", "episode": "1", "releasedate": "2004-09-22",
			"movieYear": "2004", "plot/eng": "Survivors of a crash.", "tvdbid": "127131",
		}, []int{1, 2}},
		{"url-imdb.nfo", "url", map[string]string{"imdbid": "tt0133093"}, nil},
		{"latin1.nfo", "movie", map[string]string{"titles/eng": "Amélie", "movieYear": "2001", "imdbid": "tt0211915"}, nil},
		{"utf16le.nfo", "movie", map[string]string{"titles/eng": "Amélie", "movieYear": "2001", "imdbid": "tt0211915"}, nil},
		{"utf16be.nfo", "movie", map[string]string{"titles/eng": "Amélie", "movieYear": "2001", "imdbid": "tt0211915"}, nil},
		{"xml-then-url.nfo", "movie", map[string]string{"titles/eng": "The Matrix", "movieYear": "1999", "tmdbid": "603"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "nfo", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			n, err := ingest.ParseNFO(data)
			if err != nil {
				t.Fatal(err)
			}
			if n.Kind != tt.kind || !reflect.DeepEqual(n.Fields, tt.want) || !reflect.DeepEqual(n.Episodes, tt.episodes) {
				t.Errorf("got %s %v %v\nwant %s %v %v", n.Kind, n.Fields, n.Episodes, tt.kind, tt.want, tt.episodes)
			}
		})
	}
}

// Malformed and hostile NFOs are refused whole, with ErrBadNFO.
func TestParseNFO_Hostile(t *testing.T) {
	deep := strings.Repeat("<a>", 100) + strings.Repeat("</a>", 100)
	for name, data := range map[string]string{
		"empty":            "",
		"text":             "just some words",
		"not closed":       "<movie><title>x</title>",
		"another element":  "<musicvideo><title>x</title></musicvideo>",
		"deep":             "<movie>" + deep + "</movie>",
		"entity expansion": `<?xml version="1.0"?><!DOCTYPE movie [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]><movie><title>&b;</title></movie>`,
		"external entity":  `<?xml version="1.0"?><!DOCTYPE movie [<!ENTITY x SYSTEM "file:///etc/passwd">]><movie><title>&x;</title></movie>`,
		"unknown entity":   `<movie><title>&nbsp;</title></movie>`,
		"encoding":         `<?xml version="1.0" encoding="Shift_JIS"?><movie><title>x</title></movie>`,
		"huge":             "<movie><plot>" + strings.Repeat("x", ingest.MaxNFOSize) + "</plot></movie>",
	} {
		t.Run(name, func(t *testing.T) {
			if n, err := ingest.ParseNFO([]byte(data)); !errors.Is(err, ingest.ErrBadNFO) {
				t.Errorf("got %+v, %v; want ErrBadNFO", n, err)
			}
		})
	}
	// Values of the wrong shape are left out, not the NFO.
	n, err := ingest.ParseNFO([]byte(`<movie><title> A   Title </title><year>20x0</year><rating>11</rating><uniqueid type="imdb">nm0000001</uniqueid><uniqueid type="tmdb">12a</uniqueid></movie>`))
	if err != nil || !reflect.DeepEqual(n.Fields, map[string]string{"titles/eng": "A Title"}) {
		t.Errorf("got %v, %v; want the title alone", n.Fields, err)
	}
}

func FuzzParseNFO(f *testing.F) {
	for _, name := range []string{"movie.nfo", "tvshow.nfo", "episode-multi.nfo", "url-imdb.nfo", "latin1.nfo", "xml-then-url.nfo"} {
		data, err := os.ReadFile(filepath.Join("testdata", "nfo", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("<movie><genre>a</genre><genre>b / c</genre></movie>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := ingest.ParseNFO(data)
		if err != nil {
			if !errors.Is(err, ingest.ErrBadNFO) {
				t.Fatalf("error %v is not ErrBadNFO", err)
			}
			return
		}
		switch n.Kind {
		case "movie", "tvshow", "episodedetails", "url":
		default:
			t.Fatalf("kind %q", n.Kind)
		}
		for k := range n.Fields {
			if err := store.ValidField(k); err != nil {
				t.Fatalf("field %q: %v", k, err)
			}
		}
	})
}

// The NFO reader takes a video's own NFO, else its folder's movie.nfo,
// over the nearest tvshow.nfo; a show's IDs go under show/.
func TestNFOReader_Layouts(t *testing.T) {
	l := newLib(t)
	copyNFO := func(name, to string) {
		data, err := os.ReadFile(filepath.Join("testdata", "nfo", name))
		if err != nil {
			t.Fatal(err)
		}
		l.write(to, data)
	}
	copyNFO("movie.nfo", "Movies/Inception (2010)/movie.nfo")
	copyNFO("tvshow.nfo", "Shows/Breaking Bad/tvshow.nfo")
	l.write("Shows/Breaking Bad/Season 5/Breaking.Bad.S05E14.nfo", []byte(`<episodedetails><title>Ozymandias</title><season>5</season><episode>14</episode><aired>2013-09-15</aired><plot>Everyone copes.</plot><uniqueid type="imdb">tt2301451</uniqueid></episodedetails>`))
	l.write("Shows/Breaking Bad/Season 5/Breaking.Bad.S05E15.nfo", []byte("<episodedetails><title>broken"))
	read := func(rel string) (map[string]string, error) {
		return ingest.NFOReader{}.Extract(bg, &ingest.Subject{Path: l.path(rel), Library: l.dir, FileType: "video"})
	}
	got, err := read("Movies/Inception (2010)/Inception.2010.1080p.mkv")
	if err != nil || got["imdbid"] != "tt1375666" || got["titles/eng"] != "Inception" {
		t.Errorf("movie.nfo: %v, %v", got, err)
	}
	got, err = read("Shows/Breaking Bad/Season 5/Breaking.Bad.S05E14.mkv")
	want := map[string]string{"titles/eng": "Breaking Bad", "originalTitle": "Breaking Bad", "movieYear": "2013", "releasedate": "2013-09-15",
		"plot/eng": "Everyone copes.", "genre/0": "Drama", "genre/1": "Crime", "rating": "9.5", "mpaa": "TV-MA",
		"show/tvdbid": "81189", "show/imdbid": "tt0903747", "episodeTitle": "Ozymandias", "season": "5", "episode": "14", "imdbid": "tt2301451"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("episode over tvshow.nfo:\n got %v, %v\nwant %v", got, err, want)
	}
	got, err = read("Shows/Breaking Bad/Season 5/Breaking.Bad.S05E15.mkv")
	if !errors.Is(err, ingest.ErrBadNFO) || got["show/tvdbid"] != "81189" || got["episodeTitle"] != "" {
		t.Errorf("a broken episode NFO: %v, %v; want the show's fields and the error", got, err)
	}
	if got, err := (ingest.NFOReader{}).Extract(bg, &ingest.Subject{Path: l.path("x.srt"), Library: l.dir, FileType: "text"}); got != nil || err != nil {
		t.Errorf("not a video: %v, %v", got, err)
	}
}

// An NFO added, changed and removed beside a watched video: the video's
// fields follow each time, the NFO's values over the name's, and the
// name's back once it is gone; the video is never hashed again.
func TestWatch_NFOFollowsTheVideo(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	cfg := testConfig(l)
	cfg.Extractors = []ingest.Extractor{ingest.FileInfo{}, ingest.Filename{}, ingest.NFOReader{}}
	in := watchWith(t, s, cfg)
	video := l.write("Movies/Incepshun.2010.1080p.mkv", randBytes(t, 64<<10))
	waiting.For(t, "the video", func() bool { st, err := s.Path(bg, video); return err == nil && st.Hashed })
	idle(t, in)
	field := func(k string) string {
		_, d := docOf(t, s, video)
		return d.Fields[k]
	}
	before, _ := docOf(t, s, video)
	if field("titles/eng") != "Incepshun" {
		t.Fatalf("title from the name: %q", field("titles/eng"))
	}
	nfo := l.write("Movies/Incepshun.2010.1080p.nfo", []byte(`<movie><title>Inception</title><uniqueid type="imdb">tt1375666</uniqueid><genre>Action</genre></movie>`))
	waiting.For(t, "the NFO's title", func() bool { return field("titles/eng") == "Inception" })
	if field("imdbid") != "tt1375666" || field("genre/0") != "Action" || field("movieYear") != "2010" || field("release/resolution") != "1080p" {
		t.Errorf("after the NFO: %v", func() map[string]string { _, d := docOf(t, s, video); return d.Fields }())
	}
	l.write("Movies/Incepshun.2010.1080p.nfo", []byte(`<movie><title>Inception (Director's Copy)</title><genre>Thriller</genre></movie>`))
	waiting.For(t, "the changed NFO", func() bool { return field("titles/eng") == "Inception (Director's Copy)" })
	if field("imdbid") != "" || field("genre/0") != "Thriller" {
		t.Errorf("after the change: imdbid %q genre %q", field("imdbid"), field("genre/0"))
	}
	if err := os.Remove(nfo); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the name's title back", func() bool { return field("titles/eng") == "Incepshun" })
	if field("genre/0") != "" {
		t.Errorf("genre kept after the NFO went: %q", field("genre/0"))
	}
	after, _ := docOf(t, s, video)
	if after.Root != before.Root {
		t.Errorf("the video's root changed: %s → %s", before.Root, after.Root)
	}
	mustCheck(t, s)
}

// An NFO written while no ingester ran is read by the next scan, without
// hashing the video again; an unchanged one is not read again.
func TestScan_NFOWhileDown(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	cfg := testConfig(l)
	cfg.Extractors = []ingest.Extractor{ingest.FileInfo{}, ingest.Filename{}, ingest.NFOReader{}}
	scanWith := func() ingest.Progress {
		p, err := ingest.Scan(bg, s, cfg, time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	video := l.write("Shows/Lost/Season 1/Lost.S01E01.mkv", randBytes(t, 300<<10))
	scanWith()
	l.write("Shows/Lost/tvshow.nfo", []byte(`<tvshow><title>Lost</title><uniqueid type="tvdb">73739</uniqueid><genre>Mystery</genre></tvshow>`))
	p := scanWith()
	_, d := docOf(t, s, video)
	if d.Fields["show/tvdbid"] != "73739" || d.Fields["genre/0"] != "Mystery" || d.Fields["episode"] != "1" {
		t.Errorf("after the rescan: %v", d.Fields)
	}
	if p.BytesHashed >= 300<<10 {
		t.Errorf("the rescan hashed %d bytes: the video again", p.BytesHashed)
	}
	mustCheck(t, s)
}
