package api

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"
)

// MaxThumbWidth bounds w= of GET /api/thumb.
const MaxThumbWidth = 4096

// Thumbnailer is the part of a Backend that answers GET /api/thumb; a
// Backend without it answers 404 there.
type Thumbnailer interface {
	// Thumbnail returns the path of a JPEG thumbnail, about width pixels
	// wide, of the image file c names: a local one, else a peer's
	// (artwork of a peer's file), fetched for a caller that may fetch
	// from peers (from). Errors wrap ErrNotFound (no such image),
	// ErrConflict (as File's), ErrUnprocessable (not an image the node
	// reads, or too large), ErrUnavailable (a *SourcesError: no
	// household that names it served it) or the caller's refusal.
	Thumbnail(ctx context.Context, c string, width int, from Caller) (string, error)
}

// thumb serves GET /api/thumb/<cid>[?w=N]: a poster's thumbnail, so a
// page of posters moves kilobytes each. The CID names the image's bytes,
// so the answer never changes: it is cached for a year.
func (s *Server) thumb(w http.ResponseWriter, r *http.Request) {
	c, ok := cidRequest(w, r, "w")
	if !ok {
		return
	}
	tb, ok := s.b.(Thumbnailer)
	if !ok {
		writeErrorCode(w, http.StatusNotFound, "this node makes no thumbnails")
		return
	}
	v := r.URL.Query()
	if err := singleParams(v, "w"); err != nil {
		writeError(w, err)
		return
	}
	width := 320
	if v.Has("w") {
		n, err := strconv.Atoi(v.Get("w"))
		if err != nil || n < 1 || n > MaxThumbWidth {
			writeError(w, badRequest("w %q: want a width in pixels, 1 to %d", v.Get("w"), MaxThumbWidth))
			return
		}
		width = n
	}
	path, err := tb.Thumbnail(r.Context(), c, width, s.caller(r))
	if err != nil {
		s.logFailure(r, "make a thumbnail", err, "cid", c)
		writeError(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "image/jpeg")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", fmt.Sprintf(`"%s-%d"`, c, width))
	f, err := os.Open(path)
	if err != nil {
		writeError(w, fmt.Errorf("thumbnail of %s: %w", c, err))
		return
	}
	defer f.Close()
	http.ServeContent(w, r, "", time.Time{}, f)
}
