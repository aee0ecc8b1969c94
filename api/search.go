package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Search limits of GET /api/search.
const (
	MaxSearchQuery     = 256 // bytes
	MaxSearchLimit     = 100
	DefaultSearchLimit = 20
	maxSearchCursor    = 64
)

// Searcher is the part of a Backend that answers GET /api/search; a
// Backend without it answers 404 there.
type Searcher interface {
	// Search finds files by text: the local index, then, with federated
	// and on the first page only (cursor ""), connected peers' answers;
	// before it asks them it calls from.Federate and returns its error.
	// Errors wrap ErrBadRequest (a cursor it did not hand out for q),
	// ErrUnavailable or ErrRateLimited. q holds a word (HasWord), limit
	// is in range.
	Search(ctx context.Context, q string, limit int, cursor string, federated bool, from Caller) (SearchResult, error)
}

// SearchResult is the JSON shape of GET /api/search.
type SearchResult struct {
	// Hits: local first, then peers' (deduplicated by canonical CID).
	Hits []SearchHit `json:"hits"`
	// Next is the cursor of the next local page, "" on the last.
	Next string `json:"next,omitempty"`
	// Peers are the peers whose answers were merged (federated only).
	Peers []string `json:"peers"`
	// Asked is how many households a federated search asked, FromIndex
	// how many of them because the DHT's keyword index named them (a
	// connected one included when the index's turn reached it first; the
	// others are connected peers); 0 for a local search.
	Asked     int `json:"asked"`
	FromIndex int `json:"fromIndex"`
}

// SearchHit is one hit of GET /api/search: a file's summary, its
// members, its IMDb ID and the peers that answered it. The node builds
// every hit, local or a peer's, in one place (from the store's summary
// of a root of its index, or a protocol.SearchHit of a peer's verified
// answer). Its JSON object's keys are sorted, as when a hit was a map;
// cid, cids, fileType, size, source and title are always sent.
type SearchHit struct {
	// FileSummary: the CID is the canonical CID; the year, season,
	// episode and episode title are what the index knows of a hit of its
	// own (local files and files peers sent before), or what a peer's
	// answer over /metamesh/search/1.1.0 said (one over 1.0.0 carries
	// none of them). Source is "local" for a local file, else the peer it
	// is known from.
	FileSummary
	// CIDs are the file's members (those the node vouches for, for a
	// local file).
	CIDs   []string `json:"cids"`
	IMDbID string   `json:"imdbid,omitempty"`
	// Peers are the peers whose answers held the hit: for a hit only a
	// peer's answer gave, that peer first; for one the index holds from
	// peers, the peer that supplied it first, when another peer answered
	// it too. Never set on a local file's hit.
	Peers []string `json:"peers,omitempty"`
	// Subtitles are the languages of the subtitles the file has, Art the
	// kinds of its artwork (poster, fanart, …), as the index knows them:
	// sidecars are never hits of their own. Left out when none (always
	// for a hit only a peer's answer gave).
	Subtitles []string `json:"subtitles,omitempty"`
	Art       []string `json:"art,omitempty"`
}

// hitAlways are the names a hit always has, with their zero values.
var hitAlways = map[string]json.RawMessage{"cid": json.RawMessage(`""`), "fileType": json.RawMessage(`""`),
	"size": json.RawMessage(`0`), "source": json.RawMessage(`""`)}

// MarshalJSON writes the hit's object, its keys sorted.
func (h SearchHit) MarshalJSON() ([]byte, error) {
	type plain SearchHit
	return sortedJSON(plain(h), hitAlways)
}

