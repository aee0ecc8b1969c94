package node_test

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// webList is the library list as the page shows it.
type webList struct {
	URL     string   // location.search
	View    string   // the view tab marked current
	Crumbs  string   // the trail of a show's lists
	Status  string   // what the list counts
	Entries []string // each entry's title link
	Sources []string // each entry's source: local or peer
	Pager   string   // "Page n of m", "" when hidden
	Search  bool     // the search results are shown instead
	Record  string   // the open record's title, "" when none is open
	Busy    bool     // a list is loading
}

const readList = `(() => {
  const text = (e) => e ? e.textContent.replace(/\s+/g, " ").trim() : "";
  const cur = document.querySelector("#views a[aria-current]");
  return {
    url: location.search,
    view: cur ? cur.dataset.view : "",
    crumbs: document.getElementById("crumbs").hidden ? "" : text(document.getElementById("crumbs")),
    status: text(document.getElementById("library-status")),
    entries: [...document.querySelectorAll("#entries li a.title")].map(text),
    sources: [...document.querySelectorAll("#entries li")].map((li) => li.dataset.source || ""),
    pager: document.getElementById("pager").hidden ? "" : text(document.getElementById("page-of")),
    search: document.getElementById("library").hidden,
    record: document.getElementById("record").hidden || document.getElementById("record-body").hidden ? "" : text(document.getElementById("record-title")),
    busy: document.getElementById("library").hasAttribute("aria-busy"),
  };
})()`

// webPage drives the page of one node in one browser.
type webPage struct {
	t     *testing.T
	ctx   context.Context
	ce    func() []string
	base  string
	width int // the window's, in CSS pixels
}

func openPage(t *testing.T, n *node.Node) *webPage {
	t.Helper()
	ctx, ce := browserFor(t, 90*time.Second)
	return &webPage{t: t, ctx: ctx, ce: ce, base: "http://" + n.APIAddr(), width: 1200}
}

// resize makes the window w × h CSS pixels (390 wide: a phone's).
func (p *webPage) resize(w, h int) {
	p.t.Helper()
	must(p.t, p.ctx, fmt.Sprintf("resize to %d × %d", w, h), p.ce, chromedp.EmulateViewport(int64(w), int64(h)))
	p.width = w
}

func (p *webPage) navigate(path string) {
	p.t.Helper()
	must(p.t, p.ctx, "load "+path, p.ce, chromedp.Navigate(p.base+path))
}

