package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/metamesh/node/api"
)

// The HTTP contract of the api package against a small fake Backend:
// routes, query parameters, status codes, JSON error bodies and headers.
// No node, no Redis: the node's own end-to-end tests (node/api_*_test.go)
// run the same routes against a real one.

// fakeBackend answers from what a test put in it and records what the
// server asked it.
type fakeBackend struct {
	docs      map[string]api.Document // by canonical CID
	metaErr   error
	status    api.Status
	readyErr  error
	providers []string
	peers     []api.Peer
	files     map[string]fakeFile
	fileErr   error
	events    func(after string) (api.EventStream, error)
	search    func(q string, limit int, cursor string, federated bool) (api.SearchResult, error)
	library   func(api.LibraryQuery) (api.LibraryPage, error)

	mu    sync.Mutex
	asked []string
}

type fakeFile struct {
	name, mime string
	data       []byte
}

func (b *fakeBackend) record(format string, args ...any) {
	b.mu.Lock()
	b.asked = append(b.asked, fmt.Sprintf(format, args...))
	b.mu.Unlock()
}

func (b *fakeBackend) calls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string{}, b.asked...)
}

func (b *fakeBackend) Meta(_ context.Context, c string, local bool, _ api.Caller) (api.Document, error) {
	b.record("meta %s local=%v", c, local)
	if b.metaErr != nil {
		return api.Document{}, b.metaErr
	}
	d, ok := b.docs[c]
	if !ok {
		return api.Document{}, fmt.Errorf("%w: no file with CID %s", api.ErrNotFound, c)
	}
	return d, nil
}

func (b *fakeBackend) Status(context.Context) (api.Status, error) { return b.status, nil }
func (b *fakeBackend) Ready(context.Context) error                { return b.readyErr }

func (b *fakeBackend) Providers(_ context.Context, c string) ([]string, error) {
	b.record("providers %s", c)
	return b.providers, nil
}

func (b *fakeBackend) Peers(context.Context) ([]api.Peer, error) { return b.peers, nil }

func (b *fakeBackend) File(_ context.Context, c string) (*api.File, error) {
	b.record("file %s", c)
	if b.fileErr != nil {
		return nil, b.fileErr
	}
	f, ok := b.files[c]
	if !ok {
		return nil, fmt.Errorf("%w: no file with CID %s", api.ErrNotFound, c)
	}
	return &api.File{Content: nopCloser{bytes.NewReader(f.data)}, Name: f.name, Size: int64(len(f.data)),
		ModTime: time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC), MimeType: f.mime, CID: c}, nil
}

func (b *fakeBackend) Events(_ context.Context, after string) (api.EventStream, error) {
	b.record("events after=%q", after)
	if b.events == nil {
		return nil, errors.New("no events here")
	}
	return b.events(after)
}

func (b *fakeBackend) Search(_ context.Context, q string, limit int, cursor string, federated bool, _ api.Caller) (api.SearchResult, error) {
	b.record("search q=%q limit=%d cursor=%q federated=%v", q, limit, cursor, federated)
	if b.search == nil {
		return api.SearchResult{}, nil
	}
	return b.search(q, limit, cursor, federated)
}

func (b *fakeBackend) Library(_ context.Context, q api.LibraryQuery) (api.LibraryPage, error) {
	b.record("library view=%s show=%q season=%d page=%d limit=%d", q.View, q.Show, q.Season, q.Page, q.Limit)
	if b.library == nil {
		return api.LibraryPage{View: q.View, Page: q.Page, Limit: q.Limit}, nil
	}
	return b.library(q)
}

type nopCloser struct{ io.ReadSeeker }

func (nopCloser) Close() error { return nil }

// fakeEvents delivers its batches in turn, then ErrClosing (the node
// shutting down), so a stream served into a recorder ends.
type fakeEvents struct {
	pos     string
	batches []eventBatch
}

type eventBatch struct {
	evs []api.Event
	err error
}

func (e *fakeEvents) Position() string { return e.pos }

func (e *fakeEvents) Next(_ context.Context, wait time.Duration) ([]api.Event, error) {
	if len(e.batches) == 0 {
		return nil, api.ErrClosing
	}
	b := e.batches[0]
	e.batches = e.batches[1:]
	if b.evs == nil && b.err == nil {
		time.Sleep(wait) // nothing within wait
	}
	if len(b.evs) > 0 {
		e.pos = b.evs[len(b.evs)-1].ID
	}
	return b.evs, b.err
}

