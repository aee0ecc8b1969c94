package node_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// device sends requests to a node's API handler as a browser of another
// machine of the LAN would: from remote, to the Host nas.lan:4680, with
// the cookies the node set on it. The addresses are ones this machine
// cannot send from, so the requests go to the node's handler directly.
type device struct {
	t       *testing.T
	n       *node.Node
	remote  string
	cookies map[string]*http.Cookie
}

func newDevice(t *testing.T, n *node.Node, remote string) *device {
	return &device{t: t, n: n, remote: remote, cookies: map[string]*http.Cookie{}}
}

// send answers method target with hdr, keeping the cookies set.
func (d *device) send(method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	d.t.Helper()
	r := httptest.NewRequest(method, "http://nas.lan:4680"+target, nil)
	r.RemoteAddr = d.remote
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	for _, c := range d.cookies {
		r.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	d.n.Handler().ServeHTTP(rec, r)
	for _, c := range rec.Result().Cookies() {
		d.cookies[c.Name] = c
	}
	return rec
}

// errorOf is the "error" of a JSON error answer.
func errorOf(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
		t.Fatalf("%d: not a JSON error: %q", rec.Code, rec.Body)
	}
	return e.Error
}

// TestAPI_Invite: off loopback, an invite made with the token lets one
// browser of another machine in, once: its link sets an HTTP-only
// cookie (not the token) and sends it on to the page at a URL without
// the code; the cookie then opens the page and the API it uses as the
// token does, but never the invites, nor a change sent from a page of
// another origin; a used, expired or unknown code lets no one in; a
// revoked session's cookie stops working at once.
func TestAPI_Invite(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	p := filepath.Join(lib, "Show.S01E02.mkv")
	writeOld(t, p, []byte(strings.Repeat("i", 3000)))
	c := canonicalOf(t, p)
	tokFile := filepath.Join(t.TempDir(), "tok")
	n := startNodeWith(t, lib, func(cfg *node.Config) { cfg.APIAddr = "0.0.0.0:0"; cfg.APITokenFile = tokFile })
	b, err := os.ReadFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSpace(string(b))
	auth := map[string]string{"Authorization": "Bearer " + tok}
	owner := newDevice(t, n, "192.168.1.2:40000") // the household's machine, with the token
	phone := newDevice(t, n, "192.168.1.20:51000")
	html := map[string]string{"Accept": "text/html,application/xhtml+xml", "User-Agent": "Phone/1.0"}

	rec := owner.send("POST", "/api/invites?ttl=24h", auth)
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST /api/invites: %d %s", rec.Code, rec.Body)
	}
	var inv api.InviteAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &inv); err != nil {
		t.Fatal(err)
	}
	if inv.Path != "/invite/"+inv.Code || inv.ID == "" || !inv.Expires.After(inv.Created.Add(23*time.Hour)) {
		t.Fatalf("invite: %s", rec.Body)
	}
	for _, u := range inv.URLs {
		if !strings.HasSuffix(u, inv.Path) || strings.Contains(u, "//127.") || strings.Contains(u, "//0.0.0.0") {
			t.Errorf("link %q: not a LAN address's link to %s", u, inv.Path)
		}
	}

	// The link, once: a cookie, and the page without the code.
	rec = phone.send("GET", inv.Path, html)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/" {
		t.Fatalf("open the link: %d, Location %q; want 303 to /", rec.Code, rec.Header().Get("Location"))
	}
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 {
		t.Fatalf("open the link: cookies %v, want one", cookies)
	}
	ck := cookies[0]
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.MaxAge < 300*24*3600 {
		t.Errorf("cookie %s: want HttpOnly, SameSite=Strict, Path=/, a long Max-Age", rec.Header().Get("Set-Cookie"))
	}
	if ck.Value == "" || strings.Contains(ck.Value, tok) || strings.Contains(ck.Value, inv.Code) {
		t.Errorf("cookie value %q: want a secret of its own", ck.Value)
	}
	stranger := newDevice(t, n, "192.168.1.30:52000")
	if rec := stranger.send("GET", inv.Path, html); rec.Code != http.StatusGone || !strings.Contains(rec.Body.String(), "used already") ||
		!strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") || len(stranger.cookies) != 0 {
		t.Errorf("the link again: %d %q %v, want 410 saying it was used, and no cookie", rec.Code, rec.Body, stranger.cookies)
	}

	// The cookie opens the page and what it reads; nothing shows the token.
	reads := []string{"/", "/js/client.js", "/api/library?view=recent", "/api/meta/" + c + "?local=1", "/api/file/" + c,
		"/api/search?q=show", "/api/status", "/api/peers", "/api/cid/" + c}
	for _, target := range reads {
		t.Run("cookie opens "+target, func(t *testing.T) {
			rec := phone.send("GET", target, map[string]string{"Sec-Fetch-Site": "same-origin"})
			if rec.Code != http.StatusOK {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			if strings.Contains(rec.Body.String(), tok) {
				t.Error("the answer holds the token")
			}
			if strings.HasPrefix(target, "/api/") {
				if rec := stranger.send("GET", target, nil); rec.Code != http.StatusUnauthorized {
					t.Errorf("without the cookie: %d, want 401", rec.Code)
				}
			}
		})
	}

	// What the cookie does not open, whatever the page.
	refused := []struct {
		name, method, target string
		hdr                  map[string]string
		code                 int
	}{
		{"list invites", "GET", "/api/invites", nil, 401},
		{"make an invite", "POST", "/api/invites", map[string]string{"Origin": "http://nas.lan:4680", "Sec-Fetch-Site": "same-origin"}, 401},
		{"revoke", "DELETE", "/api/invites/all", map[string]string{"Origin": "http://nas.lan:4680", "Sec-Fetch-Site": "same-origin"}, 401},
		{"a change from another origin", "POST", "/api/library", map[string]string{"Origin": "http://evil.example"}, 403},
		{"a change from another site", "POST", "/api/library", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, 403},
		{"a change from a sibling origin", "POST", "/api/library", map[string]string{"Origin": "http://nas.lan:8080", "Sec-Fetch-Site": "same-site"}, 403},
		{"a change saying no origin", "PUT", "/api/library", nil, 403},
		{"a change from the page itself passes to the routes", "POST", "/api/library", map[string]string{"Origin": "http://nas.lan:4680"}, 405},
		{"a read from another site", "GET", "/api/library?view=recent", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
	}
	for _, tt := range refused {
		t.Run("cookie: "+tt.name, func(t *testing.T) {
			rec := phone.send(tt.method, tt.target, tt.hdr)
			if rec.Code != tt.code {
				t.Fatalf("%d %s, want %d", rec.Code, rec.Body, tt.code)
			}
			errorOf(t, rec)
		})
	}

	// The list names the session; revoking it ends the cookie at once.
	rec = owner.send("GET", "/api/invites", auth)
	var list api.InvitesAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || len(list.Invites) != 1 {
		t.Fatalf("GET /api/invites: %d %s", rec.Code, rec.Body)
	}
	if e := list.Invites[0]; e.ID != inv.ID || e.State != "signed in" || e.UserAgent != "Phone/1.0" || e.LastUsed.IsZero() {
		t.Errorf("listed %+v", e)
	}
	if strings.Contains(rec.Body.String(), ck.Value) || strings.Contains(rec.Body.String(), inv.Code) {
		t.Error("the list shows a secret")
	}
	if rec := owner.send("DELETE", "/api/invites/"+inv.ID, auth); rec.Code != http.StatusOK {
		t.Fatalf("revoke: %d %s", rec.Code, rec.Body)
	}
	rec = phone.send("GET", "/api/library?view=recent", nil)
	if rec.Code != http.StatusUnauthorized || !strings.Contains(errorOf(t, rec), "ask the household for a new invite") {
		t.Errorf("after revoking: %d %s, want 401 saying to ask for a new invite", rec.Code, rec.Body)
	}
	if rec := owner.send("DELETE", "/api/invites/"+inv.ID, auth); rec.Code != http.StatusNotFound {
		t.Errorf("revoke again: %d %s, want 404", rec.Code, rec.Body)
	}

	// A code that expired unused, and one that never was.
	rec = owner.send("POST", "/api/invites?ttl=1s", auth)
	if err := json.Unmarshal(rec.Body.Bytes(), &inv); err != nil || rec.Code != http.StatusCreated {
		t.Fatalf("POST /api/invites?ttl=1s: %d %s", rec.Code, rec.Body)
	}
	waiting.Until(t, "the invite to be listed as expired", func() string {
		rec := owner.send("GET", "/api/invites", auth)
		if strings.Contains(rec.Body.String(), `"state": "expired"`) {
			return ""
		}
		return rec.Body.String()
	}, waiting.Every(100*time.Millisecond))
	other := newDevice(t, n, "192.168.1.21:53000")
	if rec := other.send("GET", inv.Path, nil); rec.Code != http.StatusGone || !strings.Contains(errorOf(t, rec), "expired") || len(other.cookies) != 0 {
		t.Errorf("expired link: %d %s, want 410 saying it expired", rec.Code, rec.Body)
	}
	if rec := other.send("GET", "/invite/not-a-code", nil); rec.Code != http.StatusNotFound {
		t.Errorf("unknown code: %d %s, want 404", rec.Code, rec.Body)
	}
	for _, bad := range []string{"ttl=0s", "ttl=forever", "ttl=1000h", "days=1"} {
		if rec := owner.send("POST", "/api/invites?"+bad, auth); rec.Code != http.StatusBadRequest {
			t.Errorf("POST /api/invites?%s: %d %s, want 400", bad, rec.Code, rec.Body)
		}
	}
}
