package store

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/metamesh/node/protocol"
)

// What the search index is fed. The index itself lives outside Redis
// (node/catalog's TextIndex, under the data directory): the store gives
// every root's searchable text (titles, the file name,
// year/season/episode, IMDb, TMDB and TVDB IDs, genres) cut into folded
// tokens (Tokens), title tokens apart from the others (SearchText), and
// reads the hits of a page (SearchHits). Layouts before 3 kept the
// postings in Redis (tk:<token>, and //<token> entries in fields:<root>);
// the upgrade to layout 3 deletes them.

// Search limits.
const (
	// MaxSearchQuery is the longest query, in bytes.
	MaxSearchQuery = 256
	// MaxSearchLimit is the most hits one page holds.
	MaxSearchLimit = 100
	// maxRootTokens bounds the tokens one root is indexed under.
	maxRootTokens = 256
)

// Summary is what the node shows of one root in a list: a search hit, an
// entry of the library's lists (summaryOf reads it from the root's fields).
// The JSON names are those of the layout fixtures' search answers.
type Summary struct {
	Root         RootID `json:"-"`
	CID          string `json:"cid"` // canonical
	Title        string `json:"title"`
	EpisodeTitle string `json:"episodeTitle,omitempty"`
	Year         int    `json:"year,omitempty"` // 0 when unknown
	// Season and Episode are nil when the root has none.
	Season   *int   `json:"season,omitempty"`
	Episode  *int   `json:"episode,omitempty"`
	Size     int64  `json:"size,omitempty"`
	FileType string `json:"fileType,omitempty"`
	IMDbID   string `json:"imdbid,omitempty"`
	// Poster is the CID of the file's poster (its art/poster link): set
	// by the catalog's entries and search hits (posterOf), which read it.
	Poster string `json:"poster,omitempty"`
	// CIDs are the members: those the node vouches for, for a local
	// file (what it signs for peers); every member for a root known only
	// from peers. The catalog's summaries leave them out.
	CIDs []string `json:"cids"`
	// Source is "local" for a local file, else the first peer (by ID)
	// that supplied the root.
	Source string `json:"source"`
}

// Local reports whether the summary is a local file's.
func (s Summary) Local() bool { return s.Source == "local" }

// SidecarField names the kind of sidecar a file is ("subtitle", "nfo",
// "art"), as ingest writes it: a sidecar is never a search hit of its
// own; its video's hit says it has it (SearchHit.Subtitles and Art).
const SidecarField = "sidecar"

// SearchHit is one root a search found.
type SearchHit struct {
	Summary
	// Subtitles are the languages of the subtitles linked to the file,
	// Art the kinds of its artwork (poster, fanart, …), sorted.
	Subtitles []string `json:"subtitles,omitempty"`
	Art       []string `json:"art,omitempty"`
}

// titleField reports whether a flat field holds a title.
func titleField(f string) bool {
	return f == "title" || f == "originalTitle" || f == "episodeTitle" || strings.HasPrefix(f, "titles/")
}

// SearchField reports whether field f of a root is read by the search
// index or the catalog (so a write to it has the indexer read the root
// again): the catalog's lists show a file's poster (art/poster), which
// is linked when the poster is found, often after the video. Peers'
// claims (origin/<peer>/<field>) count by their own name.
func SearchField(f string) bool {
	if rest, ok := strings.CutPrefix(f, OriginPrefix+"/"); ok {
		_, f, _ = strings.Cut(rest, "/")
	}
	switch f {
	case "filePath", "fileName", "movieYear", "year", "season", "episode", "sizeByte", "fileType", PosterField:
		return true
	}
	return titleField(f) || idField(f) || genreField(f)
}

// idField reports a field holding an outside database's ID of the file:
// imdbid ("tt1375666"), tmdbid, tvdbid.
func idField(f string) bool { return f == "imdbid" || f == "tmdbid" || f == "tvdbid" }

// genreField reports a genre (genre/0, genre/1, …).
func genreField(f string) bool { return strings.HasPrefix(f, "genre/") }

// Tokens cuts text into search tokens (protocol.Tokens: the one
// normalization the index, queries and the DHT's token keys share).
func Tokens(text string) []string { return protocol.Tokens(text) }

