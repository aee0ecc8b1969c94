package node_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
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

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store/storetest"
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
// console errors, uncaught exceptions and browser log errors; the test's
// browsing ends at the guard of every wait (waiting.Guard).
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	return browserFor(t, waiting.Guard)
}

// browserFor is browser for a test that browses for up to d, with more
// options of the browser's (a profile's directory: chromedp.UserDataDir).
func browserFor(t *testing.T, d time.Duration, more ...chromedp.ExecAllocatorOption) (context.Context, func() []string) {
	t.Helper()
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.WindowSize(1200, 900))
	opts = append(opts, more...)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	ctx, tcancel := context.WithTimeout(ctx, d)
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
	t.Parallel()
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
	// A peer's record pairs the file with a CID of its own making: the page
	// shows it learned from that peer, and keeps the file's canonical CID.
	sha, _ := doc["cids"].([]any)
	madeUp := "bafybeihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"
	const rumour = "12D3KooWRumourRumourRumourRumourRumourRumourRumour"
	var shaCID string
	for _, c := range sha {
		if s, _ := c.(string); strings.HasPrefix(s, "bafkrei") {
			shaCID = s
		}
	}
	if _, err := n.Store().MergeRecord(context.Background(), rumour, []string{shaCID, madeUp}, nil); err != nil {
		t.Fatal(err)
	}
	_, body = do(t, n, "GET", "/api/meta/"+canonical+"?local=1", nil)
	doc = map[string]any{}
	if err := json.Unmarshal(body, &doc); err != nil || doc["canonical_cid"] != canonical {
		t.Fatalf("GET /api/meta after a peer's record: %s (%v)", body, err)
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

	// A federated search says whom it asked: nobody here (no peer, no
	// household in the index).
	must(t, ctx, "search federated", ce, chromedp.Navigate(base+"?q=zebra+crossing&federated=1"))
	poll("wait for the federated search's line", `document.getElementById("search-status").textContent.includes("(asked 0 households, 0 through the search index; 0 households answered)")`)
	must(t, ctx, "load the page again", ce, chromedp.Navigate(base))
	poll("wait for the node's peer ID again", `document.getElementById("peer-id").textContent !== ""`)

	must(t, ctx, "type a title", ce, chromedp.SendKeys(chromedp.CSS("#q"), "zebra crossing"))
	must(t, ctx, "search", ce, chromedp.Click(chromedp.CSS(`#search-form button[type=submit]`)))
	must(t, ctx, "wait for a result", ce, chromedp.WaitVisible(chromedp.CSS(`#results a[data-cid]`)))
	hit := must(t, ctx, "read the result", ce, chromedp.AttributeValue(chromedp.CSS(`#results a[data-cid]`), "data-cid"))
	must(t, ctx, "open the record", ce, chromedp.Click(chromedp.CSS(`#results a[data-cid]`)))
	must(t, ctx, "wait for the CIDs", ce, chromedp.WaitVisible(chromedp.CSS(`#cids tr.canonical`)))
	canonRow := must(t, ctx, "read the canonical row", ce, chromedp.AttributeValue(chromedp.CSS(`#cids tr.canonical`), "data-cid"))
	rows := must(t, ctx, "read the CID rows", ce, chromedp.Evaluate[[][]string](
		`[...document.querySelectorAll("#cids tbody tr")].map(r => [r.dataset.cid, r.querySelector(".tier").textContent])`))
	poll("wait for live updates", `document.getElementById("live-mode").textContent.startsWith("live")`)
	note := must(t, ctx, "read the learned CID's note", ce, chromedp.Evaluate[string](
		`(document.querySelector('#cids tr[data-cid="`+madeUp+`"] .learned') || {}).textContent || ""`))
	if !strings.Contains(note, "1 peer's record") || !strings.Contains(note, "…"+rumour[len(rumour)-8:]) {
		t.Errorf("the made-up CID's row says %q, want it learned from %s", note, rumour)
	}

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

// startTokenNode starts a node off loopback (0.0.0.0) with a known
// token, on a library of one film, and says its token and API port.
func startTokenNode(t *testing.T) (n *node.Node, tok, port string) {
	t.Helper()
	lib := t.TempDir()
	data := make([]byte, 24<<10)
	rand.Read(data)
	writeOld(t, filepath.Join(lib, "Quiet.Harbour.2015.mkv"), data)
	tokFile := filepath.Join(t.TempDir(), "token")
	tok = "a-token-of-the-household-0123456789"
	if err := os.WriteFile(tokFile, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	n = startNodeWith(t, lib, func(cfg *node.Config) { cfg.APIAddr = "0.0.0.0:0"; cfg.APITokenFile = tokFile })
	_, port, err := net.SplitHostPort(n.APIAddr())
	if err != nil {
		t.Fatal(err)
	}
	return n, tok, port
}

// TestWeb_Token: off loopback the page asks for the API token once, says
// when a token is refused, keeps the accepted one for the session (a
// reload asks nothing) and works with it.
func TestWeb_Token(t *testing.T) {
	t.Parallel()
	ctx, consoleErrors := browser(t)

	_, tok, port := startTokenNode(t)
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
	must(t, ctx, "wait for a result", ce, chromedp.WaitVisible(chromedp.CSS(`#results a[data-cid]`)))
	must(t, ctx, "open the record", ce, chromedp.Click(chromedp.CSS(`#results a[data-cid]`)))
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

// getJSON decodes the answer of GET path on n into v.
func getJSON(t testing.TB, n *node.Node, path string, v any) {
	t.Helper()
	resp, body := do(t, n, "GET", path, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s %s", path, resp.Status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %s (%v)", path, body, err)
	}
}

// webPeer is a peer as the page shows it.
type webPeer struct {
	ID, Connection, Transport string
	How                       string // the line under the ID: connection, relay, transport, latency
	Relay                     string // the relay's ID shown, if any
	Addrs                     string // the folded addresses' summary
}

// webRelay is a relay as the page shows it.
type webRelay struct {
	ID, Reserved, Expires string
	State, Error          string // the lines under the ID
	Circuits              []string
}

// webNode is what the page's node panel shows.
type webNode struct {
	Summary, Reachability, ReachabilityText, RelayService, Sharing string
	Reachable                                                      []string
	Peers                                                          []webPeer
	Relays                                                         []webRelay
}

// readNode reads the node panel; in an evaluation of its own, or after
// js in the same one (nothing can render in between).
const readNode = `(() => {
  const text = (e) => e ? e.textContent.replace(/\s+/g, " ").trim() : "";
  return {
    summary: text(document.getElementById("summary")),
    reachability: document.getElementById("reachability").dataset.reachability || "",
    reachabilityText: text(document.getElementById("reachability")),
    relayService: text(document.getElementById("relay-service")),
    sharing: text(document.getElementById("sharing")),
    reachable: [...document.querySelectorAll("#reachable-addrs code")].map(text),
    peers: [...document.querySelectorAll("#peers li[data-peer]")].map((li) => ({
      id: li.dataset.peer, connection: li.dataset.connection, transport: li.dataset.transport,
      how: text(li.querySelector("div")), relay: text(li.querySelector("code.relay")), addrs: text(li.querySelector("summary")),
    })),
    relays: [...document.querySelectorAll("#relays li[data-relay]")].map((li) => ({
      id: li.dataset.relay, reserved: li.dataset.reserved,
      expires: (li.querySelector("time") || { dateTime: "" }).dateTime,
      state: text(li.querySelector("div")), error: text(li.querySelector(".error")),
      circuits: [...li.querySelectorAll(".circuits code")].map(text),
    })),
  };
})()`

// TestWeb_PeersAndReachability: the node panel of B, which holds a
// reservation with the relay R and has C connected only through R,
// shows each peer's connection (R direct, C relayed via R) and
// transport, B's reachability as /api/status says it, its reachable
// addresses, the relay with the reservation's expiry and the circuit
// addresses, and the relay service off; the summary counts in words
// ("1 local file", "2 peers"). Then the page's renderers, fed a public
// relay's status and a lone peer, show what loopback nodes cannot be:
// confirmed addresses, a refused reservation and its error, the relay
// service on, "1 peer".
func TestWeb_PeersAndReachability(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	// The three nodes' logs, at debug, are shown if C never reaches B
	// through R: what the relay, the reservation and the dials said.
	var rLog, bLog, cLog storetest.Buffer
	logTo := func(w *storetest.Buffer) *slog.Logger {
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	lib := t.TempDir()
	data := make([]byte, 24<<10)
	rand.Read(data)
	writeOld(t, filepath.Join(lib, "North.Wind.2018.mkv"), data)
	r, b, c := relayedTrio(t, lib,
		func(cfg *node.Config) { cfg.Logger = logTo(&rLog) },
		func(cfg *node.Config) { cfg.Logger = logTo(&bLog) },
		func(cfg *node.Config) { cfg.Logger = logTo(&cLog) })
	var peers struct {
		Peers []api.Peer `json:"peers"`
	}
	relayed := func() bool {
		getJSON(t, b, "/api/peers", &peers)
		return slices.ContainsFunc(peers.Peers, func(p api.Peer) bool { return p.ID == c.PeerID() && p.Connection == "relayed" })
	}
	// A relayed bootstrap retries with a doubling backoff (1 s, 2 s, 4 s,
	// …): on a loaded machine whose first dials fail it may take more
	// than half a minute.
	waiting.Until(t, "C connected to B through R", func() string {
		if relayed() {
			return ""
		}
		return fmt.Sprintf("B's peers %+v\n--- R (%s):\n%s\n--- B (%s):\n%s\n--- C (%s):\n%s",
			peers.Peers, r.PeerID(), lastLines(rLog.String(), 80), b.PeerID(), lastLines(bLog.String(), 120), c.PeerID(), lastLines(cLog.String(), 120))
	}, waiting.Every(50*time.Millisecond))
	var st api.Status
	getJSON(t, b, "/api/status", &st)

	ctx, consoleErrors := browser(t)
	ce := consoleErrors
	must(t, ctx, "load the page", ce, chromedp.Navigate("http://"+b.APIAddr()+"/"))
	must(t, ctx, "wait for the relayed peer", ce, chromedp.Poll[bool](
		`document.querySelector('#peers li[data-peer="`+c.PeerID()+`"][data-connection="relayed"]') !== null &&
		 document.querySelector('#relays li[data-relay="`+r.PeerID()+`"][data-reserved="true"]') !== null`,
		chromedp.WithPollingTimeout(10*time.Second)))
	got := must(t, ctx, "read the node panel", ce, chromedp.Evaluate[webNode](readNode))

	if !slices.Contains([]string{"public", "private", "unknown"}, st.Reachability) {
		t.Errorf("/api/status reachability %q, want public, private or unknown", st.Reachability)
	}
	if got.Reachability != st.Reachability || !strings.HasPrefix(got.ReachabilityText, st.Reachability) {
		t.Errorf("reachability shown %q (%q), /api/status says %q", got.Reachability, got.ReachabilityText, st.Reachability)
	}
	if !slices.Equal(got.Reachable, st.ReachableAddrs) {
		t.Errorf("reachable addresses shown %q, want %q", got.Reachable, st.ReachableAddrs)
	}
	byID := map[string]webPeer{}
	for _, p := range got.Peers {
		byID[p.ID] = p
	}
	if p := byID[r.PeerID()]; p.Connection != "direct" || p.Transport != "tcp" || !strings.HasPrefix(p.How, "direct · tcp") || strings.Contains(p.How, "via") || p.Relay != "" {
		t.Errorf("the relay R shown as %+v, want direct over tcp", p)
	}
	if p := byID[c.PeerID()]; p.Connection != "relayed" || p.Transport != "tcp" || p.Relay != r.PeerID() ||
		!strings.HasPrefix(p.How, "relayed via "+r.PeerID()+" · tcp") || p.Addrs != "1 address" {
		t.Errorf("C shown as %+v, want relayed via %s over tcp", p, r.PeerID())
	}
	if len(got.Relays) != 1 {
		t.Fatalf("relays shown %+v, want R", got.Relays)
	}
	rl := got.Relays[0]
	if rl.ID != r.PeerID() || rl.Reserved != "true" || rl.Expires != st.Relays[0].Expires || !strings.HasPrefix(rl.State, "reserved until ") || rl.Error != "" ||
		!slices.Equal(rl.Circuits, st.Relays[0].Addrs) {
		t.Errorf("relay shown %+v, want %+v", rl, st.Relays[0])
	}
	if got.RelayService != "off" {
		t.Errorf("relay service shown %q, want off", got.RelayService)
	}
	if !strings.HasPrefix(got.Sharing, "off (") {
		t.Errorf("sharing shown %q, want off", got.Sharing)
	}
	if !strings.Contains(got.Summary, " 1 local file · 0 known from peers · 2 peers") {
		t.Errorf("summary %q, want 1 local file and 2 peers", got.Summary)
	}

	// What loopback cannot show, through the page's own renderers.
	fed := st
	fed.Reachability, fed.ReachableAddrs, fed.RelayService, fed.Peers = "public", []string{"/ip4/198.51.100.9/tcp/4681", "/ip4/198.51.100.9/udp/4681/quic-v1"}, true, 1
	fed.Relays = []api.Relay{{ID: r.PeerID(), Error: "reservation refused: RESERVATION_REFUSED"}}
	lone := []api.Peer{{ID: c.PeerID(), Addrs: []string{"/ip4/192.168.1.20/udp/4681/quic-v1"}, Connection: "direct", Transport: "quic-v1", LatencyMs: 1.5}}
	stJSON, _ := json.Marshal(fed)
	peersJSON, _ := json.Marshal(lone)
	got = must(t, ctx, "render a public relay's status", ce, chromedp.Evaluate[webNode](
		"renderStatus("+string(stJSON)+"); renderPeers("+string(peersJSON)+"); "+readNode))
	if got.Reachability != "public" || !slices.Equal(got.Reachable, fed.ReachableAddrs) || got.RelayService != "on (relays for other peers)" {
		t.Errorf("public status shown as %+v", got)
	}
	if len(got.Relays) != 1 || got.Relays[0].Reserved != "false" || got.Relays[0].State != "not reserved" ||
		got.Relays[0].Error != "last error: reservation refused: RESERVATION_REFUSED" || len(got.Relays[0].Circuits) != 0 {
		t.Errorf("refused relay shown as %+v", got.Relays)
	}
	if len(got.Peers) != 1 || got.Peers[0].Transport != "quic-v1" || got.Peers[0].How != "direct · quic-v1 · 1.5 ms" || got.Peers[0].Addrs != "1 address" {
		t.Errorf("lone peer shown as %+v", got.Peers)
	}
	if !strings.Contains(got.Summary, " 1 local file · 0 known from peers · 1 peer") || strings.Contains(got.Summary, "1 peers") {
		t.Errorf("summary %q, want 1 local file and 1 peer", got.Summary)
	}
	shot := must(t, ctx, "take a screenshot", ce, chromedp.FullScreenshot(100))
	p := filepath.Join(t.TempDir(), "web-peers.png")
	if err := os.WriteFile(p, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