// UnmarshalJSON reads a hit, its whole numbers however they are written
// (3000000, 3e6): metamesh search reads the JSON of any node.
func (h *SearchHit) UnmarshalJSON(b []byte) error {
	type plain SearchHit
	var raw struct {
		plain
		Episode json.RawMessage `json:"episode"`
		Season  json.RawMessage `json:"season"`
		Size    json.RawMessage `json:"size"`
		Year    json.RawMessage `json:"year"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*h = SearchHit(raw.plain)
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		set  func(int64)
	}{
		{"episode", raw.Episode, func(n int64) { h.Episode = ptr(int(n)) }},
		{"season", raw.Season, func(n int64) { h.Season = ptr(int(n)) }},
		{"size", raw.Size, func(n int64) { h.Size = n }},
		{"year", raw.Year, func(n int64) { h.Year = int(n) }},
	} {
		if len(f.raw) == 0 || string(f.raw) == "null" {
			continue
		}
		n, err := wholeNumber(f.raw)
		if err != nil {
			return fmt.Errorf("api: search hit %s: %w", f.name, err)
		}
		f.set(n)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// routeSearch registers GET /api/search.
func (s *Server) routeSearch() {
	s.mux.HandleFunc("GET /api/search", s.search)
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	sb, ok := s.b.(Searcher)
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "this node does not search"})
		return
	}
	q, limit, cursor, fed, err := searchParams(r)
	if err != nil {
		writeError(w, err)
		return
	}
	res, err := sb.Search(r.Context(), q, limit, cursor, fed, s.caller(r))
	if err != nil {
		s.logFailure(r, "search", err, "q", q)
		if errors.Is(err, ErrBadRequest) {
			// The parameters were checked above: what the backend refuses
			// is the cursor, and its words are the store's, not the user's.
			s.log.Debug("search cursor refused", "q", q, "cursor", cursor, "err", err)
			err = errBadCursor
		}
		writeError(w, err)
		return
	}
	if res.Hits == nil {
		res.Hits = []SearchHit{}
	}
	if res.Peers == nil {
		res.Peers = []string{}
	}
	writeJSON(w, http.StatusOK, res)
}

// errBadCursor answers a cursor that is not a next this node gave for
// the query.
var errBadCursor = badRequest("cursor: not one this node gave for this query; start again without cursor")

// searchParams reads q (1..MaxSearchQuery bytes of UTF-8 holding a word),
// limit (1..MaxSearchLimit, default DefaultSearchLimit), cursor and
// federated; any other parameter, or one given twice, is an error.
func searchParams(r *http.Request) (q string, limit int, cursor string, fed bool, err error) {
	v := r.URL.Query()
	if err := singleParams(v, "q", "limit", "cursor", "federated"); err != nil {
		return "", 0, "", false, err
	}
	q = v.Get("q")
	switch {
	case q == "":
		return "", 0, "", false, badRequest("missing q: use /api/search?q=<words>")
	case len(q) > MaxSearchQuery:
		return "", 0, "", false, badRequest("q of %d bytes, at most %d", len(q), MaxSearchQuery)
	case !utf8.ValidString(q):
		return "", 0, "", false, badRequest("q is not UTF-8")
	case !HasWord(q):
		return "", 0, "", false, badRequest("q %q holds no word (only spaces and punctuation): use /api/search?q=<words>", q)
	}
	limit = DefaultSearchLimit
	if l := v.Get("limit"); l != "" || v.Has("limit") {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > MaxSearchLimit {
			return "", 0, "", false, badRequest("limit %q: want a number from 1 to %d", l, MaxSearchLimit)
		}
		limit = n
	}
	cursor = v.Get("cursor")
	if len(cursor) > maxSearchCursor {
		return "", 0, "", false, errBadCursor
	}
	switch f := v.Get("federated"); f {
	case "", "0", "false", "no":
	case "1", "true", "yes":
		fed = true
	default:
		return "", 0, "", false, badRequest("federated %q: want 1 or 0", f)
	}
	return q, limit, cursor, fed, nil
}

// HasWord reports whether q holds a letter or a digit once decomposed
// (NFKD, as the index splits words): a query without one matches nothing.
// metamesh search asks it before it asks the node.
func HasWord(q string) bool {
	for _, r := range norm.NFKD.String(q) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}
