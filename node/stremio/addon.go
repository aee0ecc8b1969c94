package stremio

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/model"
	"github.com/metamesh/node/node/catalog"
	"github.com/metamesh/node/store"
)

// Prefix is the path the add-on is served under.
const Prefix = "/stremio"

// Source is what the add-on reads besides the catalog. Implementations
// are safe for concurrent use.
type Source interface {
	// Fields are the presented flat fields (store.Document.Presented) of
	// each of roots, in their order, nil for a root that is gone: one
	// round trip for all.
	Fields(ctx context.Context, roots []store.RootID) ([]map[string]string, error)
	// Search finds the household's own files by text (the local index,
	// never its peers): at most limit hits, best first.
	Search(ctx context.Context, q string, limit int) ([]model.SearchHit, error)
}

// Config is who the add-on is and who may use it.
type Config struct {
	// Name is the household's name, the add-on's; PeerID the node's
	// (its add-on ID is org.metamesh.<the ID's last 8 characters>);
	// Version the node's release.
	Name, PeerID, Version string
	// Loopback: the API listens on loopback only, every request is
	// served (but for a Host HostAllowed refuses) and the paths take no
	// token. Otherwise APIToken is the API's bearer token, and every
	// path carries the add-on's token (PathToken of it) after Prefix:
	// Stremio sends no headers, and keeps the add-on's URL in the
	// household's Stremio account, which must not hold the API's token.
	Loopback    bool
	APIToken    string
	HostAllowed func(host string) bool
	// Listen is the API's listen address as configured: the add-on's
	// URLs on the LAN are made of it (api.LANHosts).
	Listen string
}

// LinkPath answers the add-on's URL to a client of the API (GET, with
// the API's bearer token off loopback).
const LinkPath = "/api/stremio"

// PathToken is the add-on's token made of the API's: it opens the
// add-on's paths only, and does not give the API's token away.
func PathToken(apiToken string) string {
	if apiToken == "" {
		return ""
	}
	m := hmac.New(sha256.New, []byte(apiToken))
	m.Write([]byte("metamesh stremio add-on"))
	return hex.EncodeToString(m.Sum(nil))[:32]
}

// Link is the answer of GET LinkPath.
type Link struct {
	// Manifest is the add-on's URL as the client reached the node (its
	// token in the path off loopback): what Stremio's add-on search box
	// takes. Install is the same as a stremio:// link, which opens the
	// app on its install page.
	Manifest string `json:"manifest"`
	Install  string `json:"install"`
	// Path is the manifest's path, Listen the API's listen address, and
	// URLs the manifest's URL at every address of this machine a device
	// of the LAN may reach the node at (none on loopback).
	Path   string   `json:"path"`
	Listen string   `json:"listen"`
	URLs   []string `json:"urls"`
}

// Addon serves the Stremio add-on under Prefix and hands every other
// request to the API.
type Addon struct {
	cfg Config
	tok string // the paths' token, "" on loopback
	cat *catalog.Catalog
	src Source
	api http.Handler
}

// New builds the add-on over the household's catalog and src, in front
// of the API's handler api (whose /api/file and /api/thumb serve its
// files and posters).
func New(cfg Config, cat *catalog.Catalog, src Source, api http.Handler) *Addon {
	a := &Addon{cfg: cfg, cat: cat, src: src, api: api}
	if !cfg.Loopback {
		a.tok = PathToken(cfg.APIToken)
	}
	return a
}

// ServeHTTP implements http.Handler.
func (a *Addon) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.EscapedPath()
	rest, ok := strings.CutPrefix(p, Prefix+"/")
	if !ok {
		if p == LinkPath {
			a.link(w, r)
			return
		}
		if p == Prefix {
			writeError(w, http.StatusNotFound, "the Stremio add-on is "+Prefix+"/manifest.json (off loopback "+Prefix+"/<token>/manifest.json)")
			return
		}
		a.api.ServeHTTP(w, r)
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Headers", "*")
	h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
	switch r.Method {
	case http.MethodOptions:
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodGet, http.MethodHead:
	default:
		h.Set("Allow", "GET, HEAD, OPTIONS")
		writeError(w, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path)
		return
	}
	segs, code, msg := a.admit(r, strings.Split(rest, "/"))
	if code != 0 {
		writeError(w, code, msg)
		return
	}
	if !validHost(r.Host) {
		writeError(w, http.StatusBadRequest, "Host "+quote(r.Host)+" is not a host name or address: the add-on's links are made of it")
		return
	}
	a.route(w, r, segs)
}

