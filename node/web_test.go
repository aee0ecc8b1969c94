package node_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/metamesh/node/node"
	"github.com/metamesh/node/protocol"
)

// chromiumPath finds Debian's chromium (scripts/deps.sh installs it).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium not found on PATH (neither chromium nor chromium-browser): run scripts/deps.sh or apt-get install chromium")
	return ""
}

// browser starts headless Chromium for the test and collects the page's
// console errors, uncaught exceptions and browser log errors.
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.WindowSize(1200, 900))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	ctx, tcancel := context.WithTimeout(ctx, 20*time.Second)
	t.Cleanup(func() { tcancel(); cancel(); acancel() })

	var mu sync.Mutex
	var errs []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				errs = append(errs, m.String()+" ("+m.URL+")")
				mu.Unlock()
			}
		}
	}()
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(errs)
	}
}

// must runs a browser action that returns a value and fails the test on
// error, naming what the page was doing.
func must[T any](t *testing.T, ctx context.Context, what string, consoleErrors func() []string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v (console errors: %q)", what, err, consoleErrors())
	}
	return v
}

// cidsOf lists the CIDs of a /api/meta document's "cids" field.
func cidsOf(v any) []string {
	var out []string
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case []any:
		for _, e := range x {
			out = append(out, cidsOf(e)...)
		}
	case map[string]any:
		for _, e := range x {
			out = append(out, cidsOf(e)...)
		}
	}
	return out
}