func newServer(b api.Backend, opts api.Options) *api.Server {
	if reflect.DeepEqual(opts.Access, api.Access{}) {
		opts.Access = api.Access{Loopback: true}
	}
	return api.New(b, slog.New(slog.DiscardHandler), opts)
}

// serve sends method target to srv from loopback, with hdr ("Host"
// replaces the request's host).
func serve(t *testing.T, srv http.Handler, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, "http://localhost:4680"+target, nil)
	r.RemoteAddr = "127.0.0.1:50000"
	for k, v := range hdr {
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, r)
	return rec
}

// errMsg checks an answer is a JSON error ({"error": …}, with cid and
// providers for a file known only from peers) and returns its message.
func errMsg(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("error answer's Content-Type %q", ct)
	}
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("error answer is not JSON: %q", rec.Body)
	}
	msg, ok := m["error"].(string)
	if !ok || msg == "" {
		t.Errorf("error answer without a message: %s", rec.Body)
	}
	for k := range m {
		if k != "error" && k != "cid" && k != "providers" {
			t.Errorf("error answer has %q: %s", k, rec.Body)
		}
	}
	return msg
}

// heldV0 and heldV1 are one CID, as CIDv0 and in canonical form (held,
// of strangers_http_test.go, is another).
const (
	heldV0 = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG"
	heldV1 = "bafybeie5nqv6kd3qnfjupgvz34woh3oksc3iau6abmyajn7qvtf6d2ho34"
)

func TestServer_Errors(t *testing.T) {
	b := &fakeBackend{docs: map[string]api.Document{held: {CanonicalCID: held, Source: "local"}}}
	srv := newServer(b, api.Options{})
	tests := []struct {
		name, method, target string
		hdr                  map[string]string
		code                 int
		says                 string
	}{
		{"unknown endpoint", "GET", "/api/nope", nil, 404, "no such endpoint: /api/nope"},
		{"path not in clean form", "GET", "//api/status", nil, 404, "not in clean form (did you mean /api/status?)"},
		{"dot segments", "GET", "/api/../api/status", nil, 404, "not in clean form"},
		{"wrong method", "POST", "/api/status", nil, 405, "POST is not allowed on /api/status"},
		{"wrong method on a CID route", "DELETE", "/api/meta/" + held, nil, 405, "DELETE is not allowed"},
		{"meta without a CID", "GET", "/api/meta", nil, 400, "missing CID: use /api/meta/<cid>"},
		{"meta/ without a CID", "GET", "/api/meta/", nil, 400, "missing CID"},
		{"meta with more after the CID", "GET", "/api/meta/" + held + "/x", nil, 404, "/api/meta/<cid> takes nothing after the CID"},
		{"meta of garbage", "GET", "/api/meta/banana", nil, 400, `invalid CID "banana"`},
		{"meta local=banana", "GET", "/api/meta/" + held + "?local=banana", nil, 400, `local="banana": want 1, 0, true or false`},
		{"meta local twice", "GET", "/api/meta/" + held + "?local=1&local=0", nil, 400, `"local" given 2 times`},
		{"meta unknown parameter", "GET", "/api/meta/" + held + "?locl=1", nil, 400, `unknown query parameter "locl": this endpoint takes local`},
		{"providers unknown parameter", "GET", "/api/providers/" + held + "?local=1", nil, 400, "this endpoint takes none"},
		{"file unknown parameter", "GET", "/api/file/" + held + "?dl=1", nil, 400, `unknown query parameter "dl"`},
		{"status unknown parameter", "GET", "/api/status?verbose=1", nil, 400, "this endpoint takes none"},
		{"health unknown parameter", "GET", "/health?x", nil, 400, `unknown query parameter "x"`},
		{"metrics not enabled", "GET", "/metrics", nil, 404, "metrics are not enabled"},
		{"loopback: another Host", "GET", "/api/status", map[string]string{"Host": "evil.example"}, 403, `Host "evil.example" is not this node`},
		{"a page of another site", "GET", "/api/meta/" + held, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "Sec-Fetch-Site: cross-site"},
		{"unknown CID", "GET", "/api/meta/" + heldV1, nil, 404, "no file with CID " + heldV1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(t, srv, tt.method, tt.target, tt.hdr)
			if rec.Code != tt.code {
				t.Fatalf("%d %s, want %d", rec.Code, rec.Body, tt.code)
			}
			if msg := errMsg(t, rec); !strings.Contains(msg, tt.says) {
				t.Errorf("error %q does not say %q", msg, tt.says)
			}
			if rec.Header().Get("Location") != "" {
				t.Errorf("a redirect: Location %q", rec.Header().Get("Location"))
			}
			if tt.code == 405 && !strings.Contains(rec.Header().Get("Allow"), "GET") {
				t.Errorf("Allow %q", rec.Header().Get("Allow"))
			}
		})
	}
}

