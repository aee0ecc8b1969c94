package api

import (
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/metamesh/node/invite"
)

// invitesPath is the token-only endpoint of the invites; invitePrefix
// the links they make, open to anyone who holds one.
const (
	invitesPath  = "/api/invites"
	invitePrefix = "/invite/"
)

// sessionMaxAge is how long a browser keeps its session cookie: as long
// as browsers let a cookie live (400 days); it ends sooner when revoked.
const sessionMaxAge = 400 * 24 * time.Hour

// InviteAnswer is the answer of POST /api/invites: the invite and its
// code, shown this once, with the links a device of the LAN opens.
type InviteAnswer struct {
	invite.Entry
	// Code is the one-time code; Path is its link's path (/invite/<code>).
	Code string `json:"code"`
	Path string `json:"path"`
	// Listen is the API's listen address, as configured.
	Listen string `json:"listen"`
	// URLs are the links, one per address of this machine a device of the
	// LAN may reach the API at (none when it listens on one the client
	// must name itself).
	URLs []string `json:"urls"`
}

// InviteEntry is one invite of GET /api/invites, with its state now.
type InviteEntry struct {
	invite.Entry
	State string `json:"state"`
}

// InvitesAnswer is the answer of GET /api/invites, oldest first.
type InvitesAnswer struct {
	Invites []InviteEntry `json:"invites"`
}

// RevokedAnswer is the answer of DELETE /api/invites/<id|all>: the IDs
// revoked.
type RevokedAnswer struct {
	Revoked []string `json:"revoked"`
}

// routeInvites registers the invites' endpoints and links.
func (s *Server) routeInvites() {
	s.mux.HandleFunc("POST "+invitesPath, s.createInvite)
	s.mux.HandleFunc("GET "+invitesPath, s.listInvites)
	s.mux.HandleFunc("DELETE "+invitesPath+"/{id}", s.revokeInvite)
	s.mux.HandleFunc("GET "+invitePrefix+"{code}", s.openInvite)
}

// invites is the store, or an error saying invites are off.
func (s *Server) invites() (*invite.Store, error) {
	if st := s.opts.Access.Invites; st != nil {
		return st, nil
	}
	return nil, &statusError{sentinel: ErrNotFound, msg: "this node keeps no invites"}
}

func (s *Server) createInvite(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := singleParams(q, "ttl"); err != nil {
		writeError(w, err)
		return
	}
	ttl := invite.DefaultTTL
	if v := q.Get("ttl"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < invite.MinTTL || d > invite.MaxTTL {
			writeError(w, badRequest("ttl=%q: want a duration from %v to %v, such as 24h or 30m", v, invite.MinTTL, invite.MaxTTL))
			return
		}
		ttl = d
	}
	if s.opts.Access.Loopback {
		writeError(w, &statusError{sentinel: ErrConflict, msg: "the node's API listens only on loopback (" + s.opts.Addr +
			"): other devices cannot reach it, and this machine needs no invite; start the node with --api 0.0.0.0:4680 (make run API=0.0.0.0:4680) to let the devices of the LAN in"})
		return
	}
	st, err := s.invites()
	if err != nil {
		writeError(w, err)
		return
	}
	e, code, err := st.Create(ttl)
	if err != nil {
		s.log.Error("invite", "err", err)
		writeError(w, err)
		return
	}
	a := InviteAnswer{Entry: e, Code: code, Path: invitePrefix + code, Listen: s.opts.Addr, URLs: []string{}}
	for _, h := range LANHosts(s.opts.Addr) {
		a.URLs = append(a.URLs, "http://"+h+a.Path)
	}
	writeJSON(w, http.StatusCreated, a)
}

func (s *Server) listInvites(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r.URL.Query()); err != nil {
		writeError(w, err)
		return
	}
	st, err := s.invites()
	if err != nil {
		writeError(w, err)
		return
	}
	now := time.Now()
	a := InvitesAnswer{Invites: []InviteEntry{}}
	for _, e := range st.List() {
		a.Invites = append(a.Invites, InviteEntry{Entry: e, State: e.State(now)})
	}
	writeJSON(w, http.StatusOK, a)
}

