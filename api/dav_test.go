package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/metamesh/node/api"
)

// fakeDAV is a share of two files: /Movies/A.mkv, and /Private/B.mkv in
// its private part. It records what views were asked for.
type fakeDAV struct {
	mu    sync.Mutex
	views []string
}

func (d *fakeDAV) Private(p string) bool { return strings.HasPrefix(p, "/Private") }

func (d *fakeDAV) Open(_ context.Context, p string, households bool) (*api.File, error) {
	d.mu.Lock()
	d.views = append(d.views, fmt.Sprintf("open %s %v", p, households))
	d.mu.Unlock()
	switch {
	case p == "/Movies/" || p == "/Movies":
		return nil, api.ErrDAVFolder
	case p == "/Movies/A.mkv", p == "/Private/B.mkv" && households:
		return &api.File{Content: nopCloser{bytes.NewReader([]byte("0123456789"))}, Name: "A.mkv", Size: 10, CID: "bafkreiexample"}, nil
	}
	return nil, fmt.Errorf("%w: no %s", api.ErrNotFound, p)
}

func (d *fakeDAV) ServeDAV(w http.ResponseWriter, r *http.Request, households bool) {
	if r.URL.Path == "/dav/Nope" {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte("Not Found"))
		return
	}
	w.WriteHeader(http.StatusMultiStatus)
	fmt.Fprintf(w, "households=%v", households)
}

func TestDAV_Access(t *testing.T) {
	const tok = "s3cret-token"
	basic := func(user, pass string) map[string]string {
		return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}
	}
	loop := newServer(&fakeBackend{}, api.Options{DAV: &fakeDAV{}})
	off := newServer(&fakeBackend{}, api.Options{DAV: &fakeDAV{}, Access: api.Access{Token: tok}})
	public := newServer(&fakeBackend{}, api.Options{DAV: &fakeDAV{}, Access: api.Access{Token: tok, PublicRead: true}})
	none := newServer(&fakeBackend{}, api.Options{})
	tests := []struct {
		name           string
		srv            http.Handler
		method, target string
		hdr            map[string]string
		code           int
		body           string
	}{
		{"loopback: a file", loop, "GET", "/dav/Movies/A.mkv", nil, 200, "0123456789"},
		{"loopback: a range", loop, "GET", "/dav/Movies/A.mkv", map[string]string{"Range": "bytes=2-4"}, 206, "234"},
		{"loopback: HEAD", loop, "HEAD", "/dav/Movies/A.mkv", nil, 200, ""},
		{"loopback: the private part", loop, "GET", "/dav/Private/B.mkv", nil, 200, "0123456789"},
		{"loopback: PROPFIND sees all", loop, "PROPFIND", "/dav/", nil, 207, "households=true"},
		{"loopback: rebinding", loop, "PROPFIND", "/dav/", map[string]string{"Host": "evil.example"}, 403, ""},
		{"loopback: a folder's GET", loop, "GET", "/dav/Movies/", nil, 405, `"error"`},
		{"loopback: no such file", loop, "GET", "/dav/Movies/Z.mkv", nil, 404, `"error"`},
		{"loopback: PROPFIND of nothing", loop, "PROPFIND", "/dav/Nope", nil, 404, `"error": "no /dav/Nope in the WebDAV share"`},
		{"loopback: PUT", loop, "PUT", "/dav/Movies/A.mkv", nil, 405, "read-only"},
		{"loopback: LOCK", loop, "LOCK", "/dav/Movies/A.mkv", nil, 405, "read-only"},
		{"loopback: a page of another site", loop, "GET", "/dav/Movies/A.mkv", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, ""},
		{"off loopback: no credentials", off, "PROPFIND", "/dav/", nil, 401, "password"},
		{"off loopback: the token as the password", off, "PROPFIND", "/dav/", basic("kodi", tok), 207, "households=true"},
		{"off loopback: no user name", off, "GET", "/dav/Private/B.mkv", basic("", tok), 200, "0123456789"},
		{"off loopback: a wrong password", off, "PROPFIND", "/dav/", basic("kodi", tok+"x"), 401, "wrong password"},
		{"off loopback: the token as user name", off, "PROPFIND", "/dav/", basic(tok, ""), 401, "wrong password"},
		{"off loopback: bearer", off, "PROPFIND", "/dav/", map[string]string{"Authorization": "Bearer " + tok}, 207, "households=true"},
		{"off loopback: a wrong bearer", off, "PROPFIND", "/dav/", map[string]string{"Authorization": "Bearer nope"}, 401, ""},
		{"off loopback: writes are 401 first", off, "DELETE", "/dav/Movies/A.mkv", nil, 401, ""},
		{"public-read: PROPFIND without the private part", public, "PROPFIND", "/dav/", nil, 207, "households=false"},
		{"public-read: a file", public, "GET", "/dav/Movies/A.mkv", nil, 200, "0123456789"},
		{"public-read: the private part", public, "GET", "/dav/Private/B.mkv", nil, 401, ""},
		{"public-read: the private part's listing", public, "PROPFIND", "/dav/Private/", nil, 401, ""},
		{"public-read: a wrong password is refused", public, "GET", "/dav/Movies/A.mkv", basic("x", "nope"), 401, ""},
		{"public-read: the token opens the private part", public, "GET", "/dav/Private/B.mkv", basic("x", tok), 200, "0123456789"},
		{"no share", none, "PROPFIND", "/dav/", nil, 404, "no WebDAV share"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(t, tt.srv, tt.method, tt.target, tt.hdr)
			if rec.Code != tt.code || !strings.Contains(rec.Body.String(), tt.body) {
				t.Fatalf("%d %s, want %d with %q", rec.Code, rec.Body, tt.code, tt.body)
			}
			if tt.code == 401 && rec.Header().Get("WWW-Authenticate") != `Basic realm="metamesh"` {
				t.Errorf("WWW-Authenticate %q", rec.Header().Get("WWW-Authenticate"))
			}
			if tt.code == 405 && tt.method != "GET" && rec.Header().Get("Allow") != "OPTIONS, GET, HEAD, PROPFIND" {
				t.Errorf("Allow %q", rec.Header().Get("Allow"))
			}
			if tt.code == 200 && rec.Header().Get("Cache-Control") != "no-cache" {
				t.Errorf("Cache-Control %q: a path of the share may name other bytes tomorrow", rec.Header().Get("Cache-Control"))
			}
		})
	}
}