// Backend errors map to status codes; the message is the backend's.
func TestServer_BackendErrors(t *testing.T) {
	tests := []struct {
		err  error
		code int
	}{
		{fmt.Errorf("%w: no file with CID x", api.ErrNotFound), 404},
		{fmt.Errorf("%w: a cursor", api.ErrBadRequest), 400},
		{fmt.Errorf("%w: not confirmed yet", api.ErrConflict), 409},
		{fmt.Errorf("%w: redis is not answering", api.ErrUnavailable), 503},
		{fmt.Errorf("%w: never", api.ErrForbidden), 403},
		{errors.New("something broke"), 500},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.code), func(t *testing.T) {
			b := &fakeBackend{metaErr: tt.err, fileErr: tt.err}
			srv := newServer(b, api.Options{})
			for _, route := range []string{"/api/meta/", "/api/file/"} {
				rec := serve(t, srv, "GET", route+held, nil)
				if rec.Code != tt.code || errMsg(t, rec) != tt.err.Error() {
					t.Errorf("%s: %d %s, want %d %q", route, rec.Code, rec.Body, tt.code, tt.err)
				}
			}
		})
	}
	t.Run("rate limited", func(t *testing.T) {
		b := &fakeBackend{metaErr: &api.RateLimitedError{What: api.FederatedLookup, Client: "192.0.2.7",
			Limits: api.StrangerLimits{Rate: 0.5, Burst: 3}, RetryAfter: 1500 * time.Millisecond}}
		rec := serve(t, newServer(b, api.Options{}), "GET", "/api/meta/"+held, nil)
		if rec.Code != 429 || rec.Header().Get("Retry-After") != "2" || !strings.Contains(errMsg(t, rec), "retry in 2 s") {
			t.Errorf("%d Retry-After %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
		}
	})
}

// serveAsking serves GET target, which must answer 200 having asked the
// backend exactly want.
func serveAsking(t *testing.T, srv http.Handler, b *fakeBackend, target, want string) *httptest.ResponseRecorder {
	t.Helper()
	b.asked = nil
	rec := serve(t, srv, "GET", target, nil)
	if rec.Code != 200 {
		t.Fatalf("%s: %d %s", target, rec.Code, rec.Body)
	}
	if got := b.calls(); !reflect.DeepEqual(got, []string{want}) {
		t.Errorf("%s: the backend was asked %q, want %q", target, got, want)
	}
	return rec
}

func TestServer_Meta(t *testing.T) {
	doc := api.Document{CanonicalCID: heldV1, CIDs: []string{heldV1}, Source: "local", Providers: []string{"12D3KooWself"},
		FilePath: "/lib/a.mkv", Meta: api.Meta{"sizeByte": api.IntValue(42)}}
	b := &fakeBackend{docs: map[string]api.Document{heldV1: doc}}
	srv := newServer(b, api.Options{})
	for target, want := range map[string]string{
		"/api/meta/" + heldV0:                  "meta " + heldV1 + " local=false", // any form, normalised
		"/api/meta/" + heldV1 + "?local=1":     "meta " + heldV1 + " local=true",
		"/api/meta/" + heldV1 + "?local=true":  "meta " + heldV1 + " local=true",
		"/api/meta/" + heldV1 + "?local=0":     "meta " + heldV1 + " local=false",
		"/api/meta/" + heldV1 + "?local=false": "meta " + heldV1 + " local=false",
	} {
		rec := serveAsking(t, srv, b, target, want)
		wantBody := `{
  "canonical_cid": "` + heldV1 + `",
  "cids": [
    "` + heldV1 + `"
  ],
  "duplicateCount": 0,
  "duplicates": [],
  "filePath": "/lib/a.mkv",
  "providers": [
    "12D3KooWself"
  ],
  "sizeByte": 42,
  "source": "local"
}
`
		if rec.Body.String() != wantBody {
			t.Errorf("%s: body\n%s\nwant\n%s", target, rec.Body, wantBody)
		}
		if ct, nosniff := rec.Header().Get("Content-Type"), rec.Header().Get("X-Content-Type-Options"); ct != "application/json" || nosniff != "nosniff" {
			t.Errorf("%s: Content-Type %q, X-Content-Type-Options %q", target, ct, nosniff)
		}
	}
	// A bad CID or parameter never reaches the backend.
	b.asked = nil
	for _, target := range []string{"/api/meta/banana", "/api/meta/" + heldV1 + "?local=2", "/api/meta/" + heldV1 + "?x=1"} {
		serve(t, srv, "GET", target, nil)
	}
	if got := b.calls(); len(got) != 0 {
		t.Errorf("the backend was asked %q", got)
	}
}

