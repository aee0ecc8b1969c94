package node_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/metamesh/node/api"
)

// TestWeb_Invite: off loopback, a browser that opens an invite's link
// lands on the page at / and works there by its cookie alone: never asked
// for the token, live from the event stream, searching and opening a
// record; its script sees no cookie and no token. Once revoked, the page
// says to ask for a new invite.
func TestWeb_Invite(t *testing.T) {
	t.Parallel()
	ctx, consoleErrors := browser(t)

	n, tok, port := startTokenNode(t)
	auth := map[string]string{"Authorization": "Bearer " + tok}
	resp, body := do(t, n, "POST", "/api/invites", auth)
	var inv api.InviteAnswer
	if err := json.Unmarshal(body, &inv); err != nil || resp.StatusCode != 201 {
		t.Fatalf("POST /api/invites: %s %s", resp.Status, body)
	}
	ce := consoleErrors
	poll := func(what, js string) {
		t.Helper()
		must(t, ctx, what, ce, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(10*time.Second)))
	}
	tokenAsked := `!document.getElementById("token-section").hidden`

	must(t, ctx, "open the invite", ce, chromedp.Navigate("http://127.0.0.1:"+port+inv.Path))
	if loc := must(t, ctx, "read the location", ce, chromedp.Evaluate[string](`location.href`)); loc != "http://127.0.0.1:"+port+"/" {
		t.Errorf("after the invite the browser is at %q, want the page at /", loc)
	}
	poll("wait for the node's peer ID", `document.getElementById("peer-id").textContent !== ""`)
	poll("wait for live updates", `document.getElementById("live-mode").textContent.startsWith("live")`)
	must(t, ctx, "type a title", ce, chromedp.SendKeys(chromedp.CSS("#q"), "quiet harbour"))
	must(t, ctx, "search", ce, chromedp.Click(chromedp.CSS(`#search-form button[type=submit]`)))
	must(t, ctx, "wait for a result", ce, chromedp.WaitVisible(chromedp.CSS(`#results a[data-cid]`)))
	must(t, ctx, "open the record", ce, chromedp.Click(chromedp.CSS(`#results a[data-cid]`)))
	must(t, ctx, "wait for the CIDs", ce, chromedp.WaitVisible(chromedp.CSS(`#cids tr.canonical`)))
	if asked := must(t, ctx, "look for the token form", ce, chromedp.Evaluate[bool](tokenAsked)); asked {
		t.Error("the page asked for the token of a browser an invite let in")
	}
	seen := must(t, ctx, "read what the script sees", ce, chromedp.Evaluate[string](
		`document.cookie + "|" + (sessionStorage.getItem("metamesh.token") || "") + "|" + document.documentElement.outerHTML`))
	if strings.Contains(seen, tok) || strings.HasPrefix(seen, "metamesh") {
		t.Errorf("the page's script sees the token or the session cookie: %.200q", seen)
	}
	if errs := ce(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}

	if resp, body := do(t, n, "DELETE", "/api/invites/"+inv.ID, auth); resp.StatusCode != 200 {
		t.Fatalf("revoke: %s %s", resp.Status, body)
	}
	must(t, ctx, "reload the page", ce, chromedp.Navigate("http://127.0.0.1:"+port+"/"))
	poll("wait for the page to say to ask for a new invite", tokenAsked+
		` && document.getElementById("token-why").textContent.includes("ask the household for a new invite")`)
}
