package catalog

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/store"
)

// Catalog is the node's list of its library in memory, what GET
// /api/library pages through: one store.Summary per root (the few
// fields a list shows), so a list is sorted and cut without a Redis read.
//
// The indexer keeps it: its start-up sweep (and every sweep after a lost
// feed or subscription) replaces it with the entries of every root, and
// every root the change feed or a field write names is read again
// (store.CatalogEntries), so a deleted or merged root leaves it. Root IDs
// are UUIDv7 minted in order, so the newest roots sort last: "recent" is
// the catalog by root, newest first.
//
// The sorted lists are built on the first read after a change and then
// shared by every read until the next change: readers never sort.
type Catalog struct {
	mu      sync.RWMutex
	entries map[store.RootID]store.Summary
	local   int  // entries of local files
	loaded  bool // a sweep filled it once
	views   *catalogViews
}

func New() *Catalog { return &Catalog{entries: map[store.RootID]store.Summary{}} }

// update reads roots' entries from the store; with sweep, roots are every
// root and the catalog becomes exactly theirs.
func (c *Catalog) update(ctx context.Context, st *store.Store, roots []store.RootID, sweep bool) error {
	es, err := st.CatalogEntries(ctx, roots)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if sweep {
		clear(c.entries)
		c.local, c.loaded = 0, true
	}
	for _, r := range roots {
		c.drop(r)
	}
	for _, e := range es { // a root named twice is read twice
		c.drop(e.Root)
		c.entries[e.Root] = e
		if e.Local() {
			c.local++
		}
	}
	c.views = nil
	return nil
}

// drop removes root's entry; c.mu is held.
func (c *Catalog) drop(r store.RootID) {
	if e, ok := c.entries[r]; ok && e.Local() {
		c.local--
	}
	delete(c.entries, r)
}

// counts counts the library's files.
func (c *Catalog) Counts() api.LibraryCounts {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.countsLocked()
}

// countsLocked is counts with c.mu held.
func (c *Catalog) countsLocked() api.LibraryCounts {
	return api.LibraryCounts{Local: c.local, FromPeers: len(c.entries) - c.local, Loaded: c.loaded}
}

// catalogViews are the sorted lists of one state of the catalog; never
// changed once built.
type catalogViews struct {
	recent, movies []listed
	shows          []*catalogShow
	show           map[string]*catalogShow
}

// listed is an entry with its title folded for sorting.
type listed struct {
	store.Summary
	fold string
}

// catalogShow is a show: the episodes that name it, by season.
type catalogShow struct {
	key, title          string
	seasons             []*catalogSeason // by number
	episodes, fromPeers int
}

type catalogSeason struct {
	n         int
	episodes  []listed // by episode number
	fromPeers int
}

// fold is how titles sort and shows are told apart: the search index's
// tokens (lower case, accents removed, punctuation dropped).
func fold(title string) string {
	if f := strings.Join(store.Tokens(title), " "); f != "" {
		return f
	}
	return title
}

// listable reports a file the lists show: a video or an audio file, or a
// file of no known type (a peer's record that does not say). Posters,
// subtitles, NFO files and other files are the sidecars of the videos
// they belong to: in their records, not in the lists.
func listable(e store.Summary) bool {
	return e.CID != "" && (e.FileType == "video" || e.FileType == "audio" || e.FileType == "")
}

// episode reports an entry that is an episode of a show.
func episode(e store.Summary) bool { return e.Season != nil && e.Episode != nil }