func (p *webPage) click(what, sel string) {
	p.t.Helper()
	must(p.t, p.ctx, what, p.ce, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// waitList waits until no list is loading and the page reads as cond (a
// JS expression over l, the readList object), and returns what it read.
func (p *webPage) waitList(what, cond string) webList {
	p.t.Helper()
	js := `(() => { const l = ` + readList + `; return !l.busy && (` + cond + `); })()`
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		got, _ := chromedp.Run(p.ctx, chromedp.Evaluate[webList](readList))
		p.t.Fatalf("%s: %v; the page shows %+v (console errors: %q)", what, err, got, p.ce())
	}
	return must(p.t, p.ctx, "read the list", p.ce, chromedp.Evaluate[webList](readList))
}

func (p *webPage) eval(what, js string) string {
	p.t.Helper()
	return must(p.t, p.ctx, what, p.ce, chromedp.Evaluate[string](js))
}

// screenshot takes a full-page screenshot, keeps it in the test's
// temporary directory and checks it is a real picture of the page: a
// PNG as wide as the window, of more than a few colours (text, not a
// blank page). With METAMESH_SCREENSHOTS set they are kept there, one
// folder a test (make test keeps them under .cache/screenshots), else in
// the test's temporary directory.
func (p *webPage) screenshot(name string) {
	p.t.Helper()
	shot := must(p.t, p.ctx, "take a screenshot", p.ce, chromedp.FullScreenshot(100))
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	b := img.Bounds()
	colours := map[color.RGBA]bool{}
	for y := b.Min.Y; y < b.Max.Y && len(colours) < 16; y += 3 {
		for x := b.Min.X; x < b.Max.X && len(colours) < 16; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			colours[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), uint8(a >> 8)}] = true
		}
	}
	if b.Dx() != p.width || b.Dy() < 400 || len(colours) < 16 {
		p.t.Errorf("screenshot %s: %dx%d of %d colours, want a page %d wide of text and lines", name, b.Dx(), b.Dy(), len(colours), p.width)
	}
	dir := p.t.TempDir()
	if keep := os.Getenv("METAMESH_SCREENSHOTS"); keep != "" {
		dir = filepath.Join(keep, strings.ReplaceAll(p.t.Name(), "/", "-"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			p.t.Fatal(err)
		}
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("screenshot: %s (%d bytes)", path, len(shot))
}

func (p *webPage) noConsoleErrors() {
	p.t.Helper()
	if errs := p.ce(); len(errs) > 0 {
		p.t.Errorf("console errors: %q", errs)
	}
}

func eq(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }

// TestWeb_LibraryBrowse: the page opens on the recently added files;
// the Movies tab lists movies by title, the Shows tab the shows; a show
// opens its seasons, a season its episodes; each step is in the URL, and
// back and forward walk them; an entry opens its record (?cid=), with
// Download and a player for a local file.
func TestWeb_LibraryBrowse(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	lib := t.TempDir()
	writeLibrary(t, lib, "Movies/Zulu.1964.mkv", "Movies/Heat.1995.mkv", "Movies/Alien.1979.mkv",
		"TV/The Office/The.Office.S01E02.The.Alliance.mkv", "TV/The Office/The.Office.S01E01.Pilot.mkv",
		"TV/The Office/The.Office.S02E01.The.Dundies.mkv")
	n := startNodeWith(t, lib, nil)
	waiting.For(t, "the catalog's load", func() bool { return library(t, n, "").Total == 6 })
	p := openPage(t, n)

	p.navigate("/")
	l := p.waitList("the recently added files", `l.entries.length === 6`)
	if l.View != "recent" || l.URL != "" || l.Status != "6 media files" || l.Pager != "" || l.Record != "" {
		t.Errorf("recent: %+v", l)
	}
	p.screenshot("recent")

	p.click("open the Movies tab", `#views a[data-view=movies]`)
	l = p.waitList("the movies", `l.view === "movies" && l.entries.length === 3`)
	if want := []string{"Alien", "Heat", "Zulu"}; !eq(l.Entries, want) || l.URL != "?view=movies" || l.Status != "3 movies" {
		t.Errorf("movies: %+v, want %q", l, want)
	}
	p.screenshot("movies")

	p.click("open the Shows tab", `#views a[data-view=shows]`)
	l = p.waitList("the shows", `l.view === "shows" && l.entries.length === 1`)
	if !eq(l.Entries, []string{"The Office"}) || l.URL != "?view=shows" || l.Status != "1 show" {
		t.Errorf("shows: %+v", l)
	}
	shows := p.eval("read the show's counts", `document.querySelector("#entries li.show .muted").textContent`)
	if shows != "2 seasons · 3 episodes" {
		t.Errorf("the show's counts %q", shows)
	}
	p.screenshot("shows")

	p.click("open the show", `#entries a[data-show]`)
	l = p.waitList("the seasons", `l.crumbs !== "" && l.entries.length === 2`)
	if !eq(l.Entries, []string{"Season 1", "Season 2"}) || l.URL != "?show=the+office" || l.Crumbs != "Shows › The Office" || l.Status != "2 seasons" {
		t.Errorf("seasons: %+v", l)
	}
	p.screenshot("seasons")

	p.click("open season 1", `#entries a[data-season="1"]`)
	l = p.waitList("the episodes", `l.url.includes("season=1") && l.entries.length === 2`)
	if want := []string{"Episode 1: Pilot", "Episode 2: The Alliance"}; !eq(l.Entries, want) ||
		l.URL != "?show=the+office&season=1" || l.Crumbs != "Shows › The Office › Season 1" || l.Status != "2 episodes" {
		t.Errorf("episodes: %+v, want %q", l, want)
	}
	p.screenshot("episodes")

	// Back and forward walk the lists.
	must(t, p.ctx, "go back", p.ce, chromedp.NavigateBack())
	l = p.waitList("the seasons again", `l.url === "?show=the+office" && l.entries.length === 2`)
	must(t, p.ctx, "go back", p.ce, chromedp.NavigateBack())
	l = p.waitList("the shows again", `l.url === "?view=shows" && l.view === "shows" && l.entries.length === 1`)
	must(t, p.ctx, "go forward", p.ce, chromedp.NavigateForward())
	l = p.waitList("the seasons once more", `l.url === "?show=the+office" && l.entries.length === 2`)
	if l.Crumbs != "Shows › The Office" {
		t.Errorf("after forward: %+v", l)
	}

	// An entry opens its record; closing it (or back) keeps the list.
	p.click("open season 2", `#entries a[data-season="2"]`)
	p.waitList("season 2", `l.url.includes("season=2") && l.entries.length === 1`)
	ep := canonicalOf(t, filepath.Join(lib, "TV/The Office/The.Office.S02E01.The.Dundies.mkv"))
	p.click("open the episode", `#entries a[data-cid="`+ep+`"]`)
	l = p.waitList("the episode's record", `l.record !== ""`)
	if l.URL != "?show=the+office&season=2&cid="+ep || len(l.Entries) != 1 {
		t.Errorf("record over the episodes: %+v", l)
	}
	dl := p.eval("read the download link", `document.getElementById("download-part").hidden ? "" : document.getElementById("download").getAttribute("href")`)
	if dl != "/api/file/"+ep {
		t.Errorf("download link %q, want /api/file/%s", dl, ep)
	}
	if peerOnly := p.eval("read the peer-only notice", `String(!document.getElementById("peer-only").hidden)`); peerOnly != "false" {
		t.Error("a local file's record says it is known only from peers")
	}
	p.screenshot("episode-record")
	must(t, p.ctx, "go back", p.ce, chromedp.NavigateBack())
	l = p.waitList("the record closed", `l.record === "" && l.url === "?show=the+office&season=2"`)
	p.noConsoleErrors()
}

// TestWeb_LibraryLinks: what the URL says opens as it says, on load and
// reload: a page of a list (?view=movies&page=2), a search (?q=), a
// record (?cid=); the pager walks the pages.
func TestWeb_LibraryLinks(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	lib := t.TempDir()
	writeLibrary(t, lib, "Alpha.2001.mkv", "Bravo.2002.mkv", "Charlie.2003.mkv", "Delta.2004.mkv", "Echo.2005.mkv", "Inception.2010.mkv")
	n := startNodeWith(t, lib, nil)
	// Every file is in the catalog as soon as it is hashed; it is a
	// movie once its extraction (ffprobe, then the name) has landed too.
	waiting.For(t, "the catalog's load, every file a movie", func() bool { return library(t, n, "view=movies").Total == 6 })
	p := openPage(t, n)

	p.navigate("/?view=movies&limit=2&page=2")
	l := p.waitList("page 2 of the movies", `l.entries.length === 2`)
	if !eq(l.Entries, []string{"Charlie", "Delta"}) || l.Pager != "Page 2 of 3" || l.Status != "6 movies · page 2 of 3" || l.View != "movies" {
		t.Errorf("page 2: %+v", l)
	}
	p.screenshot("movies-page-2")
	p.click("turn the page", `#next`)
	l = p.waitList("page 3", `l.url === "?view=movies&page=3&limit=2" && l.entries.length === 2`)
	if !eq(l.Entries, []string{"Echo", "Inception"}) || l.Pager != "Page 3 of 3" {
		t.Errorf("page 3: %+v", l)
	}
	if next := p.eval("look at Next", `String(document.getElementById("next").hidden)`); next != "true" {
		t.Error("the last page offers Next")
	}
	must(t, p.ctx, "reload", p.ce, chromedp.Reload())
	l = p.waitList("page 3 after a reload", `l.entries.length === 2`)
	if !eq(l.Entries, []string{"Echo", "Inception"}) {
		t.Errorf("page 3 after a reload: %+v", l)
	}
	p.click("turn back a page", `#prev`)
	p.waitList("page 2 again", `l.url === "?view=movies&page=2&limit=2" && l.entries[0] === "Charlie"`)

	// A search from the URL runs, and its hit opens the record.
	p.navigate("/?q=inception")
	p.waitList("the search", `l.search && document.querySelectorAll("#results a[data-cid]").length === 1`)
	if q := p.eval("read the search box", `document.getElementById("q").value`); q != "inception" {
		t.Errorf("search box %q, want inception", q)
	}
	status := p.eval("read the search status", `document.getElementById("search-status").textContent`)
	if status != "1 result for “inception”." {
		t.Errorf("search status %q", status)
	}
	p.screenshot("search")
	inception := canonicalOf(t, filepath.Join(lib, "Inception.2010.mkv"))
	p.click("open the hit", `#results a[data-cid]`)
	l = p.waitList("the hit's record", `l.record === "Inception"`)
	if l.URL != "?q=inception&cid="+inception {
		t.Errorf("record from a search: %+v", l)
	}
	p.click("back to the library", `#back-to-library`)
	p.waitList("the library again", `!l.search && l.url === "" && l.entries.length === 6`)

	// A record by link.
	p.navigate("/?cid=" + inception)
	l = p.waitList("the record by link", `l.record === "Inception" && l.entries.length === 6`)
	p.screenshot("record-by-link")
	p.click("close the record", `#close-record`)
	p.waitList("the record closed", `l.record === "" && l.url === ""`)
	p.noConsoleErrors()
}

// TestWeb_PeerOnlyRecord: a file known only from a peer is in the list of
// files from other households (not the household's own lists), marked
// with its source; its record says so, names its providers (the
// peer, and what the DHT finds), and, since no household that has it can
// be reached (the peer is made up), says it cannot be played or
// downloaded and offers neither Download nor a player.
func TestWeb_PeerOnlyRecord(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	lib := t.TempDir()
	writeLibrary(t, lib, "Heat.1995.mkv")
	n := startNodeWith(t, lib, nil)
	peerID := farPeer
	far := "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"
	if _, err := n.Store().MergeRecord(context.Background(), peerID, []string{far}, map[string]string{
		"titles/eng": "Far Away", "movieYear": "2001", "fileType": "video", "mimeType": "video/mp4", "sizeByte": "7340032"}); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the peer's file in the catalog, loaded whole", func() bool {
		l := library(t, n, "view=peers")
		return l.Total == 1 && l.Files.Loaded
	})
	p := openPage(t, n)

	// The household's own films; the peer's in a view of its own.
	p.navigate("/?view=movies")
	if l := p.waitList("the movies", `l.entries.length === 1`); !eq(l.Entries, []string{"Heat"}) {
		t.Errorf("movies: %+v, want the household's own film alone", l)
	}
	p.navigate("/?view=peers")
	l := p.waitList("the files from other households", `l.entries.length === 1`)
	if !eq(l.Entries, []string{"Far Away"}) || !eq(l.Sources, []string{"peer"}) {
		t.Errorf("from other households: %+v", l)
	}
	// A peer that sent no name is shown by the end of its ID, the whole
	// ID in the title.
	source := p.eval("read the peer's file's source", `(() => { const s = document.querySelector('#entries li[data-source=peer] .source'); return s.textContent + "|" + s.querySelector("[data-peer]").title; })()`)
	if source != "known from a peer …"+peerID[len(peerID)-8:]+"|"+peerID {
		t.Errorf("source shown %q", source)
	}
	// The summary comes with the node's status, apart from the list.
	p.waitList("the summary", `document.getElementById("summary").textContent !== ""`)
	summary := p.eval("read the summary", `document.getElementById("summary").textContent`)
	if !strings.Contains(summary, " 1 local file · 1 known from peers · 0 peers") {
		t.Errorf("summary %q", summary)
	}
	p.click("open the peer's file", `#entries a[data-cid="`+far+`"]`)
	p.waitList("its record", `l.record === "Far Away" && document.getElementById("providers-status").textContent.startsWith("The DHT names") &&
	  !document.getElementById("sources").textContent.startsWith("Looking")`)
	got := must(t, p.ctx, "read the record", p.ce, chromedp.Evaluate[map[string]any](`({
	  notice: !document.getElementById("peer-only").hidden,
	  sources: document.getElementById("sources").textContent,
	  download: !document.getElementById("download-part").hidden,
	  player: document.getElementById("player").children.length,
	  providers: [...document.querySelectorAll("#providers [data-peer]")].map((c) => c.title),
	  summary: document.getElementById("record-summary").textContent,
	  dht: document.getElementById("providers-status").textContent,
	})`))
	if got["notice"] != true || got["download"] != false || got["player"] != float64(0) {
		t.Errorf("peer-only record: notice %v, download %v, player %v; want the notice, no download, no player", got["notice"], got["download"], got["player"])
	}
	if ps, _ := got["providers"].([]any); len(ps) != 1 || ps[0] != peerID {
		t.Errorf("providers %v, want %s", got["providers"], peerID)
	}
	if s, _ := got["summary"].(string); !strings.Contains(s, "known only from …"+peerID[len(peerID)-8:]) {
		t.Errorf("record summary %q", s)
	}
	if got["dht"] != "The DHT names 0 providers." {
		t.Errorf("DHT status %q", got["dht"])
	}
	if got["sources"] != "No household that has it is known now: it cannot be played or downloaded here." {
		t.Errorf("where its bytes come from: %q", got["sources"])
	}
	p.screenshot("peer-only-record")
	// GET /api/sources answers 404 (no household that has it is known),
	// which the browser logs.
	var errs []string
	for _, e := range p.ce() {
		if !strings.Contains(e, "404") || !strings.Contains(e, "/api/sources/"+far) {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestWeb_EmptyLibrary: with no files the page says how to add some (the
// library folder, make sample) and counts in words; a file copied in
// replaces the hint with the list.
func TestWeb_EmptyLibrary(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	lib := t.TempDir()
	n := startNodeWith(t, lib, nil)
	p := openPage(t, n)

	p.navigate("/")
	p.waitList("the hint", `!document.getElementById("empty-hint").hidden`)
	hint := p.eval("read the hint", `document.getElementById("empty-hint").textContent.replace(/\s+/g, " ")`)
	folders := p.eval("read the folders", `[...document.querySelectorAll("#empty-folders code")].map((c) => c.textContent).join("|")`)
	// The summary comes with the node's status, apart from the list.
	p.waitList("the summary", `document.getElementById("summary").textContent !== ""`)
	summary := p.eval("read the summary", `document.getElementById("summary").textContent`)
	if !strings.Contains(hint, "Copy videos into the library folder") || !strings.Contains(hint, "make sample") || folders != lib {
		t.Errorf("hint %q with folders %q, want the library folder %s and make sample", hint, folders, lib)
	}
	if !strings.Contains(summary, " 0 local files · 0 known from peers · 0 peers") {
		t.Errorf("summary %q", summary)
	}
	if st := p.eval("read the list status", `document.getElementById("library-status").textContent`); st != "" {
		t.Errorf("list status %q beside the hint", st)
	}
	p.screenshot("empty-library")

	writeLibrary(t, lib, "First.Film.2020.mkv")
	l := p.waitList("the first file", `document.getElementById("empty-hint").hidden && l.entries.length === 1`)
	if !eq(l.Entries, []string{"First Film"}) || l.Status != "1 media file" {
		t.Errorf("after the first file: %+v", l)
	}
	p.noConsoleErrors()
}
