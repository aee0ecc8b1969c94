package node_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/node"
)

// TestWeb_PeerFile: on the page of a household that has a file only from
// peers, the record asks where its bytes can come from. A household that
// shares it (--share-files) sends them: the record says from which, the
// player plays it (fetched through this node) and Download links GET
// /api/file with the file's bytes. A household that does not share:
// the record says so in words, with neither player nor Download. What the
// other answers (a relay only, unreachable, no answer) read as, and a
// node that wants its token for peers' files, are the page's words fed
// those answers.
func TestWeb_PeerFile(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	lib := t.TempDir()
	clip := filepath.Join(lib, "Movies", "Shared Light (2021)", "Shared.Light.2021.webm")
	writeClip(t, clip, 30)
	sharing := startNodeWith(t, lib, func(c *node.Config) { c.ShareFiles = true; c.Name = "Sharing House" })
	quiet := t.TempDir()
	quietClip := filepath.Join(quiet, "Movies", "Kept Home (2019)", "Kept.Home.2019.webm")
	writeClip(t, quietClip, 20)
	notSharing := startNodeWith(t, quiet, func(c *node.Config) { c.Name = "Quiet House" })
	b := p2pNode(t, nil)
	for _, n := range []*node.Node{sharing, notSharing} {
		if err := connect(b, n); err != nil {
			t.Fatal(err)
		}
	}
	film, kept := canonicalOf(t, clip), canonicalOf(t, quietClip)
	for _, c := range []string{film, kept} {
		var doc api.Document
		getJSON(t, b, "/api/meta/"+c, &doc) // the record, from its household
	}
	data, err := os.ReadFile(clip)
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, b)

	// The sharing household's film plays and downloads.
	p.navigate("/?cid=" + film)
	p.waitList("the film's record", `l.record === "Shared Light"`)
	must(t, p.ctx, "wait for its household", p.ce, chromedp.Poll[bool](`document.getElementById("sources").textContent.startsWith("From ")`,
		chromedp.WithPollingTimeout(30*time.Second)))
	// The player comes once the node said what this browser plays.
	must(t, p.ctx, "wait for the player", p.ce, chromedp.Poll[bool](`!!document.querySelector("#player video, #player button")`,
		chromedp.WithPollingTimeout(30*time.Second)))
	got := must(t, p.ctx, "read the record", p.ce, chromedp.Evaluate[map[string]any](`({
	  notice: !document.getElementById("peer-only").hidden,
	  sources: document.getElementById("sources").textContent,
	  peers: [...document.querySelectorAll("#sources [data-peer]")].map((c) => c.dataset.peer + " " + c.title),
	  download: !document.getElementById("download-part").hidden,
	  href: document.getElementById("download").getAttribute("href"),
	  label: document.getElementById("download").textContent,
	  video: (document.querySelector("#player video") || {}).src || "",
	})`))
	sid := sharing.PeerID()
	if got["notice"] != true || got["sources"] != "From 1 household that shares it: Sharing House …"+sid[len(sid)-8:]+"." {
		t.Errorf("notice shown %v, saying %q; want where the bytes come from", got["notice"], got["sources"])
	}
	if ps, _ := got["peers"].([]any); len(ps) != 1 || ps[0] != sid+" "+sid {
		t.Errorf("the sharing household shown as %v, want %s", ps, sid)
	}
	if got["download"] != true || got["href"] != "/api/file/"+film || !strings.HasPrefix(got["label"].(string), "Download (") {
		t.Errorf("Download shown %v, href %v, %q; want /api/file/%s with the size", got["download"], got["href"], got["label"], film)
	}
	if v, _ := got["video"].(string); !strings.HasSuffix(v, "/api/file/"+film) {
		t.Errorf("the player plays %q, want /api/file/%s", v, film)
	}
	must(t, p.ctx, "play the film", p.ce, chromedp.Poll[bool](`(() => {
	  const v = document.querySelector("#player video");
	  if (v.paused) { v.muted = true; v.play().catch(() => {}); }
	  return v.readyState >= 2 && v.currentTime > 0; })()`, chromedp.WithPollingTimeout(30*time.Second)))
	must(t, p.ctx, "seek into the film", p.ce, chromedp.Poll[bool](`(() => {
	  const v = document.querySelector("#player video");
	  if (v.currentTime < 20) v.currentTime = 20;
	  return v.readyState >= 2 && v.currentTime >= 20; })()`, chromedp.WithPollingTimeout(30*time.Second)))
	n := p.eval("download the film", `(() => {
	  const x = new XMLHttpRequest();
	  x.open("GET", document.getElementById("download").href, false);
	  x.overrideMimeType("text/plain; charset=x-user-defined");
	  x.send();
	  return x.status + " " + x.responseText.length; })()`)
	if want := "200 " + strconv.Itoa(len(data)); n != want {
		t.Errorf("Download answers %s, want %s bytes", n, want)
	}
	p.screenshot("peer-file-shared")

	// The household that does not share: why not, in words.
	p.navigate("/?cid=" + kept)
	p.waitList("the other film's record", `l.record === "Kept Home"`)
	must(t, p.ctx, "wait for the answer", p.ce, chromedp.Poll[bool](`document.getElementById("sources").textContent.startsWith("It cannot")`,
		chromedp.WithPollingTimeout(30*time.Second)))
	got = must(t, p.ctx, "read the record", p.ce, chromedp.Evaluate[map[string]any](`({
	  sources: document.getElementById("sources").textContent,
	  peers: [...document.querySelectorAll("#sources [data-peer]")].map((c) => c.dataset.peer),
	  download: !document.getElementById("download-part").hidden,
	  player: document.getElementById("player").children.length,
	})`))
	qid := notSharing.PeerID()
	if want := "It cannot be played or downloaded here: the household Quiet House …" + qid[len(qid)-8:] + " does not share its files (it does not run --share-files)."; got["sources"] != want {
		t.Errorf("the record says %q, want %q", got["sources"], want)
	}
	if ps, _ := got["peers"].([]any); len(ps) != 1 || ps[0] != qid {
		t.Errorf("the household shown %v, want %s", ps, qid)
	}
	if got["download"] != false || got["player"] != float64(0) {
		t.Errorf("Download shown %v, player %v: want neither", got["download"], got["player"])
	}
	p.screenshot("peer-file-not-shared")

	// The other answers, in words.
	words := func(src string) string {
		t.Helper()
		return p.eval("phrase "+src, `(() => { const e = document.createElement("p"); e.append(...unavailableWords(`+src+`)); return e.textContent; })()`)
	}
	const a, c, d = "12D3KooWAaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaRelayAAA", "12D3KooWCcccccccccccccccccccccccccccccccccccccRelayCCC", "12D3KooWDddddddddddddddddddddddddddddddddddddddGoneDDDD"
	const lead = "It cannot be played or downloaded here: "
	for src, want := range map[string]string{
		`{providers: [{peer: "` + a + `", state: "relayed"}]}`: lead + "the household …RelayAAA is reached only through a relay, which carries too little for a file: its bytes need a direct connection.",
		`{providers: [{peer: "` + a + `", state: "relayed"}, {peer: "` + c + `", state: "relayed"}, {peer: "` + d + `", state: "unreachable"}]}`: lead +
			"the households …RelayAAA and …RelayCCC are reached only through a relay, which carries too little for a file: their bytes need a direct connection; the household …GoneDDDD could not be reached.",
		`{providers: [{peer: "` + d + `", state: "no answer"}, {peer: "` + a + `", state: "does not share"}]}`: lead +
			"the household …RelayAAA does not share its files (it does not run --share-files); the household …GoneDDDD did not answer.",
		`{providers: [{peer: "` + d + `", state: "busy"}], reason: "no household served it"}`: lead + "no household served it.",
	} {
		if got := words(src); got != want {
			t.Errorf("%s reads\n%q, want\n%q", src, got, want)
		}
	}

	// A node that wants its token for peers' files (a stranger on a
	// --public-read API: 401 or 403), as the node answers it.
	p.eval("answer /api/sources with a 403", `(() => {
	  const f = window.fetch;
	  window.fetch = (u, o) => String(u).startsWith("/api/sources/") ? Promise.resolve(new Response(JSON.stringify({ error: "fetching files from other households is for this household's own clients" }), { status: 403 })) : f(u, o);
	  go({ cid: "`+film+`" });
	  return "ok"; })()`)
	must(t, p.ctx, "wait for the token's sentence", p.ce, chromedp.Poll[bool](`document.getElementById("sources").textContent.includes("needs this node's API token")`,
		chromedp.WithPollingTimeout(10*time.Second)))
	got = must(t, p.ctx, "read the record", p.ce, chromedp.Evaluate[map[string]any](`({
	  download: !document.getElementById("download-part").hidden,
	  player: document.getElementById("player").children.length,
	})`))
	if got["download"] != false || got["player"] != float64(0) {
		t.Errorf("without the token: Download shown %v, player %v; want neither", got["download"], got["player"])
	}
	p.noConsoleErrors()
}