// searchTokens is what root's document is indexed under: token → 2 for a
// title token, 1 for one only elsewhere.
func searchTokens(d Document) map[string]int {
	fields := d.Presented()
	out := map[string]int{}
	if fields[SidecarField] != "" {
		// A subtitle, an NFO or artwork: its video's hit says it has it.
		return out
	}
	add := func(text string, w int) {
		for _, t := range Tokens(text) {
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
// gives none: a household provides keys for its own files only.
func KeyTokens(d Document) []string {
	if !d.Local() {
		return nil
	}
	fields := d.Presented()
	seen := map[string]bool{}
	for f, v := range fields {
		if !titleField(f) && !idField(f) && !genreField(f) {
			continue
		}
		for _, t := range Tokens(v) {
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

// SearchText is what a root is indexed under: its tokens from titles
// (title, original, show and episode titles, its IMDb ID) and the others
// (file name, year, season and episode, TMDB and TVDB IDs, genres),
// sorted. A sidecar has none: its video's hit says it has it.
type SearchText struct {
	Title, Other []string
}

// searchText is d's search text.
func searchText(d Document) SearchText {
	var t SearchText
	for tok, w := range searchTokens(d) {
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

// Indexed is what the search indexer needs of a root, read from its
// document in one round trip: its search text, its KeyTokens and its
// summary as the catalog keeps it (what CatalogEntries reads). Exists is
// false when the root is gone.
type Indexed struct {
	Exists    bool
	Text      SearchText
	KeyTokens []string
	Summary   Summary
}

// IndexedRoot reads what the search indexer needs of root.
func (s *Store) IndexedRoot(ctx context.Context, root RootID) (Indexed, error) {
	d, err := s.Document(ctx, root)
	switch {
	case errors.Is(err, ErrNotFound):
		return Indexed{}, nil
	case err != nil:
		return Indexed{}, err
	}
	return indexedOf(d), nil
}

// indexedOf is what the search index, the catalog and the announcer
// need of document d (IndexedRoot, ReadChanged).
func indexedOf(d Document) Indexed {
	return Indexed{Exists: true, Text: searchText(d), KeyTokens: KeyTokens(d), Summary: catalogEntryOf(d)}
}

// summaryOf is the summary a document gives: what its fields say
// (SummaryOfFields, of the fields as presented), its canonical CID, its
// members and where it is from.
func summaryOf(d Document) Summary {
	h := SummaryOfFields(d.Presented())
	h.Root, h.CID, h.Source = d.Root, d.CanonicalCID(), "local"
	// A local file's hit carries what the node vouches for (it signs it
	// for peers); one known only from peers carries every member.
	h.CIDs = d.CIDs
	if d.Local() {
		h.CIDs = d.Vouched()
	}
	if h.CIDs == nil {
		h.CIDs = []string{}
	}
	if !d.Local() {
		h.Source = "peer"
		if len(d.Peers) > 0 {
			h.Source = d.Peers[0]
		}
	}
	return h
}

// SummaryOfFields is what a file's flat fields (name "a/b/0/c" → value,
// as the store keeps them) say of it in a list: the node's rules for its
// title (title, titles/eng, originalTitle, the first other titles/<lang>,
// the file name), year (movieYear, else year), season, episode, episode
// title, size, type and IMDb ID. Root, CID, CIDs and Source are left
// empty: the fields do not hold them. It is pure, so that what shows a
// file elsewhere (metamesh lookup, from the API's document flattened
// again) titles it as a search does.
func SummaryOfFields(f map[string]string) Summary {
	h := Summary{FileType: f["fileType"], EpisodeTitle: f["episodeTitle"]}
	h.Title = f["title"]
	if h.Title == "" {
		h.Title = f["titles/eng"]
	}
	if h.Title == "" {
		h.Title = f["originalTitle"]
	}
	if h.Title == "" {
		var names []string
		for k := range f {
			if strings.HasPrefix(k, "titles/") {
				names = append(names, k)
			}
		}
		if len(names) > 0 {
			sort.Strings(names)
			h.Title = f[names[0]]
		}
	}
	if h.Title == "" {
		if fp := f["filePath"]; fp != "" {
			h.Title = path.Base(fp)
		} else {
			h.Title = f["fileName"]
		}
	}
	for _, k := range []string{"movieYear", "year"} {
		if y, err := strconv.Atoi(f[k]); err == nil && y > 0 {
			h.Year = y
			break
		}
	}
	if n, err := strconv.Atoi(f["season"]); err == nil && n >= 0 {
		h.Season = number(n)
	}
	if n, err := strconv.Atoi(f["episode"]); err == nil && n >= 0 {
		h.Episode = number(n)
	}
	h.Size, _ = strconv.ParseInt(f["sizeByte"], 10, 64)
	h.IMDbID = f["imdbid"]
	return h
}

// sidecarsOf are the languages of d's subtitle links
// (subtitles/<lang>/<n>) and the kinds of its artwork links (art/<kind>),
// sorted and distinct.
func sidecarsOf(d Document) (subtitles, art []string) {
	for f := range d.Presented() {
		if rest, ok := strings.CutPrefix(f, "subtitles/"); ok {
			if lang, _, ok := strings.Cut(rest, "/"); ok && !slices.Contains(subtitles, lang) {
				subtitles = append(subtitles, lang)
			}
		} else if kind, ok := strings.CutPrefix(f, "art/"); ok && !strings.Contains(kind, "/") && !slices.Contains(art, kind) {
			art = append(art, kind)
		}
	}
	slices.Sort(subtitles)
	slices.Sort(art)
	return subtitles, art
}

// numbers are what summaries' seasons and episodes below 1000 point at:
// the catalog holds a summary of every root, and they share these rather
// than each holding its own. Nothing writes through a summary's pointers.
var numbers = func() (a [1000]int) {
	for i := range a {
		a[i] = i
	}
	return a
}()

// number is a pointer to n, shared for small n.
func number(n int) *int {
	if n >= 0 && n < len(numbers) {
		return &numbers[n]
	}
	return &n
}