func TestServer_StatusReadyHealthPeersProviders(t *testing.T) {
	b := &fakeBackend{
		status:    api.Status{Version: "test", PeerID: "12D3KooWself", Addrs: []string{}, Reachability: "unknown", Redis: api.RedisStatus{OK: true}},
		peers:     []api.Peer{{ID: "12D3KooWpeer", Addrs: []string{"/ip4/10.0.0.2/tcp/4681"}, Connection: "direct", Transport: "tcp", LatencyMs: 1.5}},
		providers: []string{"12D3KooWa", "12D3KooWb"},
	}
	srv := newServer(b, api.Options{})
	jsonOf := func(target string) map[string]any {
		t.Helper()
		rec := serve(t, srv, "GET", target, nil)
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %q %s", target, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
		var m map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := jsonOf("/health"); m["status"] != "ok" {
		t.Errorf("health %v", m)
	}
	if m := jsonOf("/ready"); m["status"] != "ready" {
		t.Errorf("ready %v", m)
	}
	if m := jsonOf("/api/status"); m["version"] != "test" || m["peerId"] != "12D3KooWself" || m["reachability"] != "unknown" {
		t.Errorf("status %v", m)
	}
	if m := jsonOf("/api/peers"); fmt.Sprint(m["peers"]) != "[map[addrs:[/ip4/10.0.0.2/tcp/4681] connection:direct id:12D3KooWpeer latencyMs:1.5 transport:tcp]]" {
		t.Errorf("peers %v", m)
	}
	if m := jsonOf("/api/providers/" + heldV0); m["cid"] != heldV1 || fmt.Sprint(m["providers"]) != "[12D3KooWa 12D3KooWb]" {
		t.Errorf("providers %v", m)
	}
	b.readyErr = errors.New("initial scan not finished (scanning)")
	rec := serve(t, srv, "GET", "/ready", nil)
	if rec.Code != 503 || errMsg(t, rec) != "initial scan not finished (scanning)" {
		t.Errorf("not ready: %d %s", rec.Code, rec.Body)
	}
}

func TestServer_Metrics(t *testing.T) {
	var query string
	srv := newServer(&fakeBackend{}, api.Options{Metrics: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.RawQuery
		io.WriteString(w, "metamesh_peers 0\n")
	})})
	if rec := serve(t, srv, "GET", "/metrics?name[]=metamesh_peers", nil); rec.Code != 200 || rec.Body.String() != "metamesh_peers 0\n" || query != "name[]=metamesh_peers" {
		t.Errorf("%d %q (query %q)", rec.Code, rec.Body, query)
	}
	if rec := serve(t, srv, "GET", "/metrics?format=json", nil); rec.Code != 400 || !strings.Contains(errMsg(t, rec), "this endpoint takes name[]") {
		t.Errorf("%d %s", rec.Code, rec.Body)
	}
}

