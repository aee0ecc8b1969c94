package catalog

import "github.com/metamesh/node/store"

// Show is one show of the household's own library as a whole: what a
// media centre (the Stremio add-on, node/stremio) shows of it.
type Show struct {
	// Key tells the show apart (LibraryEntry.Show); Title is as its
	// first episode writes it, Poster the first poster of its seasons.
	Key, Title, Poster string
	// IMDbID is the show's IMDb ID when an episode's tvshow.nfo gives
	// one; Year the earliest year an episode gives, 0 when none does.
	IMDbID string
	Year   int
	// Seasons and Episodes count them.
	Seasons, Episodes int
	// List are the episodes by season and episode (Show only; ShowPage
	// leaves it out).
	List []store.Summary
}

// ShowKey is the key of the show an episode titled title belongs to.
func ShowKey(title string) string { return fold(title) }

// Films are the household's films by title from offset on (at most
// limit), and how many there are.
func (c *Catalog) Films(offset, limit int) ([]store.Summary, int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ms := c.views.movies
	out := []store.Summary{}
	for i := max(offset, 0); i < len(ms) && len(out) < limit; i++ {
		out = append(out, ms[i].Summary)
	}
	return out, len(ms)
}

// Shows are the household's shows by key from offset on (at most
// limit), without their episodes, and how many there are.
func (c *Catalog) Shows(offset, limit int) ([]Show, int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ss := c.views.shows
	out := []Show{}
	for i := max(offset, 0); i < len(ss) && len(out) < limit; i++ {
		out = append(out, ss[i].whole(false))
	}
	return out, len(ss)
}

// Show is the show of key with its episodes.
func (c *Catalog) Show(key string) (Show, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s := c.views.show[key]
	if s == nil {
		return Show{}, false
	}
	return s.whole(true), true
}

// Film are the household's films whose canonical CID or IMDb ID is id
// (copies of one film share its IMDb ID), by title.
func (c *Catalog) Film(id string) []store.Summary {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []store.Summary
	for _, l := range c.views.movies {
		if l.CID == id || l.IMDbID == id {
			out = append(out, l.Summary)
		}
	}
	return out
}

// Plays reports whether c is the canonical CID of one of the
// household's films or episodes: what a media centre may play.
func (c *Catalog) Plays(cid string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, l := range c.entries {
		if l.CID == cid && listable(l.Summary) && l.Local() && !other(l.Summary) && l.FileType == "video" {
			return true
		}
	}
	return false
}

// ShowByIMDb is the key of the household's show whose IMDb ID is id.
func (c *Catalog) ShowByIMDb(id string) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, s := range c.views.shows {
		if s.whole(false).IMDbID == id {
			return s.key, true
		}
	}
	return "", false
}

// whole is s as a Show, with its episodes when episodes; c.mu is held.
func (s *catalogShow) whole(episodes bool) Show {
	w := Show{Key: s.key, Title: s.title, Poster: s.poster(), Seasons: len(s.seasons), Episodes: s.episodes}
	for _, se := range s.seasons {
		for _, l := range se.episodes {
			if w.IMDbID == "" {
				w.IMDbID = l.ShowIMDbID
			}
			if l.Year > 0 && (w.Year == 0 || l.Year < w.Year) {
				w.Year = l.Year
			}
			if episodes {
				w.List = append(w.List, l.Summary)
			}
		}
	}
	return w
}
