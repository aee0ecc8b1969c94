package api

import (
	"io"
	"mime"
	"net/http"
	"time"
)

// File is a local file opened for GET /api/file/<cid>.
type File struct {
	// Content is positioned at the start; the handler closes it.
	Content io.ReadSeekCloser
	// Name is the file's base name (Content-Disposition).
	Name string
	// Size and ModTime are what was hashed (and checked again on open).
	Size    int64
	ModTime time.Time
	// MimeType as stored; "" sends application/octet-stream.
	MimeType string
	// CID is the canonical CID, the ETag.
	CID string
}

// file serves a local file's bytes with http.ServeContent: Range (single
// and multi), If-Range and If-None-Match against the ETag (the canonical
// CID, which names the bytes forever, so the answer is immutable).
func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	c, ok := cidRequest(w, r)
	if !ok {
		return
	}
	f, err := s.b.File(r.Context(), c)
	if err != nil {
		if status(err) >= 500 {
			s.log.Error("open file", "cid", c, "err", err)
		}
		writeError(w, err)
		return
	}
	defer f.Content.Close()
	h := w.Header()
	h.Set("ETag", `"`+f.CID+`"`)
	ct := f.MimeType
	if ct == "" {
		ct = "application/octet-stream"
	}
	h.Set("Content-Type", ct)
	h.Set("X-Content-Type-Options", "nosniff")
	// The bytes are the household's, not the API's: a stored HTML file
	// opened directly must not run script with the API's origin.
	h.Set("Content-Security-Policy", "sandbox")
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	if d := mime.FormatMediaType("inline", map[string]string{"filename": f.Name}); d != "" {
		h.Set("Content-Disposition", d)
	} else {
		h.Set("Content-Disposition", "inline")
	}
	http.ServeContent(w, r, f.Name, f.ModTime, f.Content)
}