// admit applies the access rules to a request's path segments after
// Prefix, and returns those after the token; or the status and message
// refusing it.
func (a *Addon) admit(r *http.Request, segs []string) ([]string, int, string) {
	if a.cfg.Loopback {
		if a.cfg.HostAllowed != nil && !a.cfg.HostAllowed(r.Host) {
			return nil, http.StatusForbidden, "Host " + quote(r.Host) + " is not this node: on loopback the add-on answers only localhost, 127.0.0.1, [::1] and the names given with --api-host"
		}
		return segs, 0, ""
	}
	if a.tok == "" {
		return nil, http.StatusUnauthorized, "this node has no API token: off loopback the add-on is served only with the token in its path"
	}
	tok, err := url.PathUnescape(segs[0])
	if len(segs) < 2 || err != nil || resource(segs[0]) {
		return nil, http.StatusUnauthorized, "the add-on needs its token in its path: " + Prefix + "/<token>/manifest.json (GET " + LinkPath + " with the API's token gives the whole URL)"
	}
	if subtle.ConstantTimeCompare([]byte(tok), []byte(a.tok)) != 1 {
		return nil, http.StatusUnauthorized, "wrong token in the path"
	}
	return segs[1:], 0, ""
}

// resource reports a first path segment that names a resource, not a
// token.
func resource(seg string) bool {
	switch seg {
	case "manifest.json", "catalog", "meta", "stream", "file", "converted", "thumb":
		return true
	}
	return false
}

// route answers a request by its path segments (after the token).
func (a *Addon) route(w http.ResponseWriter, r *http.Request, segs []string) {
	switch {
	case len(segs) == 1 && segs[0] == "manifest.json":
		writeJSON(w, http.StatusOK, a.manifest())
		return
	case len(segs) == 2 && (segs[0] == "file" || segs[0] == "converted" || segs[0] == "thumb"):
		a.bytes(w, r, segs[0], segs[1])
		return
	case len(segs) < 3 || len(segs) > 4 || !strings.HasSuffix(segs[len(segs)-1], ".json"):
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path+": the add-on serves manifest.json, catalog/<type>/<id>[/<extra>].json, meta/<type>/<id>.json and stream/<type>/<id>.json")
		return
	}
	last := len(segs) - 1
	segs[last] = strings.TrimSuffix(segs[last], ".json")
	typ := segs[1]
	if typ != TypeMovie && typ != TypeSeries {
		writeError(w, http.StatusNotFound, "type "+quote(typ)+": this add-on serves movie and series")
		return
	}
	switch {
	case segs[0] == "catalog":
		a.catalogRequest(w, r, typ, segs[2:])
		return
	case len(segs) != 3:
	case segs[0] == "meta":
		a.metaRequest(w, r, typ, segs[2])
		return
	case segs[0] == "stream":
		a.streamRequest(w, r, typ, segs[2])
		return
	}
	writeError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
}

