package store

import (
	"slices"
	"strings"
)

// FromNameField lists, space-separated and sorted, the fields of a local
// file whose values its file name alone gave (ingest's name reader, no
// NFO or edit said otherwise): guesses a peer's word may replace in what
// the document shows (Document.Shown). Written by extraction; the
// node's own, never an edit's.
const FromNameField = "fromName"

// Where a shown field came from (Document.Shown's second answer); any
// other value is the peer ID of the household whose record gave it.
const (
	FromOwn  = "own"  // the household's file: its NFO, an extractor, an outside writer
	FromName = "name" // the file's name, a guess
	FromEdit = "edit" // the household's own edit
)

// fillable are the fields a peer's record may fill in on a local file
// that has none of its own (or only its name's guess): what a household
// wants to know of a film or an episode. A name ending in "/" stands for
// each field under it (titles/eng, plot/fre), "genre" for the whole
// list (genre/0, genre/1, …).
var fillable = []string{"titles/", "plot/", "originalTitle", "movieYear", "year", "imdbid", "tmdbid", "tvdbid",
	"genre", "rating", "episodeTitle", "art/poster", "art/fanart"}

// fillUnit is the unit field f is filled in as ("genre" for genre/3,
// f itself for titles/eng), "" when peers never fill it in.
func fillUnit(f string) string {
	for _, u := range fillable {
		switch {
		case strings.HasSuffix(u, "/"):
			if rest, ok := strings.CutPrefix(f, u); ok && rest != "" && !strings.Contains(rest, "/") {
				return f
			}
		case f == u:
			return f
		case strings.HasPrefix(f, u+"/"):
			if rest := f[len(u)+1:]; rest != "" && !strings.Contains(rest, "/") && strings.Trim(rest, "0123456789") == "" {
				return u
			}
		}
	}
	return ""
}

// Fillable reports a field a peer's record may fill in on a local file
// (Document.Shown).
func Fillable(f string) bool { return fillUnit(f) != "" }

// Shown is what a local document shows and where each field the peers
// may fill in came from. The household's own fields win: an edit, then
// what its file says (an NFO, an extractor, an outside writer). Where it
// has none of a fillable field (Fillable), or only its file name's guess
// (FromNameField), the peers' claims under origin/<peer>/ fill it in: the
// value the most distinct households gave, a value a peer's own name
// guessed counting after any that is not, ties to a friend's
// (Options.Friends), then to the smallest peer ID, so it does not
// depend on the order records arrived in. A list field
// (genre) is one value: every item of one peer's. from maps each
// fillable unit shown (titles/eng, genre, art/poster) to FromEdit,
// FromOwn, FromName or the peer's ID. A root known only from peers is
// shown as Presented shows it, from nil. The fields map is the
// document's own when nothing is filled in: do not change it.
func (d Document) Shown() (fields, from map[string]string) {
	if !d.Local() {
		return d.Presented(), nil
	}
	guessed := map[string]bool{}
	for _, f := range strings.Fields(d.Fields[FromNameField]) {
		guessed[f] = true
	}
	edited := map[string]bool{}
	for _, f := range d.Edited {
		edited[f] = true
		if u := fillUnit(f); u != "" {
			edited[u] = true
		}
	}
	from = map[string]string{}
	ownWeak := map[string]bool{} // units the household holds only as its name's guess
	type peerClaim struct {
		fields  map[string]string // the unit's fields as the peer gave them
		guessed bool
	}
	claims := map[string]map[string]*peerClaim{} // unit → peer → claim
	peerGuessed := map[string]map[string]bool{}  // peer → its fromName fields
	for f, v := range d.Fields {
		if rest, ok := strings.CutPrefix(f, OriginPrefix+"/"); ok {
			p, name, ok := strings.Cut(rest, "/")
			if !ok || p == "" {
				continue
			}
			if name == FromNameField {
				g := map[string]bool{}
				for _, x := range strings.Fields(v) {
					g[x] = true
				}
				peerGuessed[p] = g
				continue
			}
			u := fillUnit(name)
			if u == "" {
				continue
			}
			if claims[u] == nil {
				claims[u] = map[string]*peerClaim{}
			}
			c := claims[u][p]
			if c == nil {
				c = &peerClaim{fields: map[string]string{}}
				claims[u][p] = c
			}
			c.fields[name] = v
			continue
		}
		u := fillUnit(f)
		if u == "" {
			continue
		}
		switch {
		case edited[f] || edited[u]:
			from[u] = FromEdit
		case guessed[f] && from[u] != FromOwn:
			from[u], ownWeak[u] = FromName, true
		default:
			from[u] = FromOwn
			delete(ownWeak, u)
		}
	}
	var out map[string]string
	for u, byPeer := range claims {
		if src, ok := from[u]; ok && !ownWeak[u] && src != FromName {
			continue
		}
		// The peers' values, each with the households that gave it.
		type vote struct {
			fields  map[string]string
			peers   []string
			guessed bool
			friend  bool // a friend of the household's gave it
		}
		votes := map[string]*vote{}
		for p, c := range byPeer {
			for f := range c.fields {
				if peerGuessed[p][f] {
					c.guessed = true
				}
			}
			key := claimKey(c.fields)
			v := votes[key]
			if v == nil {
				v = &vote{fields: c.fields, guessed: true}
				votes[key] = v
			}
			v.peers = append(v.peers, p)
			v.guessed = v.guessed && c.guessed
			v.friend = v.friend || (d.friends != nil && d.friends(p))
		}
		var best *vote
		for _, v := range votes {
			slices.Sort(v.peers)
			if best == nil || better(v.guessed, len(v.peers), v.friend, v.peers[0], best.guessed, len(best.peers), best.friend, best.peers[0]) {
				best = v
			}
		}
		if ownWeak[u] && best.guessed {
			continue // a peer's guess is no better than the household's
		}
		if out == nil {
			out = make(map[string]string, len(d.Fields))
			for f, v := range d.Fields {
				out[f] = v
			}
		}
		for f := range out {
			if fillUnit(f) == u && !strings.HasPrefix(f, OriginPrefix+"/") {
				delete(out, f)
			}
		}
		for f, v := range best.fields {
			out[f] = v
		}
		from[u] = best.peers[0]
	}
	if out == nil {
		out = d.Fields
	}
	return out, from
}

// better orders two candidate values of a field: one no peer merely
// guessed from a name first, then the most households, then one a
// friend of the household's gave (Options.Friends), then the smallest
// peer ID.
func better(guessed bool, n int, friend bool, first string, bGuessed bool, bn int, bFriend bool, bFirst string) bool {
	if guessed != bGuessed {
		return !guessed
	}
	if n != bn {
		return n > bn
	}
	if friend != bFriend {
		return friend
	}
	return first < bFirst
}

// claimKey is one peer's value of a unit, comparable with another's.
func claimKey(fields map[string]string) string {
	keys := make([]string, 0, len(fields))
	for f := range fields {
		keys = append(keys, f)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, f := range keys {
		b.WriteString(f)
		b.WriteByte(0)
		b.WriteString(fields[f])
		b.WriteByte(0)
	}
	return b.String()
}

// WithFriends is d with friends as its household's friends (Shown's
// tie-break), as a store opened with Options.Friends reads it.
func (d Document) WithFriends(friends func(peer string) bool) Document {
	d.friends = friends
	return d
}