func (s *Server) revokeInvite(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r.URL.Query()); err != nil {
		writeError(w, err)
		return
	}
	st, err := s.invites()
	if err != nil {
		writeError(w, err)
		return
	}
	id := r.PathValue("id")
	a := RevokedAnswer{Revoked: []string{id}}
	if id == "all" {
		a.Revoked, err = st.RevokeAll()
	} else {
		err = st.Revoke(id)
	}
	switch {
	case errors.Is(err, invite.ErrUnknown):
		writeError(w, &statusError{sentinel: ErrNotFound, msg: fmt.Sprintf("no invite or session %q (metamesh invite --list shows them)", id)})
		return
	case err != nil:
		s.log.Error("revoke invite", "id", id, "err", err)
		writeError(w, err)
		return
	}
	s.log.Info("invites revoked", "ids", a.Revoked)
	writeJSON(w, http.StatusOK, a)
}

// openInvite lets the browser that opens an invite's link in: it sets
// the session cookie and sends it on to the page, at a URL without the
// code. A HEAD (a link preview) uses nothing up.
func (s *Server) openInvite(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodHead {
		w.Header().Set("Allow", http.MethodGet)
		writeErrorCode(w, http.StatusMethodNotAllowed, "HEAD does not open an invite; GET does, once")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	st, err := s.invites()
	if err != nil {
		inviteError(w, r, http.StatusNotFound, err.Error())
		return
	}
	e, secret, err := st.Redeem(r.PathValue("code"), r.UserAgent())
	switch {
	case errors.Is(err, invite.ErrUnknown):
		inviteError(w, r, http.StatusNotFound, "This invite is not one of this node's, or it was revoked. Ask the household for a new one (metamesh invite).")
		return
	case errors.Is(err, invite.ErrUsed):
		inviteError(w, r, http.StatusGone, "This invite was used already: an invite lets one browser in, once. Ask the household for a new one (metamesh invite).")
		return
	case errors.Is(err, invite.ErrExpired):
		inviteError(w, r, http.StatusGone, "This invite expired before it was used. Ask the household for a new one (metamesh invite).")
		return
	case err != nil:
		s.log.Error("open invite", "err", err)
		inviteError(w, r, http.StatusInternalServerError, "The node could not keep this browser's session: "+err.Error())
		return
	}
	s.log.Info("a browser was let in by an invite", "id", e.ID, "userAgent", e.UserAgent)
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookieName(st), Value: secret, Path: "/",
		MaxAge: int(sessionMaxAge / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode,
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// inviteError answers a link that lets no one in: a short page for a
// browser (Accept: text/html), else JSON as every error of the API.
func inviteError(w http.ResponseWriter, r *http.Request, code int, msg string) {
	if !strings.Contains(r.Header.Get("Accept"), "text/html") {
		writeErrorCode(w, code, msg)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	fmt.Fprintf(w, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>MetaMesh: invite</title></head>\n<body><h1>MetaMesh</h1><p>%s</p></body></html>\n", html.EscapeString(msg))
}

// sessionCookieName is the name of the node's session cookie: cookies
// are not told apart by port, so two nodes on one host need two names.
func sessionCookieName(st *invite.Store) string { return "metamesh-" + st.Name() }

// sessionCookie returns the session secret r carries, when it carries
// this node's session cookie.
func (a *Access) sessionCookie(r *http.Request) (string, bool) {
	if a.Invites == nil {
		return "", false
	}
	c, err := r.Cookie(sessionCookieName(a.Invites))
	if err != nil || c.Value == "" {
		return "", false
	}
	return c.Value, true
}

// LANHosts are the host:port a device of the LAN may reach an API
// listening on listen at: listen itself when it names one address; for
// an unspecified one (0.0.0.0, [::]) every address of this machine's
// interfaces that are up, but loopback and link-local ones, IPv4 first
// and interfaces that look like containers' bridges last.
func LANHosts(listen string) []string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsUnspecified() {
		if IsLoopback(listen) {
			return nil
		}
		return []string{listen}
	}
	type cand struct {
		ip      net.IP
		virtual bool
	}
	var cands []cand
	ifs, _ := net.Interfaces()
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok || n.IP.IsLoopback() || n.IP.IsLinkLocalUnicast() || !n.IP.IsGlobalUnicast() {
				continue
			}
			cands = append(cands, cand{n.IP, virtualInterface(ifc.Name)})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		if a.virtual != b.virtual {
			return boolRank(a.virtual) - boolRank(b.virtual)
		}
		return boolRank(a.ip.To4() == nil) - boolRank(b.ip.To4() == nil)
	})
	var out []string
	for _, c := range cands {
		out = append(out, net.JoinHostPort(c.ip.String(), port))
	}
	return out
}

// virtualInterface reports whether an interface's name is one of those
// container runtimes and virtual machines make.
func virtualInterface(name string) bool {
	for _, p := range []string{"docker", "br-", "veth", "virbr", "cni", "flannel", "podman", "lxc", "vmnet", "vboxnet"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
