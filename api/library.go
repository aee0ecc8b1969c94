package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of GET /api/library.
const (
	MaxLibraryLimit     = 200
	DefaultLibraryLimit = 50
	// MaxLibraryPage bounds page= (a list of MaxLibraryPage pages of one
	// entry is far beyond any household's library).
	MaxLibraryPage = 1 << 20
	// MaxSeason bounds season=, as the NFO reader bounds season numbers.
	MaxSeason = 99999
	// maxShowKey bounds show=, in bytes.
	maxShowKey = 1024
)

// Librarian is the part of a Backend that answers GET /api/library; a
// Backend without it answers 404 there.
type Librarian interface {
	// Library answers one page of a list of the library. q is valid
	// (libraryParams checked it). Errors wrap ErrNotFound (a show or a
	// season the library does not hold).
	Library(ctx context.Context, q LibraryQuery) (LibraryPage, error)
}

// routeLibrary registers GET /api/library.
func (s *Server) routeLibrary() {
	s.mux.HandleFunc("GET /api/library", s.library)
}

func (s *Server) library(w http.ResponseWriter, r *http.Request) {
	lb, ok := s.b.(Librarian)
	if !ok {
		writeErrorCode(w, http.StatusNotFound, "this node does not list its library")
		return
	}
	q, err := libraryParams(r)
	if err != nil {
		writeError(w, err)
		return
	}
	page, err := lb.Library(r.Context(), q)
	if err != nil {
		if status(err) >= 500 {
			s.log.Error("library", "view", q.View, "err", err)
		}
		writeError(w, err)
		return
	}
	if page.Entries == nil {
		page.Entries = []LibraryEntry{}
	}
	writeJSON(w, http.StatusOK, page)
}

// libraryParams reads view (recent, movies or shows; shows when show is
// given, else recent by default), show (a show's key, 1..1024 bytes of
// UTF-8), season (0..MaxSeason, only with show), page (1..MaxLibraryPage,
// default 1) and limit (1..MaxLibraryLimit, default
// DefaultLibraryLimit); any other parameter, or one given twice, is an
// error naming it.
func libraryParams(r *http.Request) (LibraryQuery, error) {
	v := r.URL.Query()
	if err := singleParams(v, "view", "show", "season", "page", "limit", "folder"); err != nil {
		return LibraryQuery{}, err
	}
	q := LibraryQuery{View: v.Get("view"), Show: v.Get("show"), Season: -1, Page: 1, Limit: DefaultLibraryLimit, Folder: v.Get("folder")}
	if v.Has("folder") {
		switch {
		case v.Has("view") || v.Has("show"):
			return LibraryQuery{}, badRequest("folder is a list of its own: give it without view or show")
		case !strings.HasPrefix(q.Folder, "/") || len(q.Folder) > 4096 || !utf8.ValidString(q.Folder):
			return LibraryQuery{}, badRequest("folder %.80q: want an absolute path of at most 4096 bytes of UTF-8", q.Folder)
		}
		q.View = ViewFolder
		q.Folder = strings.TrimSuffix(q.Folder, "/")
	}
	if v.Has("show") {
		switch {
		case q.Show == "":
			return LibraryQuery{}, badRequest("show is empty: give a show's key, as the shows list names it")
		case len(q.Show) > maxShowKey:
			return LibraryQuery{}, badRequest("show of %d bytes, at most %d", len(q.Show), maxShowKey)
		case !utf8.ValidString(q.Show):
			return LibraryQuery{}, badRequest("show is not UTF-8")
		}
	}
	switch {
	case q.View == ViewFolder:
	case !v.Has("view") && v.Has("show"):
		q.View = ViewShows
	case !v.Has("view"):
		q.View = ViewRecent
	case q.View != ViewRecent && q.View != ViewMovies && q.View != ViewShows && q.View != ViewPeers && q.View != ViewOther:
		return LibraryQuery{}, badRequest("view %q: want recent, movies, shows, other or peers", q.View)
	case v.Has("show") && q.View != ViewShows:
		return LibraryQuery{}, badRequest("show is given with view %q: a show's seasons are in view shows", q.View)
	}
	if v.Has("season") {
		if !v.Has("show") {
			return LibraryQuery{}, badRequest("season is given without show: say whose season with show=<key>")
		}
	}
	var err error
	if q.Season, err = intParam(v.Get("season"), v.Has("season"), "season", 0, MaxSeason, -1); err != nil {
		return LibraryQuery{}, err
	}
	if q.Page, err = intParam(v.Get("page"), v.Has("page"), "page", 1, MaxLibraryPage, 1); err != nil {
		return LibraryQuery{}, err
	}
	if q.Limit, err = intParam(v.Get("limit"), v.Has("limit"), "limit", 1, MaxLibraryLimit, DefaultLibraryLimit); err != nil {
		return LibraryQuery{}, err
	}
	return q, nil
}

// intParam reads a whole number parameter name of lo..hi, def when it is
// not given.
func intParam(s string, given bool, name string, lo, hi, def int) (int, error) {
	if !given {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi || s[0] == '+' {
		return 0, badRequest("%s %q: want a number from %d to %d", name, s, lo, hi)
	}
	return n, nil
}
