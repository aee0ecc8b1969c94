package stremio

import (
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/metamesh/node/protocol"
)

// Limits of what a request names.
const (
	// MaxIDLength bounds an item or video ID, in bytes.
	MaxIDLength = 1024
	// MaxSearch bounds extra search=, in bytes (GET /api/search's q).
	MaxSearch = 256
	// MaxSkip bounds extra skip=.
	MaxSkip = 1 << 20
	// maxNumber bounds a season and an episode, as the NFO reader does.
	maxNumber = 99999
)

// The ID forms (the protocol leaves an add-on's IDs to it, but for
// IMDb's, which every add-on shares):
//
//	tt0113277           a film or a show with an IMDb ID
//	tt0903747:1:2       season 1, episode 2 of the show tt0903747
//	mm:<cid>            a film without one: its canonical CID
//	mm:show:<key>       a show without one: its key, spaces as "-"
//	mm:show:<key>:1:2   season 1, episode 2 of it
//
// A show key holding more than letters, digits and single spaces
// (a title with no word) is written ~<hex of its bytes>.
const (
	prefixOwn  = "mm:"
	prefixShow = "mm:show:"
)

// ID is an item or a video a request names.
type ID struct {
	// IMDb is an IMDb ID (tt…); CID a film's canonical CID; Show a show's
	// key. Exactly one is set.
	IMDb, CID, Show string
	// Episode says Season and Episode name one episode of the show.
	Episode        bool
	Season, Number int
}

// String is the ID as the add-on writes it.
func (id ID) String() string {
	var s string
	switch {
	case id.IMDb != "":
		s = id.IMDb
	case id.CID != "":
		s = prefixOwn + id.CID
	default:
		s = ShowID(id.Show)
	}
	if id.Episode {
		s += ":" + strconv.Itoa(id.Season) + ":" + strconv.Itoa(id.Number)
	}
	return s
}

// ShowID is the item ID of the show of key without an IMDb ID.
func ShowID(key string) string {
	if plainKey(key) {
		return prefixShow + strings.ReplaceAll(key, " ", "-")
	}
	return prefixShow + "~" + hex.EncodeToString([]byte(key))
}

// plainKey reports a key of words (letters and digits) between single
// spaces: written with "-" for its spaces, it reads back the same.
func plainKey(key string) bool {
	if key == "" || key[0] == ' ' || key[len(key)-1] == ' ' || strings.Contains(key, "  ") {
		return false
	}
	for _, r := range key {
		if r != ' ' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// ParseID reads an item or video ID (already unescaped from the path).
func ParseID(s string) (ID, error) {
	switch {
	case s == "":
		return ID{}, fmt.Errorf("empty ID")
	case len(s) > MaxIDLength:
		return ID{}, fmt.Errorf("ID of %d bytes, at most %d", len(s), MaxIDLength)
	case !utf8.ValidString(s):
		return ID{}, fmt.Errorf("ID is not UTF-8")
	}
	var id ID
	rest := ""
	switch {
	case strings.HasPrefix(s, prefixShow):
		var key string
		key, rest, _ = strings.Cut(s[len(prefixShow):], ":")
		k, err := showKey(key)
		if err != nil {
			return ID{}, fmt.Errorf("ID %.80q: %w", s, err)
		}
		id.Show = k
	case strings.HasPrefix(s, prefixOwn):
		c := s[len(prefixOwn):]
		if strings.Contains(c, ":") {
			return ID{}, fmt.Errorf("ID %.80q: a film's ID (mm:<cid>) names no episode", s)
		}
		if !protocol.IsCanonicalForm(c) {
			return ID{}, fmt.Errorf("ID %.80q: not mm:<cid> with a CID in canonical form (CIDv1, base32 lower)", s)
		}
		id.CID = c
	case strings.HasPrefix(s, "tt"):
		id.IMDb, rest, _ = strings.Cut(s, ":")
		if !protocol.ValidIMDbID(id.IMDb) {
			return ID{}, fmt.Errorf("ID %.80q: %q is not an IMDb ID (tt and 7 or more digits)", s, id.IMDb)
		}
	default:
		return ID{}, fmt.Errorf("ID %.80q: want tt<digits>, mm:<cid> or mm:show:<key>", s)
	}
	if rest == "" && !strings.HasSuffix(s, ":") {
		return id, nil
	}
	se, ep, ok := strings.Cut(rest, ":")
	if !ok {
		return ID{}, fmt.Errorf("ID %.80q: an episode is <show>:<season>:<episode>", s)
	}
	var err error
	if id.Season, err = number(se); err != nil {
		return ID{}, fmt.Errorf("ID %.80q: season %w", s, err)
	}
	if id.Number, err = number(ep); err != nil {
		return ID{}, fmt.Errorf("ID %.80q: episode %w", s, err)
	}
	id.Episode = true
	return id, nil
}

// showKey reads the key part of mm:show:<key>.
func showKey(k string) (string, error) {
	if h, ok := strings.CutPrefix(k, "~"); ok {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) == 0 || !utf8.Valid(b) {
			return "", fmt.Errorf("show key ~%.40s: not the hex of a UTF-8 key", h)
		}
		return string(b), nil
	}
	key := strings.ReplaceAll(k, "-", " ")
	if !plainKey(key) {
		return "", fmt.Errorf("show key %.80q: want words of letters and digits joined by -", k)
	}
	return key, nil
}

// number reads a season or an episode: 0..maxNumber, digits only.
func number(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > maxNumber || s[0] < '0' || s[0] > '9' || len(s) > 5 {
		return 0, fmt.Errorf("%.20q: want a number from 0 to %d", s, maxNumber)
	}
	return n, nil
}

// Extra is what a catalog request's extra path segment asks
// (search=…&skip=N, as a URL query).
type Extra struct {
	Search string
	Skip   int
}

// ParseExtra reads a catalog request's extra segment, as it is in the
// path (escaped, without ".json"): search (1..MaxSearch bytes of UTF-8)
// and skip (0..MaxSkip), each at most once; anything else is an error.
func ParseExtra(raw string) (Extra, error) {
	var e Extra
	if len(raw) > 4*MaxSearch+64 {
		return e, fmt.Errorf("extra of %d bytes, too long", len(raw))
	}
	v, err := url.ParseQuery(raw)
	if err != nil {
		return e, fmt.Errorf("extra %.80q: not name=value pairs: %w", raw, err)
	}
	for k, vs := range v {
		if len(vs) > 1 {
			return e, fmt.Errorf("extra %.40q is given %d times", k, len(vs))
		}
		switch k {
		case "search":
			e.Search = vs[0]
			switch {
			case e.Search == "" || len(e.Search) > MaxSearch:
				return e, fmt.Errorf("extra search of %d bytes: want 1 to %d", len(e.Search), MaxSearch)
			case !utf8.ValidString(e.Search):
				return e, fmt.Errorf("extra search is not UTF-8")
			}
		case "skip":
			n, err := strconv.Atoi(vs[0])
			if err != nil || n < 0 || n > MaxSkip || vs[0][0] == '+' || vs[0][0] == '-' {
				return e, fmt.Errorf("extra skip %.20q: want a number from 0 to %d", vs[0], MaxSkip)
			}
			e.Skip = n
		default:
			return e, fmt.Errorf("extra %.40q: this add-on's catalogs take search and skip", k)
		}
	}
	return e, nil
}
