package node_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// call sends a JSON body (none for "") and decodes a 2xx answer into v
// (when not nil); it returns the status and the body.
func call(t testing.TB, n *node.Node, method, path, body string, v any) (int, string) {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	resp, got := doBody(t, n, method, path, b, map[string]string{"Content-Type": "application/json"})
	if resp.StatusCode/100 != 2 {
		var e struct{ Error string }
		if err := json.Unmarshal(got, &e); err != nil || e.Error == "" {
			t.Errorf("%s %s: %s answered %s: no JSON error", method, path, resp.Status, got)
		}
		return resp.StatusCode, string(got)
	}
	if v != nil {
		if err := json.Unmarshal(got, v); err != nil {
			t.Fatalf("%s %s: %s (%v)", method, path, got, err)
		}
	}
	return resp.StatusCode, string(got)
}

func TestAPI_Members(t *testing.T) {
	t.Parallel()
	n := startNodeWith(t, t.TempDir(), func(c *node.Config) { c.Users = []string{"alice", "bob"} })
	var ms api.MembersAnswer
	getJSON(t, n, "/api/members", &ms)
	if strings.Join(ms.Members, ",") != "alice,bob" || ms.Current != "" {
		t.Errorf("members of --users: %+v", ms)
	}
	if code, body := call(t, n, "POST", "/api/members", `{"name":"Carol Ann"}`, nil); code != 201 {
		t.Fatalf("POST a member: %d %s", code, body)
	}
	for _, tc := range []struct {
		method, path, body string
		code               int
		says               string
	}{
		{"POST", "/api/members", `{"name":"Carol Ann"}`, 409, "already in the household"},
		{"POST", "/api/members", `{"name":"a/b"}`, 400, "only letters, digits"},
		{"POST", "/api/members", `{"name":""}`, 400, "empty"},
		{"POST", "/api/members", `{"name":"` + strings.Repeat("x", 41) + `"}`, 400, "at most 40"},
		{"POST", "/api/members", `{"nom":"x"}`, 400, "unknown field"},
		{"POST", "/api/members", ``, 400, "empty"},
		{"POST", "/api/members", `{}`, 400, "the body has no"},
		{"DELETE", "/api/members/nobody", ``, 404, "no member named"},
		{"DELETE", "/api/members/%20x", ``, 400, "begins or ends with a space"},
		{"GET", "/api/members/nobody/continue", ``, 404, "no member named"},
		{"GET", "/api/members?x=1", ``, 400, "x"},
	} {
		if code, body := call(t, n, tc.method, tc.path, tc.body, nil); code != tc.code || !strings.Contains(body, tc.says) {
			t.Errorf("%s %s %s: %d %s, want %d saying %q", tc.method, tc.path, tc.body, code, body, tc.code, tc.says)
		}
	}
	if code, body := call(t, n, "DELETE", "/api/members/"+url.PathEscape("Carol Ann"), "", nil); code != 200 {
		t.Errorf("DELETE a member: %d %s", code, body)
	}
	// The member a browser chose: its cookie, or the header.
	for hdr, want := range map[[2]string]string{
		{"Cookie", api.MemberCookie + "=bob"}: "bob",
		{api.MemberHeader, "alice"}:           "alice",
		{api.MemberHeader, "Carol%20Ann"}:     "",
	} {
		resp, body := do(t, n, "GET", "/api/members", map[string]string{hdr[0]: hdr[1]})
		var got api.MembersAnswer
		if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != 200 || got.Current != want || strings.Join(got.Members, ",") != "alice,bob" {
			t.Errorf("GET /api/members with %s: %s %s, want current %q", hdr, resp.Status, body, want)
		}
	}
}

