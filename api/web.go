package api

import (
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// webFiles are the web page's files: plain HTML, CSS and JavaScript
// modules, served as they are (no build step, nothing fetched from
// elsewhere).
//
//go:embed web
var webFiles embed.FS

// webTypes are the types the page's files are served with, by extension.
// Module scripts need a JavaScript type: with nosniff a browser runs no
// other.
var webTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
}

// webAsset is one file of the page: where it is embedded, and its type.
type webAsset struct{ file, mime string }

// webAssets maps the page's paths to their files: the page at /, every
// other file under web/ at its own path (/style.css, /js/main.js).
var webAssets = mustWebAssets(webFiles)

// mustWebAssets lists the files under web/ in fsys by path. A file of a
// type webTypes does not name is a mistake of the build: it stops the
// program at start (and api's tests).
func mustWebAssets(fsys fs.FS) map[string]webAsset {
	assets := map[string]webAsset{}
	err := fs.WalkDir(fsys, "web", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		mime, ok := webTypes[path.Ext(p)]
		if !ok {
			return fmt.Errorf("%s: no type for a file named %q", p, path.Ext(p))
		}
		route := strings.TrimPrefix(p, "web")
		if route == "/index.html" {
			route = "/"
		}
		assets[route] = webAsset{p, mime}
		return nil
	})
	if err != nil {
		panic("api: the embedded web page: " + err.Error())
	}
	return assets
}

// webCSP lets the page load only its own scripts, styles, media and API
// answers: no inline script, no other origin, no framing.
const webCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"media-src 'self' blob:; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// The page and its assets are static and public, like /health: what they
// show comes from the API, which keeps its own access rules. /api/cid only
// decodes the CID it is given, so PublicRead opens it with the other reads.
func init() {
	for p := range webAssets {
		open[p] = true
	}
	publicRead = append(publicRead, "/api/cid/")
}

// routeWeb registers the web page (GET / and every file of it, such as
// /style.css and /js/main.js) and GET /api/cid/<cid>, which the page uses
// to show each CID's tier and rank.
func (s *Server) routeWeb() {
	for p, a := range webAssets {
		pattern := "GET " + p
		if p == "/" {
			pattern = "GET /{$}"
		}
		s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			serveWebAsset(w, r, a)
		})
	}
	s.routeCID("/api/cid", s.inspectCID)
}

// serveWebAsset answers with the file a, under the page's CSP.
func serveWebAsset(w http.ResponseWriter, r *http.Request, a webAsset) {
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
}
