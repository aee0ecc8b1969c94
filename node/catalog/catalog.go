package catalog

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// Catalog is the node's list of its library in memory, what GET
// /api/library pages through: one store.Summary per root (the few
// fields a list shows), so a list is cut without a Redis read.
//
// It is a store.Consumer of its own (Take): the start-up sweep (and every
// sweep after a lost feed or subscription) replaces it with the entries
// of every root, and every root the change feed or a write to a field its
// entry reads (store.CatalogField) names is read again, its entry
// computed from its document (store.CatalogEntryOf), so a deleted or
// merged root leaves it. Root IDs
// are UUIDv7 minted in order, so the newest roots sort last: "recent" is
// the catalog by root, newest first.
//
// The sorted lists are kept sorted as entries change: a change costs a
// few binary searches and the moves of pointers it makes in each list, so
// a library changing all the time never pays a rebuild; a sweep builds
// them anew. Readers cut pages under the read lock.
type Catalog struct {
	mu      sync.RWMutex
	entries map[store.RootID]*listed
	local   int  // entries of local files
	loaded  bool // a sweep filled it once
	views   catalogViews
	// copies are the local files' copies (duplicates.go), dupes the
	// groups made of them by grouping, nil once the catalog changes.
	copies map[store.RootID]*fileCopy
	dupes  map[string][]model.DuplicateGroup

	// sweeping are the roots of the sweep being taken, nil between
	// sweeps (Take's goroutine only).
	sweeping map[store.RootID]bool
}

func New() *Catalog {
	return &Catalog{entries: map[store.RootID]*listed{}, copies: map[store.RootID]*fileCopy{}, views: catalogViews{show: map[string]*catalogShow{}}}
}

// Consumer is the catalog as store.Changes takes it: a write to a field
// its entries read (store.CatalogField) or its copies read (dupeField)
// has the root read again.
func (c *Catalog) Consumer() store.Consumer {
	return store.Consumer{Name: "the catalog", Fields: func(f string) bool { return store.CatalogField(f) || dupeField(f) }, Take: c.Take}
}

// Take brings the catalog in step with one batch of changed roots (a
// store.Consumer): each root's entry, or none when it is gone. A sweep's
// batches only put; its last drops what no batch of the sweep named.
func (c *Catalog) Take(_ context.Context, b store.ChangeBatch) error {
	if b.First {
		c.sweeping = map[store.RootID]bool{}
	}
	c.take(b.Roots)
	if b.Sweep && c.sweeping != nil {
		for _, r := range b.Roots {
			if r.Exists {
				c.sweeping[r.Root] = true
			}
		}
	}
	if b.Last && c.sweeping != nil {
		c.swept(c.sweeping)
		c.sweeping = nil
	}
	return nil
}

// take puts what a batch of store.Changes read of roots in the
// catalog: each root's entry, or none when it is gone. A sweep's batch
// only puts: what no batch of the sweep named is dropped at its end
// (swept).
func (c *Catalog) take(roots []store.Changed) {
	ids := make([]store.RootID, 0, len(roots))
	es := make([]store.Summary, 0, len(roots))
	for _, r := range roots {
		ids = append(ids, r.Root)
		if r.Exists {
			es = append(es, store.CatalogEntryOf(r.Document))
		}
	}
	c.apply(ids, es, false)
	c.putCopies(roots)
}

// swept ends a sweep: the roots it did not name (keep) leave the
// catalog, which is whole from now on.
func (c *Catalog) swept(keep map[store.RootID]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for r := range c.entries {
		if !keep[r] {
			c.drop(r)
		}
	}
	c.loaded = true
}

// apply puts the entries es read of roots (those of roots that still
// exist) in the catalog; with sweep, they are the whole catalog.
func (c *Catalog) apply(roots []store.RootID, es []store.Summary, sweep bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sweep {
		clear(c.entries)
		clear(c.copies)
		c.dupes = nil
		c.local, c.loaded = 0, true
		for _, e := range es { // a root named twice is read twice
			if old, ok := c.entries[e.Root]; ok && old.Local() {
				c.local--
			}
			c.put(e)
		}
		c.views = buildViews(c.entries)
		return
	}
	for _, r := range roots {
		c.drop(r)
	}
	for _, e := range es { // a root named twice is read twice
		c.drop(e.Root)
		c.views.add(c.put(e))
	}
}

// put records e's entry and returns it, without its lists; c.mu is held.
func (c *Catalog) put(e store.Summary) *listed {
	l := &listed{e, fold(e.Title)}
	c.entries[e.Root] = l
	if e.Local() {
		c.local++
	}
	return l
}