// showLibrary writes a film, another and a show's episodes across a
// season boundary, and returns their canonical CIDs by name.
func showLibrary(t *testing.T, lib string) map[string]string {
	t.Helper()
	names := map[string]string{"film": "Film (2001).mkv", "other": "Other (2002).mkv",
		"s1e1": "Show/Season 1/Show.S01E01.mkv", "s1e2": "Show/Season 1/Show.S01E02.mkv", "s2e1": "Show/Season 2/Show.S02E01.mkv"}
	out := map[string]string{}
	for k, name := range names {
		writeLibrary(t, lib, name)
		out[k] = canonicalOf(t, filepath.Join(lib, name))
	}
	return out
}

// save puts a position and answers the state kept; it waits for the
// clock to pass the save, so that the next save is played later.
func save(t *testing.T, n *node.Node, member, c string, body string) api.WatchEntry {
	t.Helper()
	var e api.WatchEntry
	if code, b := call(t, n, "PUT", "/api/members/"+member+"/watch/"+c, body, &e); code != 200 {
		t.Fatalf("PUT watch %s: %d %s", body, code, b)
	}
	waiting.For(t, "the clock past the save", func() bool { return time.Now().UnixMilli() > e.LastPlayed })
	return e
}

func TestAPI_WatchAndContinue(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	c := showLibrary(t, lib)
	n := startNodeWith(t, lib, func(cfg *node.Config) { cfg.Users = []string{"alice", "bob"} })
	waiting.For(t, "the episodes listed", func() bool { return library(t, n, "view=recent").Total == 5 })

	if e := save(t, n, "alice", c["film"], `{"position":754.5,"duration":5400}`); e.Position != 754.5 || e.Watched || e.CID != c["film"] {
		t.Errorf("saved %+v", e)
	}
	var got api.WatchEntry
	getJSON(t, n, "/api/members/alice/watch/"+c["film"], &got)
	if got.Position != 754.5 || got.Duration != 5400 || got.Watched || got.LastPlayed == 0 {
		t.Errorf("read back %+v", got)
	}
	getJSON(t, n, "/api/members/bob/watch/"+c["film"], &got)
	if got.Position != 0 || got.LastPlayed != 0 {
		t.Errorf("bob's state of alice's film: %+v", got)
	}
	save(t, n, "alice", c["other"], `{"position":60,"duration":3600}`)
	continued := func() (out []string) {
		var a api.ContinueAnswer
		getJSON(t, n, "/api/members/alice/continue", &a)
		for _, e := range a.Entries {
			if e.File == nil || e.File.CID != e.CID {
				t.Errorf("continue entry without its file's entry: %+v", e)
			}
			out = append(out, e.CID)
		}
		return out
	}
	if got, want := continued(), []string{c["other"], c["film"]}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("continue: %q, want other then film %q", got, want)
	}
	save(t, n, "alice", c["film"], `{"position":800,"duration":5400}`)
	if got, want := continued(), []string{c["film"], c["other"]}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("continue after the film played again: %q, want %q", got, want)
	}

	// 90% of the duration is watched; just under is not; ended is.
	if e := save(t, n, "alice", c["other"], `{"position":3239,"duration":3600}`); e.Watched {
		t.Errorf("watched at %v of %v", e.Position, e.Duration)
	}
	if e := save(t, n, "alice", c["other"], `{"position":3240,"duration":3600}`); !e.Watched {
		t.Errorf("not watched at 90%%: %+v", e)
	}
	if e := save(t, n, "bob", c["other"], `{"position":10,"duration":3600,"watched":true}`); !e.Watched {
		t.Errorf("not watched when ended: %+v", e)
	}
	if got, want := continued(), []string{c["film"]}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("continue after other was watched: %q, want %q", got, want)
	}

	// The next episode, across the season boundary.
	save(t, n, "alice", c["s1e2"], `{"position":1400,"duration":1400,"watched":true}`)
	var next api.NextEpisode
	getJSON(t, n, "/api/members/alice/next/"+c["s1e2"], &next)
	if next.Episode.CID != c["s2e1"] || *next.Episode.Season != 2 || *next.Episode.Episode != 1 || next.After != c["s1e2"] || next.State != nil {
		t.Errorf("next after S01E02: %+v", next)
	}
	getJSON(t, n, "/api/members/alice/next/"+c["s1e1"], &next)
	if next.Episode.CID != c["s1e2"] || next.State == nil || !next.State.Watched {
		t.Errorf("next after S01E01: %+v (want S01E02, watched)", next)
	}
	var a api.ContinueAnswer
	getJSON(t, n, "/api/members/alice/continue", &a)
	if len(a.Next) != 1 || a.Next[0].Episode.CID != c["s2e1"] || a.Next[0].After != c["s1e2"] {
		t.Errorf("continue's next: %+v, want S02E01 after S01E02", a.Next)
	}
	var all api.WatchList
	getJSON(t, n, "/api/members/alice/watch", &all)
	if len(all.Entries) != 3 || all.Entries[0].CID != c["s1e2"] {
		t.Errorf("alice's files: %+v", all.Entries)
	}

	unknown := "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"
	for _, tc := range []struct {
		method, path, body string
		code               int
		says               string
	}{
		{"GET", "/api/members/alice/next/" + c["s2e1"], ``, 404, "no episode of this household follows"},
		{"GET", "/api/members/alice/next/" + c["film"], ``, 404, "no episode of this household follows"},
		{"PUT", "/api/members/nobody/watch/" + c["film"], `{"position":1,"duration":2}`, 404, "no member named"},
		{"PUT", "/api/members/alice/watch/" + unknown, `{"position":1,"duration":2}`, 404, "no file of CID"},
		{"PUT", "/api/members/alice/watch/garbage", `{"position":1,"duration":2}`, 400, "garbage"},
		{"PUT", "/api/members/alice/watch/" + c["film"], `{"position":5,"duration":2}`, 400, "past the duration"},
		{"PUT", "/api/members/alice/watch/" + c["film"], `{"position":-1,"duration":2}`, 400, "position -1"},
		{"PUT", "/api/members/alice/watch/" + c["film"], `{"position":1}`, 400, "duration"},
		{"PUT", "/api/members/alice/watch/" + c["film"], `{"position":1,"duration":0}`, 400, "duration 0"},
		{"PUT", "/api/members/alice/watch/" + c["film"], `{"position":"1","duration":2}`, 400, "position"},
	} {
		if code, body := call(t, n, tc.method, tc.path, tc.body, nil); code != tc.code || !strings.Contains(body, tc.says) {
			t.Errorf("%s %s %s: %d %s, want %d saying %q", tc.method, tc.path, tc.body, code, body, tc.code, tc.says)
		}
	}
	getJSON(t, n, "/api/members/alice/watch/"+c["film"], &got)
	if got.Position != 800 {
		t.Errorf("refused writes changed the film's state: %+v", got)
	}
	// A member removed takes what it watched along.
	call(t, n, "DELETE", "/api/members/alice", "", nil)
	call(t, n, "POST", "/api/members", `{"name":"alice"}`, nil)
	getJSON(t, n, "/api/members/alice/watch", &all)
	if len(all.Entries) != 0 {
		t.Errorf("a new alice has watched %+v", all.Entries)
	}
}

