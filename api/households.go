package api

import (
	"context"
	"net/http"
	"unicode/utf8"

	"github.com/metamesh/node/protocol"
)

// Householder is the part of a Backend that answers GET /api/households
// and GET /api/households/<peer>/library; a Backend without it answers
// 404 there.
type Householder interface {
	// Households are the other households the node is connected to, as
	// each answered the library protocol.
	Households(ctx context.Context) (HouseholdsAnswer, error)
	// HouseholdLibrary asks household q.Peer for one page of its list.
	// q is valid (householdParams checked it). Errors wrap ErrBadRequest
	// (not a peer ID), ErrNotFound (no such household known), ErrRefused
	// (403), ErrPeerFailed (502) or ErrPeerTimeout (504).
	HouseholdLibrary(ctx context.Context, q HouseholdQuery) (HouseholdLibrary, error)
}

// routeHouseholds registers GET /api/households and its libraries. They
// ask peers: like /api/peers they need the token off loopback, whatever
// --public-read.
func (s *Server) routeHouseholds() {
	s.mux.HandleFunc("GET /api/households", s.households)
	s.mux.HandleFunc("GET /api/households/{peer}/library", s.householdLibrary)
}

func (s *Server) households(w http.ResponseWriter, r *http.Request) {
	hb, ok := s.b.(Householder)
	if !ok {
		writeErrorCode(w, http.StatusNotFound, "this node lists no households")
		return
	}
	if err := onlyParams(r.URL.Query()); err != nil {
		writeError(w, err)
		return
	}
	res, err := hb.Households(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	if res.Households == nil {
		res.Households = []Household{}
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) householdLibrary(w http.ResponseWriter, r *http.Request) {
	hb, ok := s.b.(Householder)
	if !ok {
		writeErrorCode(w, http.StatusNotFound, "this node lists no households")
		return
	}
	q, err := householdParams(r)
	if err != nil {
		writeError(w, err)
		return
	}
	page, err := hb.HouseholdLibrary(r.Context(), q)
	if err != nil {
		if status(err) >= 500 {
			s.log.Warn("a household's library", "peer", q.Peer, "err", err)
		}
		writeError(w, err)
		return
	}
	if page.Entries == nil {
		page.Entries = []LibraryEntry{}
	}
	writeJSON(w, http.StatusOK, page)
}

// householdParams reads the peer of the path and view (movies or shows;
// shows when show is given, movies by default), show (a show's key,
// 1..1024 bytes of UTF-8), season (0..MaxSeason, only with show), q
// (words, at most 256 bytes of UTF-8, with movies and shows only), page
// (1..the protocol's MaxLibraryPage, default 1) and limit (1..100,
// default 50); any other parameter, or one given twice, is an error
// naming it.
func householdParams(r *http.Request) (HouseholdQuery, error) {
	v := r.URL.Query()
	if err := singleParams(v, "view", "show", "season", "q", "page", "limit"); err != nil {
		return HouseholdQuery{}, err
	}
	q := HouseholdQuery{Peer: r.PathValue("peer"), View: v.Get("view"), Show: v.Get("show"), Q: v.Get("q"), Season: -1}
	if len(q.Peer) > 128 || q.Peer == "" {
		return HouseholdQuery{}, badRequest("peer of %d bytes: want a peer ID, as GET /api/households names it", len(q.Peer))
	}
	switch {
	case !v.Has("view") && v.Has("show"):
		q.View = ViewShows
	case !v.Has("view"):
		q.View = ViewMovies
	case q.View != ViewMovies && q.View != ViewShows:
		return HouseholdQuery{}, badRequest("view %q: want movies or shows", q.View)
	case v.Has("show") && q.View != ViewShows:
		return HouseholdQuery{}, badRequest("show is given with view %q: a show's seasons are in view shows", q.View)
	}
	switch {
	case v.Has("show") && (q.Show == "" || len(q.Show) > protocol.MaxLibraryShowKey || !utf8.ValidString(q.Show)):
		return HouseholdQuery{}, badRequest("show: want a show's key, as the shows list names it, of 1 to %d bytes of UTF-8", protocol.MaxLibraryShowKey)
	case v.Has("season") && !v.Has("show"):
		return HouseholdQuery{}, badRequest("season is given without show: say whose season with show=<key>")
	case v.Has("q") && v.Has("show"):
		return HouseholdQuery{}, badRequest("q searches the films or the shows: give it without show")
	case len(q.Q) > protocol.MaxLibraryQuery || !utf8.ValidString(q.Q):
		return HouseholdQuery{}, badRequest("q: at most %d bytes of UTF-8", protocol.MaxLibraryQuery)
	}
	var err error
	if q.Season, err = intParam(v.Get("season"), v.Has("season"), "season", 0, MaxSeason, -1); err != nil {
		return HouseholdQuery{}, err
	}
	if q.Page, err = intParam(v.Get("page"), v.Has("page"), "page", 1, protocol.MaxLibraryPage, 1); err != nil {
		return HouseholdQuery{}, err
	}
	if q.Limit, err = intParam(v.Get("limit"), v.Has("limit"), "limit", 1, protocol.MaxLibraryEntries, DefaultLibraryLimit); err != nil {
		return HouseholdQuery{}, err
	}
	return q, nil
}
