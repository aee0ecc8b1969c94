package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
)

// TestServer_Library: GET /api/library hands the backend the query its
// parameters say, with the defaults filled in.
func TestServer_Library(t *testing.T) {
	b := &fakeBackend{}
	srv := newServer(b, api.Options{})
	for _, tt := range []struct{ target, want string }{
		{"/api/library", `library view=recent show="" season=-1 page=1 limit=50`},
		{"/api/library?view=movies&page=2&limit=200", `library view=movies show="" season=-1 page=2 limit=200`},
		{"/api/library?view=shows", `library view=shows show="" season=-1 page=1 limit=50`},
		{"/api/library?show=the+office", `library view=shows show="the office" season=-1 page=1 limit=50`},
		{"/api/library?view=shows&show=the%20office&season=0", `library view=shows show="the office" season=0 page=1 limit=50`},
		{"/api/library?show=x&season=99999&page=1048576&limit=1", `library view=shows show="x" season=99999 page=1048576 limit=1`},
	} {
		t.Run(tt.target, func(t *testing.T) {
			rec := serveAsking(t, srv, b, tt.target, tt.want)
			var got map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if es, ok := got["entries"].([]any); !ok || len(es) != 0 {
				t.Errorf("entries %v, want [] (never null)", got["entries"])
			}
		})
	}
}

// TestServer_LibraryBadParameters: every bad parameter is a 400 whose
// JSON error names it, and never reaches the backend.
func TestServer_LibraryBadParameters(t *testing.T) {
	b := &fakeBackend{}
	srv := newServer(b, api.Options{})
	for _, tt := range []struct{ target, says string }{
		{"/api/library?view=films", `view "films": want recent, movies, shows, other or peers`},
		{"/api/library?view=", `view "": want recent, movies, shows, other or peers`},
		{"/api/library?view=recent&view=movies", "view given 2 times"},
		{"/api/library?sort=title", `unknown parameter "sort" (want view, show, season, page, limit, folder)`},
		{"/api/library?folder=relative/dir", `folder "relative/dir": want an absolute path`},
		{"/api/library?folder=/srv&view=movies", "folder is a list of its own"},
		{"/api/library?q=x", `unknown parameter "q"`},
		{"/api/library?show=", "show is empty"},
		{"/api/library?show=" + strings.Repeat("a", 1025), "show of 1025 bytes, at most 1024"},
		{"/api/library?show=%FF", "show is not UTF-8"},
		{"/api/library?view=movies&show=x", `show is given with view "movies"`},
		{"/api/library?season=1", "season is given without show"},
		{"/api/library?show=x&season=-1", `season "-1": want a number from 0 to 99999`},
		{"/api/library?show=x&season=100000", `season "100000"`},
		{"/api/library?show=x&season=one", `season "one"`},
		{"/api/library?show=x&season=%2B1", `season "+1"`},
		{"/api/library?show=x&season=+1", `season " 1"`},
		{"/api/library?page=0", `page "0": want a number from 1 to 1048576`},
		{"/api/library?page=1048577", `page "1048577"`},
		{"/api/library?page=", `page ""`},
		{"/api/library?page=2.5", `page "2.5"`},
		{"/api/library?limit=0", `limit "0": want a number from 1 to 200`},
		{"/api/library?limit=201", `limit "201"`},
		{"/api/library?limit=1&limit=2", "limit given 2 times"},
	} {
		t.Run(tt.target, func(t *testing.T) {
			b.asked = nil
			rec := serve(t, srv, "GET", tt.target, nil)
			if rec.Code != 400 || !strings.Contains(errMsg(t, rec), tt.says) {
				t.Errorf("%d %s, want 400 saying %q", rec.Code, rec.Body, tt.says)
			}
			if got := b.calls(); len(got) != 0 {
				t.Errorf("refused parameters reached the backend: %q", got)
			}
		})
	}
}

// TestServer_LibraryAnswers: what the backend answers goes out as
// LibraryPage writes it; its errors get their status; a backend that
// keeps no catalog answers 404.
func TestServer_LibraryAnswers(t *testing.T) {
	var answer api.LibraryPage
	var refuse error
	b := &fakeBackend{library: func(api.LibraryQuery) (api.LibraryPage, error) { return answer, refuse }}
	srv := newServer(b, api.Options{})
	zero, three := 0, 3
	answer = api.LibraryPage{View: "episodes", Show: "the show", ShowTitle: "The Show", Season: &zero, Page: 1, Pages: 1, Limit: 50, Total: 1,
		Files:   api.LibraryCounts{Local: 1, FromPeers: 2, Loaded: true},
		Entries: []api.LibraryEntry{{Kind: "file", Show: "the show", FileSummary: api.FileSummary{CID: "c1", Title: "The Show", Season: &zero, Episode: &three, Size: 9, FileType: "video", Source: "12D3KooWp"}}}}
	rec := serve(t, srv, "GET", "/api/library?show=the+show&season=0", nil)
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := `map[entries:[map[cid:c1 episode:3 fileType:video kind:file season:0 show:the show size:9 source:12D3KooWp title:The Show]] ` +
		`files:map[fromPeers:2 loaded:true local:1] limit:50 page:1 pages:1 season:0 show:the show showTitle:The Show total:1 view:episodes]`
	if rec.Code != 200 || fmt.Sprint(got) != want {
		t.Errorf("got  %d %v\nwant %s", rec.Code, got, want)
	}

	for _, tt := range []struct {
		err  error
		code int
	}{
		{fmt.Errorf("%w: no show \"x\" in the library", api.ErrNotFound), 404},
		{fmt.Errorf("%w: redis is not answering", api.ErrUnavailable), 503},
	} {
		refuse = tt.err
		if rec := serve(t, srv, "GET", "/api/library?show=x", nil); rec.Code != tt.code || errMsg(t, rec) != tt.err.Error() {
			t.Errorf("%v: %d %s, want %d", tt.err, rec.Code, rec.Body, tt.code)
		}
	}

	rec = serve(t, newServer(struct{ api.Backend }{b}, api.Options{}), "GET", "/api/library", nil)
	if rec.Code != 404 || errMsg(t, rec) != "this node does not list its library" {
		t.Errorf("no Librarian: %d %s", rec.Code, rec.Body)
	}
}

// TestServer_LibraryAccess: /api/library follows /api/search's rules:
// open on loopback, the token off it, or --public-read.
func TestServer_LibraryAccess(t *testing.T) {
	const tok = "0123456789abcdef0123"
	b := &fakeBackend{}
	for _, tt := range []struct {
		name   string
		access api.Access
		hdr    map[string]string
		code   int
	}{
		{"loopback", api.Access{Loopback: true}, nil, 200},
		{"loopback: another host", api.Access{Loopback: true}, map[string]string{"Host": "evil.example:4680"}, 403},
		{"loopback: a page of another site", api.Access{Loopback: true}, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"token: without it", api.Access{Token: tok}, nil, 401},
		{"token: with it", api.Access{Token: tok}, map[string]string{"Authorization": "Bearer " + tok}, 200},
		{"public read", api.Access{Token: tok, PublicRead: true}, nil, 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(t, newServer(b, api.Options{Access: tt.access}), "GET", "/api/library?view=movies", tt.hdr)
			if rec.Code != tt.code {
				t.Errorf("%d %s, want %d", rec.Code, rec.Body, tt.code)
			}
			if tt.code != 200 {
				errMsg(t, rec)
			}
		})
	}
}