// bytes serves file/<cid> and converted/<cid> (of a film or an episode
// the catalogs list only) and thumb/<cid> as the API serves /api/file,
// /api/stream (the file converted for a browser that cannot decode it)
// and /api/thumb (ranges, checks, errors), with the API's token where
// it takes one:
// Stremio's players, and a browser's page of another site (Stremio's
// web app), can send no header.
func (a *Addon) bytes(w http.ResponseWriter, r *http.Request, what, c string) {
	if (what == "file" || what == "converted") && !a.cat.Plays(c) {
		// The add-on's token plays the films and episodes it lists, not
		// every file of the library.
		writeError(w, http.StatusNotFound, "no film or episode of this household's is "+quote(c)+": the add-on plays what its catalogs list")
		return
	}
	r2 := r.Clone(r.Context())
	api := what
	if what == "converted" {
		api = "stream"
	}
	r2.URL = &url.URL{Path: "/api/" + api + "/" + c, RawPath: "/api/" + api + "/" + c}
	keep := url.Values{}
	for _, k := range map[string][]string{"thumb": {"w"}, "converted": {"start", "video", "audio"}}[what] {
		if q := r.URL.Query(); q.Has(k) {
			keep.Set(k, q.Get(k))
		}
	}
	r2.URL.RawQuery = keep.Encode()
	r2.Header.Del("Sec-Fetch-Site")
	r2.Header.Del("Cookie")
	r2.Header.Del("Authorization")
	if a.cfg.APIToken != "" {
		r2.Header.Set("Authorization", "Bearer "+a.cfg.APIToken)
	}
	a.api.ServeHTTP(w, r2)
}

// base is the add-on's URL as the client reached it, its token in the
// path where it takes one: the links of answers are made of it. Behind
// an HTTPS reverse proxy (X-Forwarded-Proto: https) they are https://
// links of the Host the proxy passes on; a client that sends the header
// itself only changes the links it is given.
func (a *Addon) base(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	b := scheme + "://" + r.Host + Prefix
	if a.tok != "" {
		b += "/" + url.PathEscape(a.tok)
	}
	return b
}

// validHost reports a Host header the links may be made of: a name or
// an address, with a port or without, nothing else.
func validHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for _, c := range h {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.ContainsRune(".-:[]_%", c):
		default:
			return false
		}
	}
	return true
}

// link answers GET LinkPath: the add-on's URL, to a client of the API
// (on loopback any, as the API; off loopback one with its token).
func (a *Addon) link(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+LinkPath)
		return
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		writeError(w, http.StatusForbidden, "a page of another site may not use this node's API (Sec-Fetch-Site: cross-site)")
		return
	}
	if r.URL.RawQuery != "" {
		writeError(w, http.StatusBadRequest, LinkPath+" takes no parameters")
		return
	}
	if _, code, msg := a.admit(r, []string{"manifest.json"}); a.cfg.Loopback && code != 0 {
		writeError(w, code, msg)
		return
	}
	if !a.cfg.Loopback {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if a.cfg.APIToken == "" || !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(a.cfg.APIToken)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metamesh"`)
			writeError(w, http.StatusUnauthorized, LinkPath+" needs Authorization: Bearer <token> (the token is in the file --api-token-file names)")
			return
		}
	}
	if !validHost(r.Host) {
		writeError(w, http.StatusBadRequest, "Host "+quote(r.Host)+" is not a host name or address: the add-on's URL is made of it")
		return
	}
	m := a.base(r) + "/manifest.json"
	_, rest, _ := strings.Cut(m, "://")
	l := Link{Manifest: m, Install: "stremio://" + rest, Path: strings.TrimPrefix(rest, r.Host), Listen: a.cfg.Listen, URLs: []string{}}
	for _, h := range api.LANHosts(a.cfg.Listen) {
		l.URLs = append(l.URLs, "http://"+h+l.Path)
	}
	writeJSON(w, http.StatusOK, l)
}

// writeJSON answers v as JSON with code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	body, err := model.EncodeAnswer(v)
	if err != nil {
		code = http.StatusInternalServerError
		body, _ = model.EncodeAnswer(map[string]string{"error": "cannot encode the answer: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	w.Write(body)
}

// writeError answers {"error": msg} with code.
func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

// failed answers an error of the store or the index: 404 for what is
// not found, 503 for the rest.
func failed(w http.ResponseWriter, what string, err error) {
	if errors.Is(err, model.ErrNotFound) {
		writeError(w, http.StatusNotFound, what+": "+err.Error())
		return
	}
	writeError(w, http.StatusServiceUnavailable, what+": "+err.Error())
}

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80]
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}
