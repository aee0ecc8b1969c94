package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
)

// householdsBackend is a fakeBackend that knows other households: it
// records each query and answers err when set.
type householdsBackend struct {
	*fakeBackend
	err error
}

func (b householdsBackend) Households(context.Context) (api.HouseholdsAnswer, error) {
	b.record("households")
	return api.HouseholdsAnswer{}, b.err
}

func (b householdsBackend) HouseholdLibrary(_ context.Context, q api.HouseholdQuery) (api.HouseholdLibrary, error) {
	b.record("library %s view=%s show=%q season=%d q=%q page=%d limit=%d", q.Peer, q.View, q.Show, q.Season, q.Q, q.Page, q.Limit)
	return api.HouseholdLibrary{Peer: q.Peer}, b.err
}

// TestServer_Households: the parameters of a household's library reach
// the backend with their defaults, or are refused naming what is wrong;
// the backend's errors keep their statuses (403 refused, 502, 504); the
// lists are never null.
func TestServer_Households(t *testing.T) {
	b := householdsBackend{fakeBackend: &fakeBackend{}}
	srv := newServer(b, api.Options{})
	for _, tt := range []struct{ target, want string }{
		{"/api/households", "households"},
		{"/api/households/P/library", `library P view=movies show="" season=-1 q="" page=1 limit=50`},
		{"/api/households/P/library?view=shows&q=the+off&page=2&limit=100", `library P view=shows show="" season=-1 q="the off" page=2 limit=100`},
		{"/api/households/P/library?show=the+office", `library P view=shows show="the office" season=-1 q="" page=1 limit=50`},
		{"/api/households/P/library?show=the+office&season=0", `library P view=shows show="the office" season=0 q="" page=1 limit=50`},
	} {
		t.Run(tt.target, func(t *testing.T) {
			rec := serveAsking(t, srv, b.fakeBackend, tt.target, tt.want)
			if body := rec.Body.String(); !strings.Contains(body, `"households": []`) && !strings.Contains(body, `"entries": []`) {
				t.Errorf("a null list: %s", body)
			}
		})
	}
	for target, says := range map[string]string{
		"/api/households?all=1":                                   "all",
		"/api/households/P/library?view=recent":                   "view",
		"/api/households/P/library?view=movies&show=x":            "show",
		"/api/households/P/library?season=1":                      "season",
		"/api/households/P/library?show=x&q=y":                    "without show",
		"/api/households/P/library?limit=101":                     "limit",
		"/api/households/P/library?page=0":                        "page",
		"/api/households/P/library?q=" + strings.Repeat("q", 257): "q",
		"/api/households/P/library?page=1&page=2":                 "page",
	} {
		b.asked = nil
		if rec := serve(t, srv, "GET", target, nil); rec.Code != 400 || !strings.Contains(errMsg(t, rec), says) || len(b.calls()) != 0 {
			t.Errorf("%s: %d %s (asked %q), want 400 naming %s", target, rec.Code, rec.Body, b.calls(), says)
		}
	}
	for _, tt := range []struct {
		err  error
		code int
	}{
		{fmt.Errorf("%w: P does not show its list", api.ErrRefused), 403},
		{fmt.Errorf("%w: P reset the stream", api.ErrPeerFailed), 502},
		{fmt.Errorf("%w: P did not answer", api.ErrPeerTimeout), 504},
		{fmt.Errorf("%w: no household P", api.ErrNotFound), 404},
	} {
		b := householdsBackend{fakeBackend: &fakeBackend{}, err: tt.err}
		if rec := serve(t, newServer(b, api.Options{}), "GET", "/api/households/P/library", nil); rec.Code != tt.code || errMsg(t, rec) != tt.err.Error() {
			t.Errorf("%v: %d %s, want %d", tt.err, rec.Code, rec.Body, tt.code)
		}
	}
	if rec := serve(t, newServer(b.fakeBackend, api.Options{}), "GET", "/api/households", nil); rec.Code != 404 {
		t.Errorf("no Householder: %d %s", rec.Code, rec.Body)
	}
}

// TestServer_HouseholdsAccess: the households are asked of peers: off
// loopback they need the token, --public-read does not open them.
func TestServer_HouseholdsAccess(t *testing.T) {
	const tok = "0123456789abcdef0123"
	b := householdsBackend{fakeBackend: &fakeBackend{}}
	for _, tt := range []struct {
		name   string
		access api.Access
		hdr    map[string]string
		code   int
	}{
		{"loopback", api.Access{Loopback: true}, nil, 200},
		{"token: without it", api.Access{Token: tok}, nil, 401},
		{"token: with it", api.Access{Token: tok}, map[string]string{"Authorization": "Bearer " + tok}, 200},
		{"public read", api.Access{Token: tok, PublicRead: true}, nil, 401},
	} {
		for _, target := range []string{"/api/households", "/api/households/P/library"} {
			t.Run(tt.name+" "+target, func(t *testing.T) {
				if rec := serve(t, newServer(b, api.Options{Access: tt.access}), "GET", target, tt.hdr); rec.Code != tt.code {
					t.Errorf("%d %s, want %d", rec.Code, rec.Body, tt.code)
				}
			})
		}
	}
}