func TestServer_Access(t *testing.T) {
	const tok = "0123456789abcdef0123"
	b := &fakeBackend{docs: map[string]api.Document{held: {CanonicalCID: held}}}
	open := func(access api.Access) *api.Server { return newServer(b, api.Options{Access: access}) }
	auth := map[string]string{"Authorization": "Bearer " + tok}
	tests := []struct {
		name   string
		srv    *api.Server
		target string
		hdr    map[string]string
		code   int
	}{
		{"token: status without it", open(api.Access{Token: tok}), "/api/status", nil, 401},
		{"token: a wrong one", open(api.Access{Token: tok}), "/api/status", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"token: the right one", open(api.Access{Token: tok}), "/api/status", auth, 200},
		{"token: health is open", open(api.Access{Token: tok}), "/health", nil, 200},
		{"token: ready is open", open(api.Access{Token: tok}), "/ready", nil, 200},
		{"token: meta without it", open(api.Access{Token: tok}), "/api/meta/" + held, nil, 401},
		{"public read: meta", open(api.Access{Token: tok, PublicRead: true}), "/api/meta/" + held, nil, 200},
		{"public read: status still needs it", open(api.Access{Token: tok, PublicRead: true}), "/api/status", nil, 401},
		{"loopback: [::1]", open(api.Access{Loopback: true}), "/api/status", map[string]string{"Host": "[::1]:4680"}, 200},
		{"loopback: a name given", open(api.Access{Loopback: true, Hosts: []string{"nas.lan"}}), "/api/status", map[string]string{"Host": "NAS.lan:4680"}, 200},
		{"loopback: same-site page", open(api.Access{Loopback: true}), "/api/meta/" + held, map[string]string{"Sec-Fetch-Site": "same-site"}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(t, tt.srv, "GET", tt.target, tt.hdr)
			if rec.Code != tt.code {
				t.Fatalf("%d %s, want %d", rec.Code, rec.Body, tt.code)
			}
			if tt.code == 401 {
				errMsg(t, rec)
				if got := rec.Header().Get("WWW-Authenticate"); got != `Bearer realm="metamesh"` {
					t.Errorf("WWW-Authenticate %q", got)
				}
			}
		})
	}
}

func TestServer_Search(t *testing.T) {
	var answer api.SearchResult
	var refuse error
	b := &fakeBackend{search: func(string, int, string, bool) (api.SearchResult, error) { return answer, refuse }}
	srv := newServer(b, api.Options{})
	for target, want := range map[string]string{
		"/api/search?q=amelie":                                 `search q="amelie" limit=20 cursor="" federated=false`,
		"/api/search?q=Am%C3%A9lie+2001&limit=100&federated=1": `search q="Amélie 2001" limit=100 cursor="" federated=true`,
		"/api/search?q=x&limit=1&cursor=AtY7lj4akMCx":          `search q="x" limit=1 cursor="AtY7lj4akMCx" federated=false`,
		"/api/search?q=x&federated=true":                       `search q="x" limit=20 cursor="" federated=true`,
		"/api/search?q=x&federated=0":                          `search q="x" limit=20 cursor="" federated=false`,
	} {
		rec := serveAsking(t, srv, b, target, want)
		// No hits and no peers asked are empty lists, never null.
		if want := "{\n  \"hits\": [],\n  \"peers\": [],\n  \"asked\": 0,\n  \"fromIndex\": 0\n}\n"; rec.Body.String() != want {
			t.Errorf("%s: %q, want %q", target, rec.Body, want)
		}
	}

	b.asked = nil
	for target, says := range map[string]string{
		"/api/search":           "missing q: use /api/search?q=<words>",
		"/api/search?q=":        "missing q",
		"/api/search?q=%20-%21": "holds no word",
		"/api/search?q=" + strings.Repeat("a", 257):         "q of 257 bytes, at most 256",
		"/api/search?q=%FF":                                 "q is not UTF-8",
		"/api/search?q=x&q=y":                               "q given 2 times",
		"/api/search?q=x&limit=0":                           `limit "0": want a number from 1 to 100`,
		"/api/search?q=x&limit=101":                         `limit "101"`,
		"/api/search?q=x&limit=ten":                         `limit "ten"`,
		"/api/search?q=x&limit=":                            `limit ""`,
		"/api/search?q=x&federated=maybe":                   `federated "maybe": want 1 or 0`,
		"/api/search?q=x&page=2":                            `unknown parameter "page" (want q, limit, cursor, federated)`,
		"/api/search?q=x&cursor=" + strings.Repeat("A", 65): "cursor: not one this node gave for this query",
	} {
		rec := serve(t, srv, "GET", target, nil)
		if rec.Code != 400 || !strings.Contains(errMsg(t, rec), says) {
			t.Errorf("%s: %d %s, want 400 saying %q", target, rec.Code, rec.Body, says)
		}
	}
	if got := b.calls(); len(got) != 0 {
		t.Errorf("refused parameters reached the backend: %q", got)
	}

	// A cursor the backend refuses is answered in the API's words.
	refuse = fmt.Errorf("%w: cursor: store: invalid search cursor: not one of this query", api.ErrBadRequest)
	rec := serve(t, srv, "GET", "/api/search?q=x&cursor=AtY7lj4akMCx", nil)
	if rec.Code != 400 || errMsg(t, rec) != "cursor: not one this node gave for this query; start again without cursor" {
		t.Errorf("refused cursor: %d %s", rec.Code, rec.Body)
	}
	refuse = fmt.Errorf("%w: redis is not answering", api.ErrUnavailable)
	if rec := serve(t, srv, "GET", "/api/search?q=x", nil); rec.Code != 503 {
		t.Errorf("redis down: %d %s", rec.Code, rec.Body)
	}
	refuse = nil

	// Hits go out as SearchHit writes them, the optional fields only when
	// set (a season of 0 is one).
	zero, two := 0, 2
	answer = api.SearchResult{Next: "AtY7lj4akMCx", Peers: []string{"12D3KooWp"}, Asked: 3, FromIndex: 2, Hits: []api.SearchHit{
		{FileSummary: api.FileSummary{CID: "c1", Title: "T", Size: 1, FileType: "video", Source: "local", Year: 2001, Season: &zero, Episode: &two, EpisodeTitle: "E"}, CIDs: []string{"c1"}},
		{FileSummary: api.FileSummary{CID: "c2", Title: "U", Source: "12D3KooWp"}, CIDs: []string{"c2"}, Peers: []string{"12D3KooWp"}},
	}}
	rec = serve(t, srv, "GET", "/api/search?q=x", nil)
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := `map[asked:3 fromIndex:2 hits:[map[cid:c1 cids:[c1] episode:2 episodeTitle:E fileType:video season:0 size:1 source:local title:T year:2001] ` +
		`map[cid:c2 cids:[c2] fileType: peers:[12D3KooWp] size:0 source:12D3KooWp title:U]] next:AtY7lj4akMCx peers:[12D3KooWp]]`
	if fmt.Sprint(got) != want {
		t.Errorf("got  %v\nwant %s", got, want)
	}

	// A backend that does not search.
	rec = serve(t, newServer(struct{ api.Backend }{b}, api.Options{}), "GET", "/api/search?q=x", nil)
	if rec.Code != 404 || errMsg(t, rec) != "this node does not search" {
		t.Errorf("no Searcher: %d %s", rec.Code, rec.Body)
	}
}

