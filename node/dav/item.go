package dav

import (
	"cmp"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gabriel-vasile/mimetype"

	"github.com/metamesh/node/store"
)

// Item is what the share shows of one root of the store: a video, or a
// file a video links to (a subtitle, a poster), as its metadata says.
type Item struct {
	Root store.RootID
	// CID is the canonical CID: what the bytes are opened by.
	CID string
	// Peer is the first peer that supplied a file known only from peers
	// (its household's folder); "" for a local file.
	Peer string
	// Summary is what the file's fields say (title, year, season,
	// episode, types), as the library's lists title it.
	store.Summary
	// Ext is the file's extension with its dot (".mkv"): of its path,
	// else of its MIME type; "" when neither says.
	Ext     string
	ModTime time.Time
	// What the .nfo files carry.
	OriginalTitle, Plot, Rating, TMDbID, Aired string
	Genres                                     []string
	// Subtitles are the subtitle files it links to (subtitles/<lang>/<n>),
	// by language then number; Poster the CID of its art/poster.
	Subtitles []Subtitle
	Poster    string
}

// Subtitle is one subtitle link of an Item.
type Subtitle struct {
	Lang string
	CID  string
}

// Local reports a file of the household's libraries.
func (it Item) Local() bool { return it.Peer == "" }

// ItemOf is the item of a document (store.Changes hands whole ones).
func ItemOf(d store.Document) Item {
	f := d.Presented()
	it := Item{Root: d.Root, CID: d.CanonicalCID(), Summary: store.SummaryOfFields(f)}
	if !d.Local() {
		it.Peer = "peer"
		if len(d.Peers) > 0 {
			it.Peer = d.Peers[0]
		}
	}
	it.Ext = extOf(f)
	if ns, err := strconv.ParseInt(f["mtime"], 10, 64); err == nil && ns > 0 {
		it.ModTime = time.Unix(0, ns).UTC()
	}
	it.OriginalTitle, it.Rating, it.TMDbID, it.Aired = f["originalTitle"], f["rating"], f["tmdbid"], f["releasedate"]
	it.Plot = cmp.Or(f["plot/eng"], firstUnder(f, "plot/"))
	it.Poster = f[store.PosterField]
	var genres, subs []string
	for k := range f {
		switch {
		case strings.HasPrefix(k, "genre/"):
			genres = append(genres, k)
		case strings.HasPrefix(k, "subtitles/"):
			subs = append(subs, k)
		}
	}
	slices.SortFunc(genres, byIndex)
	for _, k := range genres {
		it.Genres = append(it.Genres, f[k])
	}
	slices.SortFunc(subs, byIndex)
	for _, k := range subs {
		lang, _, _ := strings.Cut(strings.TrimPrefix(k, "subtitles/"), "/")
		if f[k] != "" && lang != "" {
			it.Subtitles = append(it.Subtitles, Subtitle{Lang: lang, CID: f[k]})
		}
	}
	return it
}

// extOf is a file's extension, lower case: of its path (filePath, a
// peer's fileName), else of its MIME type.
func extOf(f map[string]string) string {
	for _, k := range []string{"filePath", "fileName"} {
		if e := strings.ToLower(path.Ext(f[k])); plainExt(e) {
			return e
		}
	}
	if m := mimetype.Lookup(f["mimeType"]); m != nil {
		return m.Extension()
	}
	return ""
}

// plainExt reports an extension of 1 to 8 ASCII letters and digits
// after its dot: any other is no extension to name a file by.
func plainExt(e string) bool {
	if len(e) < 2 || len(e) > 9 || e[0] != '.' {
		return false
	}
	for _, c := range []byte(e[1:]) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// firstUnder is the value of the first field (by name) under prefix.
func firstUnder(f map[string]string, prefix string) string {
	var first string
	for k := range f {
		if strings.HasPrefix(k, prefix) && (first == "" || k < first) {
			first = k
		}
	}
	return f[first]
}

// byIndex orders "a/b/<n>" names by their path, the number last as a
// number ("genre/2" before "genre/10").
func byIndex(a, b string) int {
	ad, an, _ := cutLast(a)
	bd, bn, _ := cutLast(b)
	return cmp.Or(strings.Compare(ad, bd), cmp.Compare(an, bn), strings.Compare(a, b))
}

func cutLast(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, '/')
	n, err := strconv.Atoi(s[i+1:])
	return s[:i+1], n, err == nil
}

// Field reports whether a write to field f changes an Item (a
// store.Consumer's Fields).
func Field(f string) bool {
	if store.CatalogField(f) {
		return true
	}
	switch f {
	case "mtime", "mimeType", "rating", "tmdbid", "releasedate":
		return true
	}
	for _, p := range []string{"plot/", "genre/", "subtitles/"} {
		if strings.HasPrefix(f, p) {
			return true
		}
	}
	return false
}
