package ingest_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store/storetest"
)

// Subtitles and artwork beside a video, in the layouts Jellyfin and Kodi
// name, are linked from its fields by their canonical CIDs, and follow as
// they are added, replaced and removed.
func TestWatch_SidecarLinks(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	cfg := testConfig(l)
	cfg.Extractors = []ingest.Extractor{ingest.FileInfo{}, ingest.Filename{}, ingest.NFOReader{}}
	cidOf := func(rel string) string {
		h, err := ingest.HashFile(bg, l.path(rel))
		if err != nil {
			t.Fatal(err)
		}
		return h.IPFS
	}
	// Present before the first scan.
	movie := l.write("Movies/Heat (1995)/Heat.1995.mkv", randBytes(t, 70<<10))
	l.write("Movies/Heat (1995)/Heat.1995.en.srt", []byte("1\n00:00:01,000 --> 00:00:02,000\nHello\n"))
	l.write("Movies/Heat (1995)/Heat.1995.pt-BR.forced.srt", []byte("1\n00:00:01,000 --> 00:00:02,000\nOla\n"))
	l.write("Movies/Heat (1995)/Heat.1995.srt", []byte("1\n00:00:01,000 --> 00:00:02,000\n?\n"))
	l.write("Movies/Heat (1995)/poster.jpg", randBytes(t, 3<<10))
	l.write("Movies/Heat (1995)/Heat.1995-fanart.jpg", randBytes(t, 4<<10))
	episode := l.write("Shows/Lost/Season 1/Lost.S01E01.mkv", randBytes(t, 80<<10))
	l.write("Shows/Lost/poster.jpg", randBytes(t, 5<<10))
	l.write("Shows/Lost/season01-poster.jpg", randBytes(t, 6<<10))
	l.write("Shows/Lost/Season 1/Subs/Lost.S01E01/2_English.srt", []byte("1\n00:00:01,000 --> 00:00:02,000\nHi\n"))
	in := watchWith(t, s, cfg)
	links := func(video string) map[string]string {
		_, d := docOf(t, s, video)
		out := map[string]string{}
		for k, v := range d.Fields {
			if strings.HasPrefix(k, "art/") || strings.HasPrefix(k, "subtitles/") || strings.HasPrefix(k, "subtitleflags/") {
				out[k] = v
			}
		}
		return out
	}
	want := map[string]string{
		"subtitles/eng/0": cidOf("Movies/Heat (1995)/Heat.1995.en.srt"),
		"subtitles/por/0": cidOf("Movies/Heat (1995)/Heat.1995.pt-BR.forced.srt"), "subtitleflags/por/0": "forced",
		"subtitles/und/0": cidOf("Movies/Heat (1995)/Heat.1995.srt"),
		"art/poster":      cidOf("Movies/Heat (1995)/poster.jpg"),
		"art/fanart":      cidOf("Movies/Heat (1995)/Heat.1995-fanart.jpg"),
	}
	waiting.For(t, "the movie's links", func() bool { return reflect.DeepEqual(links(movie), want) })
	wantEp := map[string]string{
		"art/poster":      cidOf("Shows/Lost/season01-poster.jpg"),
		"subtitles/eng/0": cidOf("Shows/Lost/Season 1/Subs/Lost.S01E01/2_English.srt"),
	}
	waiting.For(t, "the episode's links", func() bool { return reflect.DeepEqual(links(episode), wantEp) })

	// A replaced poster has a new CID; a removed subtitle goes; a new one
	// arrives.
	l.write("Movies/Heat (1995)/poster.jpg", randBytes(t, 3<<10))
	want["art/poster"] = cidOf("Movies/Heat (1995)/poster.jpg")
	if err := os.Remove(l.path("Movies/Heat (1995)/Heat.1995.en.srt")); err != nil {
		t.Fatal(err)
	}
	delete(want, "subtitles/eng/0")
	l.write("Movies/Heat (1995)/Heat.1995.German.sdh.srt", []byte("1\n00:00:01,000 --> 00:00:02,000\nHallo\n"))
	want["subtitles/ger/0"], want["subtitleflags/ger/0"] = cidOf("Movies/Heat (1995)/Heat.1995.German.sdh.srt"), "sdh"
	waiting.For(t, "the changed links", func() bool { return reflect.DeepEqual(links(movie), want) })
	// The season poster gone, the show's is the episode's.
	if err := os.Remove(l.path("Shows/Lost/season01-poster.jpg")); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the show's poster", func() bool { return links(episode)["art/poster"] == cidOf("Shows/Lost/poster.jpg") })
	// A renamed video keeps the links that do not name it (the folder's
	// poster) and loses those of its old name.
	renamed := l.path("Movies/Heat (1995)/Heat.1995.Remastered.mkv")
	if err := os.Rename(movie, renamed); err != nil {
		t.Fatal(err)
	}
	wantRenamed := map[string]string{"art/poster": want["art/poster"]}
	waiting.For(t, "the renamed video's links", func() bool { return known(s, renamed) && reflect.DeepEqual(links(renamed), wantRenamed) })
	idle(t, in)
	// A sidecar is a file of its own.
	if _, d := docOf(t, s, l.path("Movies/Heat (1995)/poster.jpg")); d.CanonicalCID() != want["art/poster"] {
		t.Errorf("the poster's own document: %s", d.CanonicalCID())
	}
	mustCheck(t, s)
}

