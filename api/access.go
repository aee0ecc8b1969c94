package api

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"

	"github.com/metamesh/node/invite"
)

// Access says who may use the API.
//
// On loopback (Loopback true) every request is served, but only with a
// Host header naming the node itself (localhost, 127.0.0.1, [::1], or one
// of Hosts, any port): a web page the household visits cannot read the
// API through DNS rebinding.
//
// A browser's request from a page of another site (Sec-Fetch-Site:
// cross-site) to /api/ is refused whatever the address.
//
// Otherwise every endpoint but /health, /ready and /metrics requires
// "Authorization: Bearer <Token>"; PublicRead opens GET (and HEAD)
// /api/meta, /api/search, /api/library and /api/file (with the
// thumbnails and subtitles made of files) without it. An
// empty Token then serves nothing that needs one. What such a client, a
// stranger, may make the node ask its peers is limited (strangers.go,
// Options.Strangers).
//
// A browser let in by an invite (invites.go) sends a session cookie
// instead of the token, and is served as a client with the token is,
// except /api/invites and /api/snapshot (the token only) and, against cross-site request
// forgery, a method other than GET or HEAD from a page of another origin.
//
// The Stremio add-on the node serves in front of the API (/stremio/,
// node/stremio) has rules of its own made of these: HostAllowed on
// loopback, a token made of Token in its paths off loopback.
type Access struct {
	Loopback   bool
	Token      string
	PublicRead bool
	// Hosts are more names the Host header may carry on loopback.
	Hosts []string
	// Invites are the invites and the sessions of the browsers they let
	// in; nil serves no invite and opens nothing by cookie.
	Invites *invite.Store
}

// open are the endpoints served to anyone.
var open = map[string]bool{"/health": true, "/ready": true, "/metrics": true}

// publicRead are the endpoint prefixes PublicRead opens to GET and HEAD.
var publicRead = []string{"/api/meta/", "/api/search", "/api/library", "/api/file/", "/api/thumb/", "/api/subtitle/", "/api/sources/"}

// check returns the status and message refusing r, or 0.
func (a *Access) check(r *http.Request) (int, string) {
	// A browser names the site that made a request: a page of another site
	// (not the node's own page, not another port of the same host) may not
	// make the node look CIDs up, search its peers or fetch its files, even
	// without reading the answer.
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" && strings.HasPrefix(r.URL.Path, "/api/") {
		return http.StatusForbidden, "a page of another site may not use this node's API (Sec-Fetch-Site: cross-site)"
	}
	if a.Loopback {
		if !a.HostAllowed(r.Host) {
			return http.StatusForbidden, "Host " + quote(r.Host) + " is not this node: on loopback the API answers only localhost, 127.0.0.1, [::1] and the names given with --api-host"
		}
		return 0, ""
	}
	if open[r.URL.Path] || strings.HasPrefix(r.URL.Path, invitePrefix) {
		return 0, ""
	}
	tokenOnly := r.URL.Path == invitesPath || strings.HasPrefix(r.URL.Path, invitesPath+"/")
	if a.PublicRead && !tokenOnly && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		for _, p := range publicRead {
			if strings.HasPrefix(r.URL.Path, p) || r.URL.Path+"/" == p {
				return 0, ""
			}
		}
	}
	if _, ok := bearer(r); ok {
		if !a.tokenOK(r) {
			return http.StatusUnauthorized, "wrong bearer token"
		}
		return 0, ""
	}
	if r.URL.Path == snapshotPath {
		return http.StatusUnauthorized, "snapshots are exported and imported with Authorization: Bearer <token> only (metamesh export and import on the node's machine); a browser's invite does not open them"
	}
	if tokenOnly {
		return http.StatusUnauthorized, "invites are made and revoked with Authorization: Bearer <token> only (metamesh invite on the node's machine); a browser's invite does not open them"
	}
	if secret, ok := a.sessionCookie(r); ok {
		return a.checkSession(r, secret)
	}
	return http.StatusUnauthorized, "this endpoint needs Authorization: Bearer <token> (the token is in the file --api-token-file names), or a browser let in by an invite (metamesh invite)"
}

// checkSession is check for a request that carries a session cookie and
// no token: served when the session is one the node let in and, for a
// method that may change something, when the page that sent it is the
// node's own.
func (a *Access) checkSession(r *http.Request, secret string) (int, string) {
	if _, ok := a.Invites.Session(secret); !ok {
		return http.StatusUnauthorized, "this browser's invite was revoked or is not this node's: ask the household for a new invite (metamesh invite)"
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !sameOrigin(r) {
		return http.StatusForbidden, r.Method + " by a browser's invite is served only to the node's own page (Sec-Fetch-Site: same-origin, or an Origin naming this host)"
	}
	return 0, ""
}

// sameOrigin reports whether a browser says r comes from a page of the
// node's own origin: Sec-Fetch-Site same-origin, or where a browser sends
// no such header, an Origin that names the Host the request was sent to.
// A request with neither is not a browser's page's, and not served by
// cookie.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	o := r.Header.Get("Origin")
	return o != "" && (strings.EqualFold(o, "http://"+r.Host) || strings.EqualFold(o, "https://"+r.Host))
}

// trusted reports whether r comes with the bearer token or from a
// browser an invite let in.
func (a *Access) trusted(r *http.Request) bool {
	if a.tokenOK(r) {
		return true
	}
	if _, ok := bearer(r); ok {
		return false
	}
	secret, ok := a.sessionCookie(r)
	if !ok {
		return false
	}
	_, ok = a.Invites.Session(secret)
	return ok
}

// tokenOK reports whether r carries the bearer token (compared in
// constant time); never with an empty Token.
func (a *Access) tokenOK(r *http.Request) bool {
	got, ok := bearer(r)
	return ok && a.Token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(a.Token)) == 1
}

// bearer returns the token of an "Authorization: Bearer" header.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// HostAllowed reports whether a Host header names the node on loopback.
func (a *Access) HostAllowed(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		h = host[1 : len(host)-1]
	}
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if h == "localhost" {
		return true
	}
	// Any loopback address (127.0.0.0/8, ::1): --api 127.0.0.2:PORT is
	// this node's own URL. A rebinding name never parses as an IP.
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, n := range a.Hosts {
		if strings.EqualFold(strings.TrimSuffix(n, "."), h) {
			return true
		}
	}
	return false
}

func quote(s string) string {
	if s == "" {
		return `""`
	}
	return `"` + s + `"`
}

// IsLoopback reports whether a listen address (host:port) is reachable
// only from this machine: a loopback IP or "localhost".
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