func TestWeb_SearchRecordLive(t *testing.T) {
	ctx, consoleErrors := browser(t)

	lib := t.TempDir()
	known := filepath.Join(lib, "Zebra.Crossing.2019.mkv")
	data := make([]byte, 48<<10)
	rand.Read(data)
	writeOld(t, known, data)
	n := startNodeWith(t, lib, nil)
	canonical := canonicalOf(t, known)

	_, body := do(t, n, "GET", "/api/status", nil)
	var st struct {
		PeerID string `json:"peerId"`
	}
	if err := json.Unmarshal(body, &st); err != nil || st.PeerID == "" {
		t.Fatalf("GET /api/status: %s (%v)", body, err)
	}
	_, body = do(t, n, "GET", "/api/meta/"+canonical+"?local=1", nil)
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("GET /api/meta: %s (%v)", body, err)
	}
	wantTiers := map[string]string{canonical: ""}
	for _, c := range cidsOf(doc["cids"]) {
		wantTiers[c] = ""
	}
	for c := range wantTiers {
		info, err := protocol.Inspect(c)
		if err != nil {
			t.Fatalf("Inspect(%s): %v", c, err)
		}
		wantTiers[info.Normalized] = info.Tier
	}

	base := "http://" + n.APIAddr() + "/"
	ce := consoleErrors
	poll := func(what, js string) {
		t.Helper()
		must(t, ctx, what, ce, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(10*time.Second)))
	}
	must(t, ctx, "load the page", ce, chromedp.Navigate(base))
	poll("wait for the node's peer ID", `document.getElementById("peer-id").textContent !== ""`)
	peerID := must(t, ctx, "read the peer ID", ce, chromedp.TextContent(chromedp.CSS("#peer-id")))

	must(t, ctx, "type a title", ce, chromedp.SendKeys(chromedp.CSS("#q"), "zebra crossing"))
	must(t, ctx, "search", ce, chromedp.Click(chromedp.CSS(`#search-form button[type=submit]`)))
	must(t, ctx, "wait for a result", ce, chromedp.WaitVisible(chromedp.CSS(`#results button[data-cid]`)))
	hit := must(t, ctx, "read the result", ce, chromedp.AttributeValue(chromedp.CSS(`#results button[data-cid]`), "data-cid"))
	must(t, ctx, "open the record", ce, chromedp.Click(chromedp.CSS(`#results button[data-cid]`)))
	must(t, ctx, "wait for the CIDs", ce, chromedp.WaitVisible(chromedp.CSS(`#cids tr.canonical`)))
	canonRow := must(t, ctx, "read the canonical row", ce, chromedp.AttributeValue(chromedp.CSS(`#cids tr.canonical`), "data-cid"))
	rows := must(t, ctx, "read the CID rows", ce, chromedp.Evaluate[[][]string](
		`[...document.querySelectorAll("#cids tbody tr")].map(r => [r.dataset.cid, r.querySelector(".tier").textContent])`))
	poll("wait for live updates", `document.getElementById("live-mode").textContent.startsWith("live")`)

	if peerID != st.PeerID {
		t.Errorf("peer ID shown %q, want %q", peerID, st.PeerID)
	}
	if hit.Value != canonical {
		t.Errorf("search hit CID %q, want %q", hit.Value, canonical)
	}
	if canonRow.Value != canonical {
		t.Errorf("highlighted CID %q, want the canonical %q", canonRow.Value, canonical)
	}
	got := map[string]string{}
	for _, r := range rows {
		got[r[0]] = r[1]
	}
	for c, tier := range wantTiers {
		if tier == "" {
			continue // the input form of a CID listed normalised
		}
		if got[c] != tier {
			t.Errorf("CID %s shown with tier %q, want %q", c, got[c], tier)
		}
	}
	if len(got) != len(rows) || len(rows) < 2 {
		t.Errorf("CID rows %v: want every CID of the record once", rows)
	}

	// A file added while the page is open shows up through the live events
	// and moves the file count.
	added := filepath.Join(lib, "Live.Arrival.2020.mkv")
	if err := os.WriteFile(added, data[:20<<10], 0o644); err != nil {
		t.Fatal(err)
	}
	poll("wait for the new file's event", `document.getElementById("events").textContent.includes("Live.Arrival.2020.mkv")`)
	poll("wait for the file count", `document.getElementById("roots").textContent === "2"`)
	live := must(t, ctx, "read the update mode", ce, chromedp.TextContent(chromedp.CSS("#live-mode")))
	shot := must(t, ctx, "take a screenshot", ce, chromedp.FullScreenshot(100)) // quality 100: PNG
	p := filepath.Join(t.TempDir(), "web.png")
	if err := os.WriteFile(p, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes), updates %q", p, len(shot), live)
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestWeb_Token: off loopback the page asks for the API token once, says
// when a token is refused, keeps the accepted one for the session (a
// reload asks nothing) and works with it.
func TestWeb_Token(t *testing.T) {
	ctx, consoleErrors := browser(t)

	lib := t.TempDir()
	data := make([]byte, 24<<10)
	rand.Read(data)
	writeOld(t, filepath.Join(lib, "Quiet.Harbour.2015.mkv"), data)
	tokFile := filepath.Join(t.TempDir(), "token")
	const tok = "a-token-of-the-household-0123456789"
	if err := os.WriteFile(tokFile, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	n := startNodeWith(t, lib, func(cfg *node.Config) { cfg.APIAddr = "0.0.0.0:0"; cfg.APITokenFile = tokFile })
	_, port, err := net.SplitHostPort(n.APIAddr())
	if err != nil {
		t.Fatal(err)
	}
	base := "http://127.0.0.1:" + port + "/"
	ce := consoleErrors
	poll := func(what, js string) {
		t.Helper()
		must(t, ctx, what, ce, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(10*time.Second)))
	}
	submit := func(what, token string) {
		t.Helper()
		must(t, ctx, what, ce, chromedp.SendKeys(chromedp.CSS("#token"), token))
		must(t, ctx, what, ce, chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`)))
	}
	tokenAsked := `!document.getElementById("token-section").hidden`

	must(t, ctx, "load the page", ce, chromedp.Navigate(base))
	poll("wait for the token form", tokenAsked)
	if id := must(t, ctx, "read the peer ID", ce, chromedp.TextContent(chromedp.CSS("#peer-id"))); id != "" {
		t.Errorf("peer ID %q shown before a token was given", id)
	}
	submit("give a wrong token", "not-the-token")
	poll("wait for the refusal", tokenAsked+` && document.getElementById("token-why").textContent.includes("refused")`)
	submit("give the token", tok)
	poll("wait for the node's peer ID", `document.getElementById("peer-id").textContent !== ""`)
	if stored := must(t, ctx, "read sessionStorage", ce, chromedp.Evaluate[string](`sessionStorage.getItem("metamesh.token")`)); stored != tok {
		t.Errorf("sessionStorage holds %q, want the token", stored)
	}
	poll("wait for polled updates", `document.getElementById("live-mode").textContent.includes("token")`)

	must(t, ctx, "type a title", ce, chromedp.SendKeys(chromedp.CSS("#q"), "quiet harbour"))
	must(t, ctx, "search", ce, chromedp.Click(chromedp.CSS(`#search-form button[type=submit]`)))
	must(t, ctx, "wait for a result", ce, chromedp.WaitVisible(chromedp.CSS(`#results button[data-cid]`)))
	must(t, ctx, "open the record", ce, chromedp.Click(chromedp.CSS(`#results button[data-cid]`)))
	must(t, ctx, "wait for the CIDs", ce, chromedp.WaitVisible(chromedp.CSS(`#cids tr.canonical`)))

	// A reload keeps the token: the page asks nothing and answers.
	must(t, ctx, "reload the page", ce, chromedp.Navigate(base))
	poll("wait for the node's peer ID after a reload", `document.getElementById("peer-id").textContent !== ""`)
	if asked := must(t, ctx, "look for the token form", ce, chromedp.Evaluate[bool](tokenAsked)); asked {
		t.Error("the page asked for the token again after a reload")
	}
	var errs []string
	for _, e := range consoleErrors() {
		if !strings.Contains(e, "401") { // the refused requests before the token
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}