// Subtitle names as Jellyfin, Kodi and Plex document them: the language
// (ISO 639-2/B, und when none) and flags between the video's name and
// the extension, or in a Subs folder.
func TestSubtitleName(t *testing.T) {
	const stem = "Heat.1995"
	for _, tt := range []struct {
		path, lang string
		flags      []string
	}{
		{"/m/Heat.1995.srt", "und", nil},
		{"/m/Heat.1995.en.srt", "eng", nil},
		{"/m/Heat.1995.eng.forced.srt", "eng", []string{"forced"}},
		{"/m/Heat.1995.English.sdh.srt", "eng", []string{"sdh"}},
		{"/m/Heat.1995.pt-BR.srt", "por", nil},
		{"/m/Heat.1995.fr.default.forced.ass", "fre", []string{"default", "forced"}},
		{"/m/Heat.1995.de.hi.vtt", "ger", []string{"sdh"}},
		{"/m/Heat.1995.ja.cc.srt", "jpn", []string{"cc"}},
		{"/m/Subs/Heat.1995/2_English.srt", "eng", nil},
		{"/m/Subs/Spanish.srt", "spa", nil},
		{"/m/Heat.1995.Commentary.srt", "und", nil},
	} {
		lang, flags := ingest.SubtitleName(tt.path, stem)
		if lang != tt.lang || !reflect.DeepEqual(flags, tt.flags) {
			t.Errorf("%s: %s %v, want %s %v", tt.path, lang, flags, tt.lang, tt.flags)
		}
	}
}

// Artwork names: the kind each fills and the name before it.
func TestArtName(t *testing.T) {
	for _, tt := range []struct{ name, prefix, kind string }{
		{"poster", "", "poster"}, {"folder", "", "poster"}, {"cover", "", "poster"},
		{"fanart", "", "fanart"}, {"backdrop", "", "fanart"}, {"clearlogo", "", "clearlogo"},
		{"heat.1995-poster", "heat.1995", "poster"}, {"season02-poster", "season02", "poster"},
		{"heat.1995-landscape", "heat.1995", "landscape"}, {"screenshot", "", ""}, {"posters", "", ""},
	} {
		if prefix, kind := ingest.ArtName(tt.name); prefix != tt.prefix || kind != tt.kind {
			t.Errorf("%s: %q %q, want %q %q", tt.name, prefix, kind, tt.prefix, tt.kind)
		}
	}
	for p, want := range map[string]bool{"/m/poster.jpg": true, "/m/a-fanart.webp": true, "/m/a.nfo": true, "/m/a.en.srt": true,
		"/m/holiday.jpg": false, "/m/a.mkv": false, "/m/poster.gif": false} {
		if got := ingest.IsSidecar(p); got != want {
			t.Errorf("IsSidecar(%s) = %v", p, got)
		}
	}
}
