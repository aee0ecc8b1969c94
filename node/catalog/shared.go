package catalog

import (
	"strings"
	"unicode/utf8"

	"github.com/metamesh/node/protocol"
)

// Shared answers a friend's household's request of the library protocol
// (protocol.LibraryRequest, valid): one page of the films, the shows, a
// show's seasons or a season's episodes, as GET /api/library lists them,
// of the local files whose path allowed allows (a show or a season is
// listed when one of its episodes is; a file whose path the catalog does
// not hold yet is not). Home videos and other videos (videoType other)
// are never in it, nor files known only from peers. A show or a season
// the catalog does not hold is an empty page. The answer has no name:
// the caller adds the household's.
func (c *Catalog) Shared(req protocol.LibraryRequest, allowed func(path string) bool) protocol.LibraryAnswer {
	c.mu.RLock()
	defer c.mu.RUnlock()
	keep := func(l *listed) bool {
		fc := c.copies[l.Root]
		return fc != nil && allowed(fc.copy.Path)
	}
	v := &c.views
	words := protocol.Tokens(req.Q)
	a := protocol.LibraryAnswer{View: req.View, Show: req.Show, Season: req.Season, Page: req.Page}
	var films []*listed
	for _, l := range v.movies {
		if keep(l) {
			a.Films++
			if matches(l.fold, words) {
				films = append(films, l)
			}
		}
	}
	var shows []protocol.LibraryEntry
	for _, s := range v.shows {
		e, ok := sharedShow(s, keep)
		if !ok {
			continue
		}
		a.Shows++
		if req.View == protocol.LibraryShows && matches(s.key, words) {
			shows = append(shows, e)
		}
	}
	switch req.View {
	case protocol.LibraryFilms:
		page(&a, req, films, func(l *listed) protocol.LibraryEntry { return sharedFile("film", l) })
	case protocol.LibraryShows:
		page(&a, req, shows, func(e protocol.LibraryEntry) protocol.LibraryEntry { return e })
	case protocol.LibrarySeasons:
		s := v.show[req.Show]
		if s == nil {
			page(&a, req, []protocol.LibraryEntry(nil), nil)
			break
		}
		var seasons []protocol.LibraryEntry
		for _, se := range s.seasons {
			eps := sharedEpisodes(se, keep)
			if len(eps) > 0 {
				seasons = append(seasons, protocol.LibraryEntry{Kind: "season", Title: clipTitle(s.title), Show: s.key,
					Season: ptr(se.n), Poster: poster(eps), Episodes: len(eps)})
			}
		}
		if len(seasons) > 0 {
			a.ShowTitle = clipTitle(s.title)
		}
		page(&a, req, seasons, func(e protocol.LibraryEntry) protocol.LibraryEntry { return e })
	case protocol.LibraryEpisodes:
		var eps []*listed
		if s := v.show[req.Show]; s != nil {
			for _, se := range s.seasons {
				if se.n == *req.Season {
					eps = sharedEpisodes(se, keep)
				}
			}
			if len(eps) > 0 {
				a.ShowTitle = clipTitle(s.title)
			}
		}
		page(&a, req, eps, func(l *listed) protocol.LibraryEntry { return sharedFile("episode", l) })
	}
	return a
}

// sharedShow is show s's entry of the episodes keep keeps, false when
// it keeps none.
func sharedShow(s *catalogShow, keep func(*listed) bool) (protocol.LibraryEntry, bool) {
	e := protocol.LibraryEntry{Kind: "show", Title: clipTitle(s.title), Show: s.key}
	for _, se := range s.seasons {
		eps := sharedEpisodes(se, keep)
		if len(eps) == 0 {
			continue
		}
		e.Seasons++
		e.Episodes += len(eps)
		if e.Poster == "" {
			e.Poster = poster(eps)
		}
	}
	return e, e.Episodes > 0
}

// sharedEpisodes are the episodes of se keep keeps.
func sharedEpisodes(se *catalogSeason, keep func(*listed) bool) []*listed {
	var out []*listed
	for _, l := range se.episodes {
		if keep(l) {
			out = append(out, l)
		}
	}
	return out
}

// sharedFile is a film's or an episode's entry.
func sharedFile(kind string, l *listed) protocol.LibraryEntry {
	e := protocol.LibraryEntry{Kind: kind, CID: l.CID, Title: clipTitle(l.Title), Year: l.Year, Size: max(l.Size, 0), Poster: l.Poster}
	if kind == "episode" {
		e.Show, e.Season, e.Episode, e.EpisodeTitle = l.fold, ptr(*l.Season), ptr(*l.Episode), clipTitle(l.EpisodeTitle)
	}
	return e
}

// page fills a with page req.Page of list, of req.Limit entries.
func page[T any](a *protocol.LibraryAnswer, req protocol.LibraryRequest, list []T, entry func(T) protocol.LibraryEntry) {
	n := len(list)
	a.Total, a.Pages = n, (n+req.Limit-1)/req.Limit
	a.Entries = []protocol.LibraryEntry{}
	for i := min((req.Page-1)*req.Limit, n); i < min(req.Page*req.Limit, n); i++ {
		a.Entries = append(a.Entries, entry(list[i]))
	}
}

// matches reports whether every one of words begins a token of folded
// (a title as fold writes it).
func matches(folded string, words []string) bool {
	tokens := strings.Fields(folded)
	for _, w := range words {
		found := false
		for _, t := range tokens {
			if strings.HasPrefix(t, w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// clipTitle cuts a title to the protocol's cap at a character boundary.
func clipTitle(s string) string {
	n := protocol.MaxHitTitle
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
