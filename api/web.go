package api

import (
	"embed"
	"net/http"
)

// webFiles are the web page's files: plain HTML, CSS and JavaScript, served
// as they are (no build step, nothing fetched from elsewhere).
//
//go:embed web/index.html web/app.js web/style.css
var webFiles embed.FS

// webAssets maps the page's paths to their embedded file and type.
var webAssets = map[string]struct{ file, mime string }{
	"/":          {"web/index.html", "text/html; charset=utf-8"},
	"/app.js":    {"web/app.js", "text/javascript; charset=utf-8"},
	"/style.css": {"web/style.css", "text/css; charset=utf-8"},
}

// webCSP lets the page load only its own scripts, styles, media and API
// answers: no inline script, no other origin, no framing.
const webCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"media-src 'self'; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// The page and its assets are static and public, like /health: what they
// show comes from the API, which keeps its own access rules. /api/cid only
// decodes the CID it is given, so PublicRead opens it with the other reads.
func init() {
	for p := range webAssets {
		open[p] = true
	}
	publicRead = append(publicRead, "/api/cid/")
}

// routeWeb registers the web page (GET /, /app.js, /style.css) and
// GET /api/cid/<cid>, which the page uses to show each CID's tier and rank.
func (s *Server) routeWeb() {
	for p, a := range webAssets {
		pattern := "GET " + p
		if p == "/" {
			pattern = "GET /{$}"
		}
		s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			body, err := webFiles.ReadFile(a.file)
			if err != nil { // embedded at build time: cannot happen
				writeErrorCode(w, http.StatusInternalServerError, err.Error())
				return
			}
			h := w.Header()
			h.Set("Content-Type", a.mime)
			h.Set("Content-Security-Policy", webCSP)
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Referrer-Policy", "no-referrer")
			h.Set("Cache-Control", "no-cache")
			w.WriteHeader(http.StatusOK)
			if r.Method != http.MethodHead {
				_, _ = w.Write(body)
			}
		})
	}
	s.routeCID("/api/cid", s.inspectCID)
}
