package api_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
)

// A Backend that keeps no members answers 404 under /api/members, in
// JSON, whatever the path below it.
func TestMembers_NoWatcher(t *testing.T) {
	srv := newServer(&fakeBackend{}, api.Options{})
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/members"}, {"POST", "/api/members"}, {"DELETE", "/api/members/alice"},
		{"GET", "/api/members/alice/continue"}, {"PUT", "/api/members/alice/watch/bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"},
	} {
		rec := serve(t, srv, r.method, r.path, nil)
		if rec.Code != 404 || errMsg(t, rec) != "this node keeps no members" {
			t.Errorf("%s %s: %d %s", r.method, r.path, rec.Code, rec.Body)
		}
	}
}

func TestChosenMember(t *testing.T) {
	for _, tc := range []struct {
		header, cookie, want string
	}{
		{"", "", ""},
		{"", "alice", "alice"},
		{"bob", "alice", "bob"},
		{"", "Carol%20Ann", "Carol Ann"},
		{"", "%C3%B6zge", "özge"},
		{"", "a%2Fb", ""},
		{"", "%zz", ""},
		{strings.Repeat("x", 41), "", ""},
	} {
		r := httptest.NewRequest("GET", "/api/members", nil)
		if tc.header != "" {
			r.Header.Set(api.MemberHeader, tc.header)
		}
		if tc.cookie != "" {
			r.Header.Set("Cookie", api.MemberCookie+"="+tc.cookie)
		}
		if got := api.ChosenMember(r); got != tc.want {
			t.Errorf("header %q cookie %q: chose %q, want %q", tc.header, tc.cookie, got, tc.want)
		}
	}
}