// drop removes root's entry from the catalog and its lists; c.mu is held.
func (c *Catalog) drop(r store.RootID) {
	l, ok := c.entries[r]
	if !ok {
		return
	}
	if l.Local() {
		c.local--
	}
	c.views.remove(l)
	delete(c.entries, r)
	delete(c.copies, r)
	c.dupes = nil
}

// counts counts the library's files.
func (c *Catalog) Counts() model.LibraryCounts {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.countsLocked()
}

// countsLocked is counts with c.mu held.
func (c *Catalog) countsLocked() model.LibraryCounts {
	return model.LibraryCounts{Local: c.local, FromPeers: len(c.entries) - c.local, Loaded: c.loaded}
}

// catalogViews are the sorted lists of the catalog. Every order is total
// (the root ID breaks the last tie), so an entry is found again by binary
// search.
type catalogViews struct {
	recent []*listed // local files by root, oldest first: pages are cut from the end
	movies []*listed // local films by title, year, CID
	shows  []*catalogShow
	show   map[string]*catalogShow
	peers  []*listed // files known only from peers, by root (as recent)
	other  []*listed // local home videos and other videos (videoType other), newest recorded first
}

// listed is an entry with its title folded for sorting.
type listed struct {
	store.Summary
	fold string
}

// catalogShow is a show: the local episodes that name it, by season.
type catalogShow struct {
	key, title string
	seasons    []*catalogSeason // by number
	episodes   int
}

type catalogSeason struct {
	n        int
	episodes []*listed // by episode number
}

// The orders of the lists.
func byRoot(a, b *listed) int { return cmp.Compare(a.Root, b.Root) }

func byTitle(a, b *listed) int {
	return cmp.Or(cmp.Compare(a.fold, b.fold), cmp.Compare(a.Year, b.Year), cmp.Compare(a.CID, b.CID), byRoot(a, b))
}

// byRecorded is the Home videos' order: the day recorded, newest first,
// then by title. It compares the dates as text: YYYY-MM-DD sorts by
// time, a month or a year (YYYY-MM, YYYY) after the days it holds, and
// "" (no date) after them all.
func byRecorded(a, b *listed) int {
	return cmp.Or(cmp.Compare(b.Recorded, a.Recorded), byTitle(a, b))
}

func byEpisode(a, b *listed) int {
	return cmp.Or(cmp.Compare(*a.Episode, *b.Episode), cmp.Compare(a.EpisodeTitle, b.EpisodeTitle), cmp.Compare(a.CID, b.CID), byRoot(a, b))
}

func byShow(a, b *catalogShow) int     { return cmp.Compare(a.key, b.key) }
func bySeason(a, b *catalogSeason) int { return cmp.Compare(a.n, b.n) }

// insert puts x into list, sorted by order.
func insert[T any](list []T, x T, order func(a, b T) int) []T {
	i, _ := slices.BinarySearchFunc(list, x, order)
	return slices.Insert(list, i, x)
}

// remove takes x out of list, sorted by order; a list without it is
// returned as it is.
func remove[T comparable](list []T, x T, order func(a, b T) int) []T {
	if i, ok := slices.BinarySearchFunc(list, x, order); ok && list[i] == x {
		return slices.Delete(list, i, i+1)
	}
	return list
}

