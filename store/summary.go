package store

import (
	"cmp"
	"context"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/metamesh/node/model"
)

// What the store reads for a list or a search hit: a root's summary
// (Summary, by the node's rules of SummaryOfFields) and the hits of a
// search's page (SearchHits). The search index itself lives outside
// Redis (node/search, under the data directory), fed from the documents
// store.Changes hands it. Layouts before 3 kept the postings in Redis
// (tk:<token>, and //<token> entries in fields:<root>); the upgrade to
// layout 3 deletes them.

// Search limits.
const (
	// MaxSearchQuery is the longest query, in bytes.
	MaxSearchQuery = 256
	// MaxSearchLimit is the most hits one page holds.
	MaxSearchLimit = 100
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
	// ShowIMDbID is an episode's show's IMDb ID (show/imdbid, its
	// tvshow.nfo's), "" when unknown: what a show is asked for by.
	ShowIMDbID string `json:"-"`
	// VideoType is the file's videoType (movie, episode, other,
	// unknown): "other", a home video, is listed as neither film nor
	// episode.
	VideoType string `json:"-"`
	// Recorded is the day a home video was recorded (its recorded
	// field: YYYY-MM-DD from its name, or a household's YYYY-MM or
	// YYYY), "" when the field holds none: the Home videos list is in
	// its order, newest first.
	Recorded string `json:"recorded,omitempty"`
	// Poster is the CID of the file's poster (its art/poster link), else
	// of its still (a video's frame, StillField): set by the catalog's
	// entries and search hits (posterOf), which read them.
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

// File is the one conversion of the summary to the API's, for the
// library's lists and the search's local hits.
func (s Summary) File() model.FileSummary {
	return model.FileSummary{CID: s.CID, Title: s.Title, Year: s.Year, Season: s.Season, Episode: s.Episode,
		EpisodeTitle: s.EpisodeTitle, Recorded: s.Recorded, Size: s.Size, FileType: s.FileType, Poster: s.Poster, Source: s.Source}
}

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
	// Own is what the household's own fields say of a local file whose
	// summary peers filled in (Document.Shown), nil when they filled in
	// nothing: an answer to a peer's search carries only the household's
	// own word.
	Own *Summary `json:"-"`
	// Path is a local file's path (filePath), never shown: the node
	// leaves a private file's hit out of its answers to peers.
	Path string `json:"-"`
}

// CatalogEntryOf is the summary of d (a whole document, or one holding
// catalogFields) without its members, as the node's catalog keeps it:
// it keeps a summary of every root in memory, and its lists do not show
// them.
func CatalogEntryOf(d Document) Summary {
	e := summaryOf(d)
	e.CIDs = nil
	e.Poster = posterOf(d)
	return e
}

// hitFields are what a search hit shows: the catalog's fields, the IMDb
// ID and the sidecar links.
var hitFields = append(slices.Clone(catalogFields), "imdbid", "subtitles/", "art/")

// SearchHits reads the hits of a search's page, roots in their order (one
// round trip for a page): each root's summary with its members, and the
// languages of its subtitles and the kinds of its artwork. Roots that do
// not exist are left out.
func (s *Store) SearchHits(ctx context.Context, roots []RootID) ([]SearchHit, error) {
	out := make([]SearchHit, 0, len(roots))
	err := s.readSummaries(ctx, roots, hitFields, func(d Document) {
		h := SearchHit{Summary: summaryOf(d)}
		h.Poster = posterOf(d)
		if d.Local() && d.hasClaims() {
			own := h.Summary
			o := SummaryOfFields(d.Fields)
			own.Title, own.Year, own.Season, own.Episode, own.EpisodeTitle, own.IMDbID = o.Title, o.Year, o.Season, o.Episode, o.EpisodeTitle, o.IMDbID
			own.Poster = cmp.Or(d.Fields[PosterField], d.Fields[StillField])
			h.Own = &own
		}
		h.Subtitles, h.Art = sidecarsOf(d)
		h.Path = d.FilePath()
		out = append(out, h)
	})
	return out, err
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
// title, the day it was recorded (recorded), size, type and IMDb ID. A
// file of videoType other (a home video) has no year, season, episode or
// episode title in a list, and a film (movie) no season or episode,
// whatever its fields say. An episode without a season is listed in
// season 1, and a show's country (release/country) is part of its
// title: "The Office (US)". Root, CID, CIDs and Source are left empty:
// the fields do not hold them. It is pure, so that what shows a
// file elsewhere (metamesh lookup, from the API's document flattened
// again) titles it as a search does.
func SummaryOfFields(f map[string]string) Summary {
	h := Summary{FileType: f["fileType"], EpisodeTitle: f["episodeTitle"], VideoType: f["videoType"]}
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
	switch h.VideoType {
	case "other":
		// A home video's name gives no year, season or episode: its
		// counter or date is no release year or SxxEyy to list it by.
		h.Year, h.Season, h.Episode, h.EpisodeTitle = 0, nil, nil, ""
	case "movie":
		h.Season, h.Episode = nil, nil
	case "episode":
		if h.Episode != nil && h.Season == nil {
			// An episode numbered from the show's first ("[Group] Show -
			// 1071", anime) is listed in season 1, as media centres file it.
			h.Season = number(1)
		}
		if c := f["release/country"]; c != "" && h.Title != "" && !strings.HasSuffix(h.Title, ")") {
			// The Office (US) and The Office (UK) are two shows.
			h.Title += " (" + c + ")"
		}
	}
	h.Recorded = recordedOf(f["recorded"])
	h.Size, _ = strconv.ParseInt(f["sizeByte"], 10, 64)
	h.IMDbID = f["imdbid"]
	if h.Episode != nil {
		h.ShowIMDbID = f[ShowIMDbField]
	}
	return h
}

// recordedOf is v when it is a day, a month or a year (YYYY-MM-DD,
// YYYY-MM, YYYY), else "": the Home videos list sorts by it as text,
// which orders such dates by time and would scatter any other value.
func recordedOf(v string) string {
	for _, layout := range []string{time.DateOnly, "2006-01", "2006"} {
		if len(v) == len(layout) {
			if _, err := time.Parse(layout, v); err == nil {
				return v
			}
		}
	}
	return ""
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