// viewsOf returns the current views, building them after a change.
func (c *Catalog) viewsOf() (*catalogViews, api.LibraryCounts) {
	c.mu.RLock()
	v, n := c.views, c.countsLocked()
	c.mu.RUnlock()
	if v != nil {
		return v, n
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.views == nil {
		c.views = buildViews(c.entries)
	}
	return c.views, c.countsLocked()
}

func buildViews(entries map[store.RootID]store.Summary) *catalogViews {
	v := &catalogViews{show: map[string]*catalogShow{}}
	for _, e := range entries {
		if !listable(e) {
			continue
		}
		l := listed{e, fold(e.Title)}
		v.recent = append(v.recent, l)
		switch {
		case episode(e):
			v.addEpisode(l)
		case e.FileType == "video":
			v.movies = append(v.movies, l)
		}
	}
	slices.SortFunc(v.recent, func(a, b listed) int { return cmp.Compare(b.Root, a.Root) })
	slices.SortFunc(v.movies, func(a, b listed) int {
		return cmp.Or(cmp.Compare(a.fold, b.fold), cmp.Compare(a.Year, b.Year), cmp.Compare(a.CID, b.CID))
	})
	for _, s := range v.show {
		v.shows = append(v.shows, s)
		slices.SortFunc(s.seasons, func(a, b *catalogSeason) int { return cmp.Compare(a.n, b.n) })
		for _, se := range s.seasons {
			slices.SortFunc(se.episodes, func(a, b listed) int {
				return cmp.Or(cmp.Compare(*a.Episode, *b.Episode), cmp.Compare(a.EpisodeTitle, b.EpisodeTitle), cmp.Compare(a.CID, b.CID))
			})
		}
		// The show's title as its first episode writes it, a local one
		// first.
		first := s.seasons[0].episodes[0]
		for _, se := range s.seasons {
			if i := slices.IndexFunc(se.episodes, func(l listed) bool { return l.Local() }); i >= 0 {
				first = se.episodes[i]
				break
			}
		}
		s.title = first.Title
	}
	slices.SortFunc(v.shows, func(a, b *catalogShow) int { return cmp.Compare(a.key, b.key) })
	return v
}

func (v *catalogViews) addEpisode(l listed) {
	s := v.show[l.fold]
	if s == nil {
		s = &catalogShow{key: l.fold}
		v.show[l.fold] = s
	}
	i := slices.IndexFunc(s.seasons, func(se *catalogSeason) bool { return se.n == *l.Season })
	if i < 0 {
		s.seasons = append(s.seasons, &catalogSeason{n: *l.Season})
		i = len(s.seasons) - 1
	}
	se := s.seasons[i]
	se.episodes = append(se.episodes, l)
	s.episodes++
	if !l.Local() {
		se.fromPeers++
		s.fromPeers++
	}
}

// Page answers GET /api/library.
func (c *Catalog) Page(q api.LibraryQuery) (api.LibraryPage, error) {
	v, counts := c.viewsOf()
	p := api.LibraryPage{View: q.View, Files: counts}
	switch {
	case q.View == api.ViewRecent:
		cut(&p, q, v.recent, fileEntry)
	case q.View == api.ViewMovies:
		cut(&p, q, v.movies, fileEntry)
	case q.Show == "":
		cut(&p, q, v.shows, func(s *catalogShow) api.LibraryEntry {
			return api.LibraryEntry{Kind: "show", Show: s.key, FileSummary: api.FileSummary{Title: s.title}, Seasons: len(s.seasons), Episodes: s.episodes, FromPeers: s.fromPeers}
		})
	default:
		s := v.show[q.Show]
		if s == nil {
			return api.LibraryPage{}, fmt.Errorf("%w: no show %q in the library (GET /api/library?view=shows lists their keys)", api.ErrNotFound, q.Show)
		}
		p.Show, p.ShowTitle = s.key, s.title
		if q.Season < 0 {
			p.View = "seasons"
			cut(&p, q, s.seasons, func(se *catalogSeason) api.LibraryEntry {
				return api.LibraryEntry{Kind: "season", Show: s.key, FileSummary: api.FileSummary{Title: s.title, Season: ptr(se.n)}, Episodes: len(se.episodes), FromPeers: se.fromPeers}
			})
			break
		}
		i := slices.IndexFunc(s.seasons, func(se *catalogSeason) bool { return se.n == q.Season })
		if i < 0 {
			return api.LibraryPage{}, fmt.Errorf("%w: show %q has no season %d", api.ErrNotFound, q.Show, q.Season)
		}
		p.View, p.Season = "episodes", ptr(q.Season)
		cut(&p, q, s.seasons[i].episodes, fileEntry)
	}
	return p, nil
}

// cut fills p with page q.Page of list, of q.Limit entries.
func cut[T any](p *api.LibraryPage, q api.LibraryQuery, list []T, entry func(T) api.LibraryEntry) {
	p.Page, p.Limit, p.Total = q.Page, q.Limit, len(list)
	p.Pages = (len(list) + q.Limit - 1) / q.Limit
	p.Entries = []api.LibraryEntry{}
	for _, x := range list[min((q.Page-1)*q.Limit, len(list)):min(q.Page*q.Limit, len(list))] {
		p.Entries = append(p.Entries, entry(x))
	}
}

// fileEntry is a file's entry; an episode's names its show.
func fileEntry(l listed) api.LibraryEntry {
	e := api.LibraryEntry{Kind: "file", FileSummary: Summary(l.Summary)}
	if episode(l.Summary) {
		e.Show = l.fold
	}
	return e
}

// Summary is the one conversion of the store's summary of a root to the
// API's, for the library's lists and the search's local hits.
func Summary(s store.Summary) api.FileSummary {
	return api.FileSummary{CID: s.CID, Title: s.Title, Year: s.Year, Season: s.Season, Episode: s.Episode,
		EpisodeTitle: s.EpisodeTitle, Size: s.Size, FileType: s.FileType, Source: s.Source}
}

func ptr[T any](v T) *T { return &v }
