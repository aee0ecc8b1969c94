package api

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"
)

// DAV is the read-only WebDAV view of the library the API mounts under
// /dav/ (the node's is node/dav). Implementations are safe for
// concurrent use.
type DAV interface {
	// Private reports whether p (a path under /dav/, decoded, "/" the
	// share's top) lies in what only the household's own clients see:
	// the files of other households.
	Private(p string) bool
	// Open opens the file at p for GET and HEAD; households false hides
	// the private part. Errors wrap ErrNotFound (no such file),
	// ErrDAVFolder (p is a folder) or are Backend.File's and
	// PeerFiles.PeerFile's. The caller closes File.Content.
	Open(ctx context.Context, p string, households bool) (*File, error)
	// ServeDAV answers PROPFIND and OPTIONS of r (r.URL.Path starts with
	// /dav); households false leaves the private part out.
	ServeDAV(w http.ResponseWriter, r *http.Request, households bool)
}

// ErrDAVFolder is DAV.Open's error for a folder: it has no bytes to GET
// (405), its listing is PROPFIND's.
var ErrDAVFolder = errors.New("a folder of the WebDAV share: list it with PROPFIND")

// davPrefix is where the API mounts its DAV.
const davPrefix = "/dav"

// davMethods are the methods /dav/ serves: it is read-only.
const davMethods = "OPTIONS, GET, HEAD, PROPFIND"

// maxPropfindBody caps a PROPFIND's body (the properties it asks for).
const maxPropfindBody = 64 << 10

// isDAV reports whether path p is the WebDAV share's.
func isDAV(p string) bool { return p == davPrefix || strings.HasPrefix(p, davPrefix+"/") }

// serveDAV answers a request under /dav/: access first (davCheck), then
// only the reading methods; GET and HEAD of a file go through serveFile,
// as /api/file's do.
func (s *Server) serveDAV(w http.ResponseWriter, r *http.Request, start time.Time) {
	if s.opts.DAV == nil {
		s.refuse(w, r, start, http.StatusNotFound, "no such endpoint: "+r.URL.Path+": this node serves no WebDAV share")
		return
	}
	households, code, msg := s.opts.Access.davCheck(r, s.opts.DAV)
	if code != 0 {
		if code == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="metamesh"`)
		}
		s.refuse(w, r, start, code, msg)
		return
	}
	var cw *codeWriter
	if s.hm != nil {
		cw = &codeWriter{ResponseWriter: w}
		w = cw
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.davFile(w, r, households)
	case http.MethodOptions, "PROPFIND":
		r.Body = http.MaxBytesReader(w, r.Body, maxPropfindBody)
		dw := &davWriter{ResponseWriter: w}
		s.opts.DAV.ServeDAV(dw, r, households)
		dw.answer(r)
	default:
		w.Header().Set("Allow", davMethods)
		s.refuse(w, r, start, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path+": the WebDAV share is read-only ("+davMethods+")")
		return
	}
	if cw != nil {
		s.hm.observe(r.Method+" /dav/", cw.status(), time.Since(start))
	}
}

// davFile answers GET and HEAD of a file of the share.
func (s *Server) davFile(w http.ResponseWriter, r *http.Request, households bool) {
	if !households {
		// A client without credentials (--public-read) holds as many
		// streams as through /api/file; one with them is not counted.
		leave, ok := s.enterStream(w, r)
		if !ok {
			return
		}
		defer leave()
	}
	p := strings.TrimPrefix(r.URL.Path, davPrefix)
	f, err := s.opts.DAV.Open(r.Context(), "/"+strings.TrimPrefix(p, "/"), households)
	if errors.Is(err, ErrDAVFolder) {
		w.Header().Set("Allow", "OPTIONS, PROPFIND")
		writeErrorCode(w, http.StatusMethodNotAllowed, r.URL.Path+" is "+err.Error())
		return
	}
	if err != nil {
		s.logFailure(r, "open a file of the WebDAV share", err, "path", r.URL.Path)
		writeError(w, err)
		return
	}
	defer f.Content.Close()
	s.serveFile(w, r, f, false)
}

// davCheck is check for the WebDAV share. WebDAV clients send no bearer
// token, so off loopback the token is also taken as the password of HTTP
// Basic authentication (any user name); a bearer token and a browser's
// invite cookie are taken as the API takes them. --public-read opens the
// share's reading methods to clients without them, but not its private
// part (the files of other households), which answers 401. households
// reports whether the client sees that part.
func (a *Access) davCheck(r *http.Request, dav DAV) (households bool, code int, msg string) {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return false, http.StatusForbidden, "a page of another site may not read this node's WebDAV share (Sec-Fetch-Site: cross-site)"
	}
	if a.Loopback {
		if !a.HostAllowed(r.Host) {
			return false, http.StatusForbidden, "Host " + quote(r.Host) + " is not this node: on loopback the WebDAV share answers only localhost, 127.0.0.1, [::1] and the names given with --api-host"
		}
		return true, 0, ""
	}
	if _, pass, ok := r.BasicAuth(); ok {
		if a.Token == "" || subtle.ConstantTimeCompare([]byte(pass), []byte(a.Token)) != 1 {
			return false, http.StatusUnauthorized, "wrong password: the WebDAV share takes the node's API token as the password (any user name)"
		}
		return true, 0, ""
	}
	if _, ok := bearer(r); ok {
		if !a.tokenOK(r) {
			return false, http.StatusUnauthorized, "wrong bearer token"
		}
		return true, 0, ""
	}
	if secret, ok := a.sessionCookie(r); ok {
		code, msg := a.checkSession(r, secret)
		return code == 0, code, msg
	}
	if a.PublicRead && !dav.Private(strings.TrimPrefix(r.URL.Path, davPrefix)) {
		return false, 0, ""
	}
	return false, http.StatusUnauthorized, "the WebDAV share needs the node's API token as the password (HTTP Basic, any user name; the token is in the file --api-token-file names)"
}

// davWriter is the ResponseWriter ServeDAV writes to: an error status
// the WebDAV handler answers (with its status text as the body) is held
// back, for answer to write as the API's JSON error; anything else goes
// through.
type davWriter struct {
	http.ResponseWriter
	code    int
	body    bytes.Buffer
	started bool
}

func (w *davWriter) WriteHeader(code int) {
	if !w.started && code >= 400 {
		w.code = code
		return
	}
	w.started = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *davWriter) Write(b []byte) (int, error) {
	if w.code != 0 {
		if w.body.Len() < 1024 {
			w.body.Write(b)
		}
		return len(b), nil
	}
	w.started = true
	return w.ResponseWriter.Write(b)
}

func (w *davWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// answer writes the error held back, if any, as JSON.
func (w *davWriter) answer(r *http.Request) {
	if w.code == 0 {
		return
	}
	msg := r.Method + " " + r.URL.Path + ": " + strings.TrimSpace(w.body.String())
	switch w.code {
	case http.StatusNotFound:
		msg = "no " + r.URL.Path + " in the WebDAV share"
	case http.StatusBadRequest:
		msg = r.Method + " " + r.URL.Path + ": the request is malformed (Depth is 0, 1 or infinity; the body a DAV:propfind XML document of at most 64 KiB)"
	}
	w.ResponseWriter.Header().Del("Content-Type")
	writeErrorCode(w.ResponseWriter, w.code, msg)
}
