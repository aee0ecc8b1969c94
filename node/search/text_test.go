package search

import (
	"reflect"
	"testing"

	"github.com/metamesh/node/store"
)

// TestKeyTokens: a local file provides DHT keys for the keyed tokens of
// its titles, IDs and genres, never of its file name, year, stop words or
// plot; a root known only from peers, or gone, for none.
func TestKeyTokens(t *testing.T) {
	fields := map[string]string{"filePath": "/lib/Some.Release.Name.1080p.mkv",
		"titles/eng": "The Lighthouse Keepers", "originalTitle": "Les Gardiens du Phare", "movieYear": "2019",
		"genre/0": "Drama", "imdbid": "tt0113277", "tmdbid": "949", "plot/eng": "Two keepers on a rock"}
	got := KeyTokens(store.Document{Root: "r1", Fields: fields})
	want := []string{"949", "drama", "gardiens", "keepers", "lighthouse", "phare", "tt0113277"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("key tokens = %q, want %q (no file name, year, stop word or plot)", got, want)
	}
	if got := KeyTokens(store.Document{}); got != nil {
		t.Errorf("a gone root gives key tokens %q", got)
	}
	home := map[string]string{"filePath": "/lib/DCIM/VID_20190314_181510.mp4", "titles/eng": "Grandma's Birthday", "videoType": "other"}
	if got := KeyTokens(store.Document{Root: "r3", Fields: home}); got != nil {
		t.Errorf("a home video gives key tokens %q", got)
	}
	peers := map[string]string{"origin/12D3KooWPeer/titles/eng": "Remote Only Film"}
	if got := KeyTokens(store.Document{Root: "r2", Fields: peers, Peers: []string{"12D3KooWPeer"}}); got != nil {
		t.Errorf("a root known only from a peer gives key tokens %q", got)
	}
}

// TestTextOf: title tokens (titles, the IMDb ID) apart from the others
// (file name, year, season and episode, TMDB and TVDB IDs, genres); a
// sidecar has none.
func TestTextOf(t *testing.T) {
	d := store.Document{Root: "r1", Fields: map[string]string{"filePath": "/lib/Show.S01E02.mkv", "titles/eng": "Show",
		"season": "1", "episode": "2", "imdbid": "tt0000001", "tvdbid": "81189", "genre/0": "Drama", "year": "2001"}}
	// "show" is in the file name too: a token is a title token when any
	// title holds it.
	want := Text{Title: []string{"show", "tt0000001"}, Other: []string{"2001", "81189", "drama", "e02", "mkv", "s01", "s01e02"}}
	if got := TextOf(d); !reflect.DeepEqual(got, want) {
		t.Errorf("TextOf = %q, want %q", got, want)
	}
	d.Fields[store.SidecarField] = "subtitle"
	if got := TextOf(d); !got.Empty() {
		t.Errorf("a sidecar's text = %+v, want none", got)
	}
}

// The consumers' Fields together take every field a write to which
// changed what the node keeps of a root (the search index's text and sort
// key, the catalog's entry, the announcer's key tokens), a peer's claim
// by its own name, and Field alone every field TextOf reads.
func TestFields_Cover(t *testing.T) {
	read := []string{"filePath", "fileName", "movieYear", "year", "season", "episode", "sizeByte", "fileType",
		store.PosterField, "title", "originalTitle", "episodeTitle", "titles/eng", "imdbid", "tmdbid", "tvdbid",
		"genre/0", "genre/3", store.SidecarField}
	for _, f := range read {
		for _, name := range []string{f, "origin/12D3KooWPeer/" + f} {
			n := store.FieldName(name)
			if !Field(n) && !store.CatalogField(n) && !KeyField(n) {
				t.Errorf("no consumer takes a write to %q", name)
			}
		}
	}
	for _, f := range []string{"filePath", "fileName", "movieYear", "year", "season", "episode", "title",
		"originalTitle", "episodeTitle", "titles/fre", "imdbid", "tmdbid", "tvdbid", "genre/1", store.SidecarField} {
		if !Field(f) {
			t.Errorf("Field(%q) is false: a write to it would not re-index", f)
		}
	}
	for _, f := range []string{"title", "titles/eng", "originalTitle", "episodeTitle", "imdbid", "tmdbid", "tvdbid", "genre/0"} {
		if !KeyField(f) {
			t.Errorf("KeyField(%q) is false: a write to it would not change the provided keys", f)
		}
	}
	for _, f := range []string{"plot/eng", "mtime", "duplicates", "cids/bafk"} {
		if Field(f) || KeyField(f) || store.CatalogField(f) {
			t.Errorf("a write to %q has a consumer read the root again; none reads it", f)
		}
	}
}
