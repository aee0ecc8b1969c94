package api

import (
	"context"
	"errors"
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