// A snapshot carries the members and what they watched; another node
// that imports it offers the same places.
func TestAPI_WatchSnapshotRoundTrip(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	c := showLibrary(t, lib)
	src := startNodeWith(t, lib, func(cfg *node.Config) { cfg.Users = []string{"alice"} })
	dst := startNodeWith(t, t.TempDir(), nil)
	save(t, src, "alice", c["film"], `{"position":754.5,"duration":5400}`)
	watched := save(t, src, "alice", c["s1e1"], `{"position":1400,"duration":1400,"watched":true}`)

	resp, snap := do(t, src, "GET", "/api/snapshot", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("export: %s", resp.Status)
	}
	if resp, body := doBody(t, dst, "POST", "/api/snapshot", snap, nil); resp.StatusCode != 200 {
		t.Fatalf("import: %s %s", resp.Status, body)
	}
	var ms api.MembersAnswer
	getJSON(t, dst, "/api/members", &ms)
	if strings.Join(ms.Members, ",") != "alice" {
		t.Errorf("members after the import: %q", ms.Members)
	}
	var got api.WatchEntry
	getJSON(t, dst, "/api/members/alice/watch/"+c["film"], &got)
	if got.Position != 754.5 || got.Duration != 5400 || got.Watched {
		t.Errorf("the film's state after the import: %+v", got)
	}
	getJSON(t, dst, "/api/members/alice/watch/"+c["s1e1"], &got)
	if got.WatchState != watched.WatchState {
		t.Errorf("the episode's state after the import: %+v, want %+v", got.WatchState, watched.WatchState)
	}
}