// fold is how titles sort and shows are told apart: the search index's
// tokens (lower case, accents removed, punctuation dropped).
func fold(title string) string {
	if f := strings.Join(protocol.Tokens(title), " "); f != "" {
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

// other reports a home video or another video that is no film or
// episode (videoType other, the household's word or the name's): its
// name's numbers are no season, episode or year to list it by.
func other(e store.Summary) bool { return e.VideoType == "other" }

// buildViews sorts every entry into the lists at once (a sweep).
func buildViews(entries map[store.RootID]*listed) catalogViews {
	v := catalogViews{show: map[string]*catalogShow{}}
	for _, l := range entries {
		if !listable(l.Summary) {
			continue
		}
		if !l.Local() {
			v.peers = append(v.peers, l)
			continue
		}
		v.recent = append(v.recent, l)
		switch {
		case other(l.Summary):
			v.other = append(v.other, l)
		case episode(l.Summary):
			s, se := v.seasonOf(l, false)
			se.episodes = append(se.episodes, l)
			s.episodes++
		case l.FileType == "video":
			v.movies = append(v.movies, l)
		}
	}
	slices.SortFunc(v.recent, byRoot)
	slices.SortFunc(v.peers, byRoot)
	slices.SortFunc(v.movies, byTitle)
	slices.SortFunc(v.other, byRecorded)
	for _, s := range v.show {
		v.shows = append(v.shows, s)
		slices.SortFunc(s.seasons, bySeason)
		for _, se := range s.seasons {
			slices.SortFunc(se.episodes, byEpisode)
		}
		s.retitle()
	}
	slices.SortFunc(v.shows, byShow)
	return v
}

// add puts a new entry into its lists.
func (v *catalogViews) add(l *listed) {
	if !listable(l.Summary) {
		return
	}
	if !l.Local() {
		v.peers = insert(v.peers, l, byRoot)
		return
	}
	v.recent = insert(v.recent, l, byRoot)
	switch {
	case other(l.Summary):
		v.other = insert(v.other, l, byRecorded)
	case episode(l.Summary):
		s, se := v.seasonOf(l, true)
		se.episodes = insert(se.episodes, l, byEpisode)
		s.episodes++
		s.retitle()
	case l.FileType == "video":
		v.movies = insert(v.movies, l, byTitle)
	}
}

// remove takes an entry out of its lists, and a season or a show that
// held only it.
func (v *catalogViews) remove(l *listed) {
	if !listable(l.Summary) {
		return
	}
	if !l.Local() {
		v.peers = remove(v.peers, l, byRoot)
		return
	}
	v.recent = remove(v.recent, l, byRoot)
	switch {
	case other(l.Summary):
		v.other = remove(v.other, l, byRecorded)
	case episode(l.Summary):
		s := v.show[l.fold]
		if s == nil {
			return
		}
		i := slices.IndexFunc(s.seasons, func(se *catalogSeason) bool { return se.n == *l.Season })
		if i < 0 {
			return
		}
		se := s.seasons[i]
		n := len(se.episodes)
		if se.episodes = remove(se.episodes, l, byEpisode); len(se.episodes) == n {
			return
		}
		s.episodes--
		if len(se.episodes) == 0 {
			s.seasons = slices.Delete(s.seasons, i, i+1)
		}
		if len(s.seasons) == 0 {
			delete(v.show, s.key)
			v.shows = remove(v.shows, s, byShow)
			return
		}
		s.retitle()
	case l.FileType == "video":
		v.movies = remove(v.movies, l, byTitle)
	}
}

// seasonOf is the show and the season of episode l, made when missing;
// sorted says whether to keep the show list and the seasons sorted (add)
// or leave them to be sorted once (buildViews).
func (v *catalogViews) seasonOf(l *listed, sorted bool) (*catalogShow, *catalogSeason) {
	s := v.show[l.fold]
	if s == nil {
		s = &catalogShow{key: l.fold}
		v.show[l.fold] = s
		if sorted {
			v.shows = insert(v.shows, s, byShow)
		}
	}
	i := slices.IndexFunc(s.seasons, func(se *catalogSeason) bool { return se.n == *l.Season })
	if i >= 0 {
		return s, s.seasons[i]
	}
	se := &catalogSeason{n: *l.Season}
	if sorted {
		s.seasons = insert(s.seasons, se, bySeason)
	} else {
		s.seasons = append(s.seasons, se)
	}
	return s, se
}

// retitle names the show as its first episode writes it.
func (s *catalogShow) retitle() { s.title = s.seasons[0].episodes[0].Title }

// poster is the poster of the first of episodes that has one.
func poster(episodes []*listed) string {
	for _, l := range episodes {
		if l.Poster != "" {
			return l.Poster
		}
	}
	return ""
}

// poster is the show's: its first season's that has one.
func (s *catalogShow) poster() string {
	for _, se := range s.seasons {
		if p := poster(se.episodes); p != "" {
			return p
		}
	}
	return ""
}

// Page answers GET /api/library.
func (c *Catalog) Page(q model.LibraryQuery) (model.LibraryPage, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v := &c.views
	p := model.LibraryPage{View: q.View, Files: c.countsLocked()}
	switch {
	case q.View == model.ViewRecent:
		cut(&p, q, newestFirst(v.recent), fileEntry)
	case q.View == model.ViewMovies:
		cut(&p, q, v.movies, fileEntry)
	case q.View == model.ViewOther:
		cut(&p, q, v.other, fileEntry)
	case q.View == model.ViewFolder:
		cut(&p, q, c.folderLocked(q.Folder), fileEntry)
	case q.View == model.ViewPeers:
		cut(&p, q, newestFirst(v.peers), fileEntry)
	case q.Show == "":
		cut(&p, q, v.shows, func(s *catalogShow) model.LibraryEntry {
			return model.LibraryEntry{Kind: "show", Show: s.key, FileSummary: model.FileSummary{Title: s.title, Poster: s.poster()}, Seasons: len(s.seasons), Episodes: s.episodes}
		})
	default:
		s := v.show[q.Show]
		if s == nil {
			return model.LibraryPage{}, fmt.Errorf("%w: no show %q in the library (GET /api/library?view=shows lists their keys)", model.ErrNotFound, q.Show)
		}
		p.Show, p.ShowTitle = s.key, s.title
		if q.Season < 0 {
			p.View = "seasons"
			cut(&p, q, s.seasons, func(se *catalogSeason) model.LibraryEntry {
				return model.LibraryEntry{Kind: "season", Show: s.key, FileSummary: model.FileSummary{Title: s.title, Season: ptr(se.n), Poster: poster(se.episodes)}, Episodes: len(se.episodes)}
			})
			break
		}
		i := slices.IndexFunc(s.seasons, func(se *catalogSeason) bool { return se.n == q.Season })
		if i < 0 {
			return model.LibraryPage{}, fmt.Errorf("%w: show %q has no season %d", model.ErrNotFound, q.Show, q.Season)
		}
		p.View, p.Season = "episodes", ptr(q.Season)
		cut(&p, q, s.seasons[i].episodes, fileEntry)
	}
	return p, nil
}

// reversed is a list read from its end.
type reversed[T any] []T

// newestFirst is the recent list, newest root first.
func newestFirst(list []*listed) reversed[*listed] { return reversed[*listed](list) }

// cut fills p with page q.Page of list (a slice, or a reversed one), of
// q.Limit entries.
func cut[L ~[]T, T any](p *model.LibraryPage, q model.LibraryQuery, list L, entry func(T) model.LibraryEntry) {
	n := len(list)
	p.Page, p.Limit, p.Total = q.Page, q.Limit, n
	p.Pages = (n + q.Limit - 1) / q.Limit
	p.Entries = []model.LibraryEntry{}
	_, rev := any(list).(reversed[T])
	for i := min((q.Page-1)*q.Limit, n); i < min(q.Page*q.Limit, n); i++ {
		if rev {
			p.Entries = append(p.Entries, entry(list[n-1-i]))
		} else {
			p.Entries = append(p.Entries, entry(list[i]))
		}
	}
}

// fileEntry is a file's entry; an episode's names its show.
func fileEntry(l *listed) model.LibraryEntry {
	e := model.LibraryEntry{Kind: "file", FileSummary: l.File()}
	if episode(l.Summary) {
		e.Show = l.fold
	}
	return e
}

func ptr[T any](v T) *T { return &v }

// Showing are the roots (at most max) whose entries show image c as
// their picture (store.Summary.Poster: a poster, or a video's still):
// how the node finds whose record named a still, which no record of its
// own describes.
func (c *Catalog) Showing(img string, max int) []store.RootID {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []store.RootID
	for r, e := range c.entries {
		if e.Poster == img {
			out = append(out, r)
			if len(out) >= max {
				break
			}
		}
	}
	return out
}

// Entry is the entry of root as the library's lists show it; ok is
// false for a root the catalog does not list.
func (c *Catalog) Entry(r store.RootID) (model.LibraryEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	l := c.entries[r]
	if l == nil || !listable(l.Summary) {
		return model.LibraryEntry{}, false
	}
	return fileEntry(l), true
}

// NextEpisode is the local episode that follows episode root: the next
// one of its season, else the first of the next season the show has.
// ok is false for a root that is no local episode, and for a show's
// last episode.
func (c *Catalog) NextEpisode(r store.RootID) (next store.RootID, e model.LibraryEntry, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	l := c.entries[r]
	if l == nil || !l.Local() || !episode(l.Summary) {
		return "", model.LibraryEntry{}, false
	}
	s := c.views.show[l.fold]
	if s == nil {
		return "", model.LibraryEntry{}, false
	}
	i := slices.IndexFunc(s.seasons, func(se *catalogSeason) bool { return se.n == *l.Season })
	if i < 0 {
		return "", model.LibraryEntry{}, false
	}
	eps := s.seasons[i].episodes
	for _, n := range eps {
		if *n.Episode > *l.Episode {
			return n.Root, fileEntry(n), true
		}
	}
	if i+1 < len(s.seasons) {
		n := s.seasons[i+1].episodes[0]
		return n.Root, fileEntry(n), true
	}
	return "", model.LibraryEntry{}, false
}
