package search

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// maxRootTokens bounds the tokens one root is indexed under.
const maxRootTokens = 256

// titleField reports whether a flat field holds a title.
func titleField(f string) bool {
	return f == "title" || f == "originalTitle" || f == "episodeTitle" || strings.HasPrefix(f, "titles/")
}

// idField reports a field holding an outside database's ID of the file:
// imdbid ("tt1375666"), tmdbid, tvdbid.
func idField(f string) bool { return f == "imdbid" || f == "tmdbid" || f == "tvdbid" }

// genreField reports a genre (genre/0, genre/1, …).
func genreField(f string) bool { return strings.HasPrefix(f, "genre/") }

// Field reports whether field f of a root is read for its search text
// (TextOf) or its sort key (a store.Summary's title, season, episode and
// episode title), so a write to it has the indexer read the root again
// (store.Consumer.Fields; store.Changes hands a peer's claim,
// origin/<peer>/<field>, by its own name).
func Field(f string) bool {
	switch f {
	case "filePath", "fileName", "movieYear", "year", "recorded", "season", "episode", store.SidecarField:
		return true
	}
	return titleField(f) || idField(f) || genreField(f)
}

// KeyField reports whether field f of a root is read for its KeyTokens:
// a title, an ID, a genre, or the primary path (a root known only from
// peers gives none).
func KeyField(f string) bool {
	return f == "filePath" || titleField(f) || idField(f) || genreField(f)
}

// searchTokens is what a root's fields as its document presents them
// (store.Document.Presented) are indexed under: token → 2 for a title
// token, 1 for one only elsewhere.
func searchTokens(fields map[string]string) map[string]int {
	out := map[string]int{}
	if fields[store.SidecarField] != "" {
		// A subtitle, an NFO or artwork: its video's hit says it has it.
		return out
	}
	add := func(text string, w int) {
		for _, t := range protocol.Tokens(text) {
			if len(out) >= maxRootTokens && out[t] == 0 {
				return
			}
			out[t] = max(out[t], w)
		}
	}
	// The fields of a kind, in name order: which tokens fit under
	// maxRootTokens does not depend on map order.
	addAll := func(kind func(string) bool, w int) {
		names := make([]string, 0, 8)
		for f := range fields {
			if kind(f) {
				names = append(names, f)
			}
		}
		sort.Strings(names)
		for _, f := range names {
			add(fields[f], w)
		}
	}
	addAll(titleField, 2)
	if fp := fields["filePath"]; fp != "" {
		add(path.Base(fp), 1)
	} else if fn := fields["fileName"]; fn != "" {
		add(path.Base(fn), 1)
	}
	for _, f := range []string{"movieYear", "year"} {
		if y, err := strconv.Atoi(fields[f]); err == nil && y > 0 {
			add(strconv.Itoa(y), 1)
		}
	}
	// A home video is found by the day it was recorded: "2019", "2019-03-14".
	if d := fields["recorded"]; d != "" {
		add(d, 1)
	}
	// An ID names the file as exactly as a title: "q=tt1375666" finds it.
	// tmdb and tvdb IDs are bare numbers, found as such.
	if id := fields["imdbid"]; id != "" {
		add(id, 2)
	}
	for _, f := range []string{"tmdbid", "tvdbid"} {
		if id := fields[f]; id != "" {
			add(id, 1)
		}
	}
	addAll(genreField, 1)
	s, serr := strconv.Atoi(fields["season"])
	e, eerr := strconv.Atoi(fields["episode"])
	if serr == nil && s >= 0 {
		add(fmt.Sprintf("s%02d", s), 1)
	}
	if eerr == nil && e >= 0 {
		add(fmt.Sprintf("e%02d", e), 1)
	}
	if serr == nil && eerr == nil && s >= 0 && e >= 0 {
		add(fmt.Sprintf("s%02de%02d", s, e), 1)
	}
	return out
}

// KeyTokens are the tokens a local file's document gives DHT keys for
// (protocol.SearchTokenKey): the tokens search indexes it under from its
// titles (title, original, show and episode titles), its IMDb, TMDB and
// TVDB IDs and its genres, never from its file name or path, that
// protocol.Keyed keeps; sorted, distinct. A root known only from peers
// gives none, nor a home video (videoType other): a household provides
// keys for its own films and episodes only, and of
// its own fields only (what peers fill in is searched here, never
// announced as the household's words).
func KeyTokens(d store.Document) []string {
	if !d.Local() || d.Fields["videoType"] == "other" {
		// A home video's words (a camera's counter, the household's
		// own title of it) are not the federation's to find.
		return nil
	}
	fields := d.Fields
	seen := map[string]bool{}
	for f, v := range fields {
		if !titleField(f) && !idField(f) && !genreField(f) {
			continue
		}
		for _, t := range protocol.Tokens(v) {
			if protocol.Keyed(t) {
				seen[t] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	sort.Strings(out)
	return out[:min(len(out), maxRootTokens)]
}

// Text is what a root is indexed under: its tokens from titles (title,
// original, show and episode titles, its IMDb ID) and the others (file
// name, year, season and episode, TMDB and TVDB IDs, genres), sorted. A
// sidecar has none: its video's hit says it has it.
type Text struct {
	Title, Other []string
}

// Empty reports a text with no token: nothing to index.
func (t Text) Empty() bool { return len(t.Title) == 0 && len(t.Other) == 0 }

// TextOf is d's search text.
func TextOf(d store.Document) Text { return textOf(d.Presented()) }

// textOf is the search text of a root's presented fields.
func textOf(fields map[string]string) Text {
	var t Text
	for tok, w := range searchTokens(fields) {
		if w == 2 {
			t.Title = append(t.Title, tok)
		} else {
			t.Other = append(t.Other, tok)
		}
	}
	slices.Sort(t.Title)
	slices.Sort(t.Other)
	return t
}

// Entry is what the index keeps of a root: its text, and the summary its
// sort key is made of (title, season, episode, episode title). An entry
// without text (a root gone, a sidecar) leaves the index.
type Entry struct {
	Text    Text
	Summary store.Summary
}

// EntryOf is what the index keeps of document d.
// A file known only from peers presents a map built anew on every call
// (its peers' fields merged in), so it is built once here.
func EntryOf(d store.Document) Entry {
	fields := d.Presented()
	return Entry{Text: textOf(fields), Summary: store.SummaryOfFields(fields)}
}