func TestServer_File(t *testing.T) {
	data := []byte("0123456789abcdef")
	b := &fakeBackend{files: map[string]fakeFile{
		heldV1: {name: "Amélie.mkv", mime: "video/x-matroska", data: data},
		held:   {name: "plain.bin", data: data},
	}}
	srv := newServer(b, api.Options{})
	t.Run("the bytes and their headers", func(t *testing.T) {
		rec := serve(t, srv, "GET", "/api/file/"+heldV0, nil)
		if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), data) {
			t.Fatalf("%d %q", rec.Code, rec.Body)
		}
		for k, want := range map[string]string{
			"ETag":                    `"` + heldV1 + `"`,
			"Content-Type":            "video/x-matroska",
			"Cache-Control":           "public, max-age=31536000, immutable",
			"Content-Disposition":     "inline; filename=Amelie.mkv; filename*=UTF-8''Am%C3%A9lie.mkv",
			"Content-Security-Policy": "sandbox",
			"X-Content-Type-Options":  "nosniff",
			"Accept-Ranges":           "bytes",
			"Content-Length":          "16",
			"Last-Modified":           "Tue, 14 Nov 2023 22:13:20 GMT",
		} {
			if got := rec.Header().Get(k); got != want {
				t.Errorf("%s: %q, want %q", k, got, want)
			}
		}
		if got := b.calls(); got[len(got)-1] != "file "+heldV1 {
			t.Errorf("the backend was asked %q", got)
		}
		if rec := serve(t, srv, "GET", "/api/file/"+held, nil); rec.Header().Get("Content-Type") != "application/octet-stream" ||
			rec.Header().Get("Content-Disposition") != "inline; filename=plain.bin" {
			t.Errorf("no mimeType: %q, %q", rec.Header().Get("Content-Type"), rec.Header().Get("Content-Disposition"))
		}
	})
	t.Run("HEAD", func(t *testing.T) {
		rec := serve(t, srv, "HEAD", "/api/file/"+heldV1, nil)
		if rec.Code != 200 || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") != "16" {
			t.Errorf("%d %q %q", rec.Code, rec.Body, rec.Header().Get("Content-Length"))
		}
	})
	t.Run("ranges and conditions", func(t *testing.T) {
		tests := []struct {
			name string
			hdr  map[string]string
			code int
			body string
			says string
		}{
			{"a range", map[string]string{"Range": "bytes=2-5"}, 206, "2345", ""},
			{"a suffix", map[string]string{"Range": "bytes=-3"}, 206, "def", ""},
			{"If-None-Match", map[string]string{"If-None-Match": `"` + heldV1 + `"`}, 304, "", ""},
			{"If-Range of another ETag", map[string]string{"Range": "bytes=0-0", "If-Range": `"other"`}, 200, string(data), ""},
			{"past the end", map[string]string{"Range": "bytes=16-20"}, 416, "", "no range starts inside the file's 16 bytes"},
			{"malformed", map[string]string{"Range": "bytes=abc"}, 416, "", "is malformed"},
			{"a suffix of 0 bytes", map[string]string{"Range": "bytes=-0"}, 416, "", "a suffix of 0 bytes names no byte"},
			{"too many ranges", map[string]string{"Range": "bytes=" + strings.Repeat("0-0,", 33) + "1-1"}, 416, "", "34 ranges, at most 32"},
			{"If-Match of another ETag", map[string]string{"If-Match": `"other"`}, 412, "", `the file's ETag is "` + heldV1 + `"`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rec := serve(t, srv, "GET", "/api/file/"+heldV1, tt.hdr)
				if rec.Code != tt.code {
					t.Fatalf("%d %s, want %d", rec.Code, rec.Body, tt.code)
				}
				if tt.says != "" {
					if msg := errMsg(t, rec); !strings.Contains(msg, tt.says) {
						t.Errorf("error %q does not say %q", msg, tt.says)
					}
					for _, k := range []string{"ETag", "Cache-Control", "Content-Disposition", "Last-Modified"} {
						if v := rec.Header().Get(k); v != "" {
							t.Errorf("an error with %s %q", k, v)
						}
					}
					if tt.code == 416 && tt.name == "past the end" && rec.Header().Get("Content-Range") != "bytes */16" {
						t.Errorf("Content-Range %q", rec.Header().Get("Content-Range"))
					}
					return
				}
				if rec.Body.String() != tt.body {
					t.Errorf("body %q, want %q", rec.Body, tt.body)
				}
			})
		}
	})
	t.Run("known only from peers", func(t *testing.T) {
		b := &fakeBackend{fileErr: &api.NotFoundError{CID: heldV1, Providers: []string{"12D3KooWa"}}}
		rec := serve(t, newServer(b, api.Options{}), "GET", "/api/file/"+heldV1, nil)
		var m map[string]any
		if rec.Code != 404 || json.Unmarshal(rec.Body.Bytes(), &m) != nil || m["cid"] != heldV1 || fmt.Sprint(m["providers"]) != "[12D3KooWa]" ||
			!strings.Contains(errMsg(t, rec), "known only from peers") {
			t.Errorf("%d %s", rec.Code, rec.Body)
		}
	})
}

