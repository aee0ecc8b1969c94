package api

import (
	"context"
	"net/http"

	"github.com/metamesh/node/model"
)

// The model's types of GET /api/duplicates.
type (
	DuplicatesQuery = model.DuplicatesQuery
	DuplicatesPage  = model.DuplicatesPage
	DuplicateGroup  = model.DuplicateGroup
	DuplicateCopy   = model.DuplicateCopy
)

// The groupings of GET /api/duplicates (by=).
const (
	DuplicatesByContent = model.DuplicatesByContent
	DuplicatesByTitle   = model.DuplicatesByTitle
)

// Deduplicator is the part of a Backend that answers GET
// /api/duplicates; a Backend without it answers 404 there.
type Deduplicator interface {
	// Duplicates answers one page of the groups of q.By, of the
	// household's own files only. q is valid (duplicatesParams checked
	// it).
	Duplicates(ctx context.Context, q DuplicatesQuery) (DuplicatesPage, error)
}

// routeDuplicates registers GET /api/duplicates. It is not one of the
// endpoints PublicRead opens: its answer names the files' paths.
func (s *Server) routeDuplicates() {
	s.mux.HandleFunc("GET /api/duplicates", s.duplicates)
}

func (s *Server) duplicates(w http.ResponseWriter, r *http.Request) {
	d, ok := s.b.(Deduplicator)
	if !ok {
		writeErrorCode(w, http.StatusNotFound, "this node does not list its duplicates")
		return
	}
	q, err := duplicatesParams(r)
	if err != nil {
		writeError(w, err)
		return
	}
	page, err := d.Duplicates(r.Context(), q)
	if err != nil {
		if status(err) >= 500 {
			s.log.Error("duplicates", "by", q.By, "err", err)
		}
		writeError(w, err)
		return
	}
	if page.Groups == nil {
		page.Groups = []DuplicateGroup{}
	}
	writeJSON(w, http.StatusOK, page)
}

// duplicatesParams reads by (content or title, default content), page
// (1..MaxLibraryPage, default 1) and limit (1..MaxLibraryLimit, default
// DefaultLibraryLimit), as GET /api/library reads them; any other
// parameter, or one given twice, is an error naming it.
func duplicatesParams(r *http.Request) (DuplicatesQuery, error) {
	v := r.URL.Query()
	if err := singleParams(v, "by", "page", "limit"); err != nil {
		return DuplicatesQuery{}, err
	}
	q := DuplicatesQuery{By: DuplicatesByContent}
	if v.Has("by") {
		q.By = v.Get("by")
		if q.By != DuplicatesByContent && q.By != DuplicatesByTitle {
			return DuplicatesQuery{}, badRequest("by %q: want content or title", q.By)
		}
	}
	var err error
	if q.Page, err = intParam(v.Get("page"), v.Has("page"), "page", 1, MaxLibraryPage, 1); err != nil {
		return DuplicatesQuery{}, err
	}
	if q.Limit, err = intParam(v.Get("limit"), v.Has("limit"), "limit", 1, MaxLibraryLimit, DefaultLibraryLimit); err != nil {
		return DuplicatesQuery{}, err
	}
	return q, nil
}
