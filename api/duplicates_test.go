package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
)

// dedupBackend is a fakeBackend that lists duplicates: it records the
// query as the fake records its calls and answers what answer gives.
type dedupBackend struct {
	*fakeBackend
	answer func(api.DuplicatesQuery) (api.DuplicatesPage, error)
}

func (b dedupBackend) Duplicates(_ context.Context, q api.DuplicatesQuery) (api.DuplicatesPage, error) {
	b.record("duplicates by=%s page=%d limit=%d", q.By, q.Page, q.Limit)
	if b.answer == nil {
		return api.DuplicatesPage{By: q.By, Page: q.Page, Limit: q.Limit}, nil
	}
	return b.answer(q)
}

// TestServer_Duplicates: GET /api/duplicates hands the backend the query
// its parameters say, defaults filled in; its groups are never null.
func TestServer_Duplicates(t *testing.T) {
	b := dedupBackend{fakeBackend: &fakeBackend{}}
	srv := newServer(b, api.Options{})
	for _, tt := range []struct{ target, want string }{
		{"/api/duplicates", "duplicates by=content page=1 limit=50"},
		{"/api/duplicates?by=title", "duplicates by=title page=1 limit=50"},
		{"/api/duplicates?by=content&page=3&limit=200", "duplicates by=content page=3 limit=200"},
	} {
		t.Run(tt.target, func(t *testing.T) {
			rec := serveAsking(t, srv, b.fakeBackend, tt.target, tt.want)
			var got map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if gs, ok := got["groups"].([]any); !ok || len(gs) != 0 {
				t.Errorf("groups %v, want [] (never null)", got["groups"])
			}
		})
	}
}

// TestServer_DuplicatesBadParameters: a bad by or paging parameter is a
// 400 naming it, which never reaches the backend.
func TestServer_DuplicatesBadParameters(t *testing.T) {
	b := dedupBackend{fakeBackend: &fakeBackend{}}
	srv := newServer(b, api.Options{})
	for _, tt := range []struct{ target, says string }{
		{"/api/duplicates?by=size", `by "size": want content or title`},
		{"/api/duplicates?by=", `by "": want content or title`},
		{"/api/duplicates?by=title&by=content", "by given 2 times"},
		{"/api/duplicates?view=movies", `unknown parameter "view" (want by, page, limit)`},
		{"/api/duplicates?page=0", `page "0": want a number from 1 to 1048576`},
		{"/api/duplicates?page=x", `page "x"`},
		{"/api/duplicates?limit=0", `limit "0": want a number from 1 to 200`},
		{"/api/duplicates?limit=201", `limit "201"`},
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

// TestServer_DuplicatesAnswers: the backend's page goes out as the model
// writes it, its errors get their status, and a backend that lists no
// duplicates answers 404.
func TestServer_DuplicatesAnswers(t *testing.T) {
	one, two := 1, 2
	page := api.DuplicatesPage{By: "title", Page: 1, Pages: 1, Limit: 50, Total: 1, Wasted: 20, Loaded: true,
		Groups: []api.DuplicateGroup{{Key: "episode:the show|1|2", Title: "The Show", Season: &one, Episode: &two, Count: 2, Size: 50, Wasted: 20,
			Copies: []api.DuplicateCopy{
				{CID: "c1", Path: "/tv/a.mkv", Size: 30, Resolution: "1920x1080", VideoCodec: "h264", AudioCodec: "aac", Runtime: 1500},
				{CID: "c2", Path: "/tv/b.mkv", Size: 20},
			}}}}
	var refuse error
	b := dedupBackend{fakeBackend: &fakeBackend{}, answer: func(api.DuplicatesQuery) (api.DuplicatesPage, error) { return page, refuse }}
	srv := newServer(b, api.Options{})
	rec := serve(t, srv, "GET", "/api/duplicates?by=title", nil)
	want := `{"by":"title","groups":[{"key":"episode:the show|1|2","title":"The Show","season":1,"episode":2,"count":2,"size":50,"wasted":20,` +
		`"copies":[{"cid":"c1","path":"/tv/a.mkv","size":30,"resolution":"1920x1080","videoCodec":"h264","audioCodec":"aac","runtime":1500},` +
		`{"cid":"c2","path":"/tv/b.mkv","size":20}]}],"page":1,"pages":1,"limit":50,"total":1,"wasted":20,"loaded":true}`
	var compact bytes.Buffer
	if err := json.Compact(&compact, rec.Body.Bytes()); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 200 || compact.String() != want {
		t.Errorf("got  %d %s\nwant %s", rec.Code, compact.String(), want)
	}

	refuse = fmt.Errorf("%w: redis is not answering", api.ErrUnavailable)
	if rec := serve(t, srv, "GET", "/api/duplicates", nil); rec.Code != 503 || errMsg(t, rec) != refuse.Error() {
		t.Errorf("%d %s, want 503", rec.Code, rec.Body)
	}
	rec = serve(t, newServer(b.fakeBackend, api.Options{}), "GET", "/api/duplicates", nil)
	if rec.Code != 404 || errMsg(t, rec) != "this node does not list its duplicates" {
		t.Errorf("no Deduplicator: %d %s", rec.Code, rec.Body)
	}
}

// TestServer_DuplicatesAccess: /api/duplicates names paths: off loopback
// it needs the token, --public-read does not open it.
func TestServer_DuplicatesAccess(t *testing.T) {
	const tok = "0123456789abcdef0123"
	b := dedupBackend{fakeBackend: &fakeBackend{}}
	for _, tt := range []struct {
		name   string
		access api.Access
		hdr    map[string]string
		code   int
	}{
		{"loopback", api.Access{Loopback: true}, nil, 200},
		{"loopback: a page of another site", api.Access{Loopback: true}, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"token: without it", api.Access{Token: tok}, nil, 401},
		{"token: a wrong one", api.Access{Token: tok}, map[string]string{"Authorization": "Bearer x" + tok}, 401},
		{"token: with it", api.Access{Token: tok}, map[string]string{"Authorization": "Bearer " + tok}, 200},
		{"public read", api.Access{Token: tok, PublicRead: true}, nil, 401},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(t, newServer(b, api.Options{Access: tt.access}), "GET", "/api/duplicates?by=title", tt.hdr)
			if rec.Code != tt.code {
				t.Errorf("%d %s, want %d", rec.Code, rec.Body, tt.code)
			}
			if tt.code != 200 {
				errMsg(t, rec)
			}
		})
	}
}