// What a household watched is its own: a peer's lookup of the file
// carries none of it.
func TestWatch_NeverSentToPeers(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	c := showLibrary(t, lib)
	a := startNodeWith(t, lib, func(cfg *node.Config) { cfg.Users = []string{"zelda"} })
	b := p2pNode(t, nil)
	if err := connect(b, a); err != nil {
		t.Fatal(err)
	}
	save(t, a, "zelda", c["film"], `{"position":754.5,"duration":5400}`)
	resp, body := do(t, b, "GET", "/api/meta/"+c["film"], nil)
	if resp.StatusCode != 200 {
		t.Fatalf("the peer's lookup: %s %s", resp.Status, body)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["canonical_cid"] != c["film"] {
		t.Fatalf("the peer's lookup answered another file: %s", body)
	}
	// The peer's federated search finds the file, and nothing of zelda.
	var hits []byte
	waiting.Until(t, "the peer's search to find the film", func() string {
		resp, b := do(t, b, "GET", "/api/search?q=film&federated=1", nil)
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"`+c["film"]+`"`) {
			return fmt.Sprintf("%s %.300s", resp.Status, b)
		}
		hits = b
		return ""
	})
	for what, answer := range map[string][]byte{"record": body, "search": hits} {
		for _, w := range []string{"zelda", "754.5", "lastPlayed", "position", "watch"} {
			if strings.Contains(string(answer), w) {
				t.Errorf("the peer's %s of the file holds %q: %s", what, w, answer)
			}
		}
	}
	var ms api.MembersAnswer
	getJSON(t, b, "/api/members", &ms)
	if len(ms.Members) != 0 {
		t.Errorf("the peer has members %q", ms.Members)
	}
}

// Off loopback the members and what they watched need the token (or an
// invite's cookie), --public-read or not.
func TestAPI_MembersOffLoopback(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	c := showLibrary(t, lib)
	tokFile := filepath.Join(t.TempDir(), "token")
	tok := "a-token-of-the-household-0123456789"
	if err := os.WriteFile(tokFile, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	n := startNodeWith(t, lib, func(cfg *node.Config) {
		cfg.APIAddr, cfg.APITokenFile, cfg.PublicRead, cfg.Users = "0.0.0.0:0", tokFile, true, []string{"alice"}
	})
	put := []byte(`{"position":10,"duration":100}`)
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/members"}, {"GET", "/api/members/alice/continue"}, {"PUT", "/api/members/alice/watch/" + c["film"]},
	} {
		resp, body := doBody(t, n, r.method, r.path, put, nil)
		if resp.StatusCode != 401 || !strings.Contains(string(body), `"error"`) {
			t.Errorf("%s %s without the token: %s %s, want 401", r.method, r.path, resp.Status, body)
		}
		resp, body = doBody(t, n, r.method, r.path, put, map[string]string{"Authorization": "Bearer " + tok})
		if resp.StatusCode != 200 {
			t.Errorf("%s %s with the token: %s %s", r.method, r.path, resp.Status, body)
		}
	}
}