func TestServer_Events(t *testing.T) {
	t.Run("events, reset and heartbeat", func(t *testing.T) {
		b := &fakeBackend{}
		b.events = func(after string) (api.EventStream, error) {
			return &fakeEvents{pos: "5-0", batches: []eventBatch{
				{evs: []api.Event{{ID: "6-0", Type: "add", Path: "/lib/a\xff.mkv", PathBytes: []byte("/lib/a\xff.mkv"), CID: heldV1, Timestamp: 6}}},
				{err: fmt.Errorf("%w: gone", api.ErrEventsTrimmed)},
				{}, // nothing for a while: a heartbeat
				{evs: []api.Event{{ID: "9-1", Type: "purge", Removed: []string{heldV1}, Timestamp: 9}}},
			}}, nil
		}
		srv := newServer(b, api.Options{Heartbeat: time.Millisecond})
		rec := serve(t, srv, "GET", "/api/events", map[string]string{"Last-Event-ID": "5-0"})
		if rec.Code != 200 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		for k, want := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no"} {
			if got := rec.Header().Get(k); got != want {
				t.Errorf("%s %q, want %q", k, got, want)
			}
		}
		want := "retry: 3000\n: events after \"5-0\"\n\n" +
			`id: 6-0` + "\n" + `data: {"id":"6-0","type":"add","path":"/lib/a\ufffd.mkv","pathBytes":"L2xpYi9h/y5ta3Y=","cid":"` + heldV1 + `","timestamp":6}` + "\n\n" +
			"id: 6-0\nevent: reset\ndata: {\"reason\":\"events after the resume position were trimmed; reload the state, then follow from this id\"}\n\n" +
			": heartbeat\n\n" +
			`id: 9-1` + "\n" + `data: {"id":"9-1","type":"purge","removed":["` + heldV1 + `"],"timestamp":9}` + "\n\n"
		if rec.Body.String() != want {
			t.Errorf("stream\n%q\nwant\n%q", rec.Body, want)
		}
		if got := b.calls(); !reflect.DeepEqual(got, []string{`events after="5-0"`}) {
			t.Errorf("the backend was asked %q", got)
		}
	})
	t.Run("an error ends the stream", func(t *testing.T) {
		b := &fakeBackend{events: func(string) (api.EventStream, error) {
			return &fakeEvents{batches: []eventBatch{{err: fmt.Errorf("%w: redis is not reachable", api.ErrUnavailable)}}}, nil
		}}
		rec := serve(t, newServer(b, api.Options{}), "GET", "/api/events", nil)
		if !strings.HasSuffix(rec.Body.String(), "event: error\ndata: {\"error\":\"unavailable: redis is not reachable\"}\n\n") {
			t.Errorf("%q", rec.Body)
		}
	})
	t.Run("refusals", func(t *testing.T) {
		b := &fakeBackend{events: func(after string) (api.EventStream, error) {
			return nil, fmt.Errorf("%w: Last-Event-ID %s is newer than the newest event", api.ErrBadRequest, after)
		}}
		srv := newServer(b, api.Options{})
		for _, tt := range []struct {
			name, id, says string
			target         string
		}{
			{"an id of another shape", "banana", `Last-Event-ID "banana" is not an event ID`, "/api/events"},
			{"an id the backend refuses", "99-0", "newer than the newest event", "/api/events"},
			{"a query parameter", "", "this endpoint takes none", "/api/events?since=0"},
		} {
			rec := serve(t, srv, "GET", tt.target, map[string]string{"Last-Event-ID": tt.id})
			if rec.Code != 400 || !strings.Contains(errMsg(t, rec), tt.says) {
				t.Errorf("%s: %d %s", tt.name, rec.Code, rec.Body)
			}
		}
	})
	t.Run("subscribers bounded", func(t *testing.T) {
		started, release := make(chan struct{}), make(chan struct{})
		b := &fakeBackend{events: func(string) (api.EventStream, error) {
			return &blockingEvents{started: started, release: release}, nil
		}}
		srv := newServer(b, api.Options{MaxSubscribers: 1})
		done := make(chan *httptest.ResponseRecorder)
		go func() { done <- serve(t, srv, "GET", "/api/events", nil) }()
		<-started
		rec := serve(t, srv, "GET", "/api/events", nil)
		if rec.Code != 503 || !strings.Contains(errMsg(t, rec), "too many event subscribers (at most 1)") {
			t.Errorf("a second subscriber: %d %s", rec.Code, rec.Body)
		}
		close(release)
		if first := <-done; first.Code != 200 {
			t.Errorf("the first subscriber: %d", first.Code)
		}
		// Its slot is free again.
		b.events = func(string) (api.EventStream, error) { return &fakeEvents{}, nil }
		if rec := serve(t, srv, "GET", "/api/events", nil); rec.Code != 200 {
			t.Errorf("after the first left: %d %s", rec.Code, rec.Body)
		}
	})
}

// blockingEvents holds its subscriber until release, then closes.
type blockingEvents struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func (e *blockingEvents) Position() string { return "0-0" }

func (e *blockingEvents) Next(context.Context, time.Duration) ([]api.Event, error) {
	e.once.Do(func() { close(e.started) })
	<-e.release
	return nil, api.ErrClosing
}
