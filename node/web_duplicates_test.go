package node_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/metamesh/node/internal/waiting"
)

// webDupes is the Duplicates view as the page shows it.
type webDupes struct {
	URL    string     // location.search
	View   string     // the library's view tab marked current
	By     string     // the grouping tab marked current
	Shown  bool       // the view is on screen
	Status string     // what the view counts
	Groups []string   // each group's caption
	Rows   [][]string // each group's rows, their cells joined by " | "
	Pager  string     // "Page n of m", "" when hidden
	Record string     // the open record's title, "" when none is open
	Busy   bool
}

const readDupes = `(() => {
  const text = (e) => e ? e.textContent.replace(/\s+/g, " ").trim() : "";
  const cur = document.querySelector("#views a[aria-current]");
  const by = document.querySelector("#dupes-by a[aria-current]");
  const groups = [...document.querySelectorAll("#dupe-groups .dupe-group")];
  return {
    url: location.search,
    view: cur ? cur.dataset.view : "",
    by: by ? by.dataset.by : "",
    shown: !document.getElementById("dupes").hidden,
    status: text(document.getElementById("dupes-status")),
    groups: groups.map((g) => text(g.querySelector("caption"))),
    rows: groups.map((g) => [...g.querySelectorAll("tbody tr")].map((tr) => [...tr.cells].map(text).join(" | "))),
    pager: document.getElementById("dupes-pager").hidden ? "" : text(document.getElementById("dupes-page-of")),
    record: document.getElementById("record").hidden || document.getElementById("record-body").hidden ? "" : text(document.getElementById("record-title")),
    busy: document.getElementById("dupes").hasAttribute("aria-busy"),
  };
})()`

// waitDupes waits until the view is not loading and reads as cond (a JS
// expression over d, the readDupes object), and returns what it read.
func (p *webPage) waitDupes(what, cond string) webDupes {
	p.t.Helper()
	js := `(() => { const d = ` + readDupes + `; return !d.busy && (` + cond + `); })()`
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		got, _ := chromedp.Run(p.ctx, chromedp.Evaluate[webDupes](readDupes))
		p.t.Fatalf("%s: %v; the page shows %+v (console errors: %q)", what, err, got, p.ce())
	}
	return must(p.t, p.ctx, "read the duplicates", p.ce, chromedp.Evaluate[webDupes](readDupes))
}

// TestWeb_Duplicates: the library's Duplicates tab shows the file held
// under two paths; its title tab the film and the episode held as two
// files each, their encodings side by side; each tab and page is in the
// URL; a copy opens its file's record, and closing it comes back.
func TestWeb_Duplicates(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	lib := t.TempDir()
	writeDuplicatesLibrary(t, lib)
	n := startNodeWith(t, lib, nil)
	waiting.For(t, "the catalog's load", func() bool {
		return duplicates(t, n, "by=title").Total == 2 && duplicates(t, n, "by=content").Total == 1
	})
	p := openPage(t, n)

	p.navigate("/")
	p.waitList("the recently added files", `l.entries.length === 6`)
	p.click("open the Duplicates tab", `#views a[data-view=duplicates]`)
	d := p.waitDupes("the file under two paths", `d.shown && d.groups.length === 1`)
	if d.URL != "?view=duplicates" || d.View != "duplicates" || d.By != "content" ||
		d.Groups[0] != "Lone Lighthouse (2011): 2 copies, 9.8 KiB wasted" || len(d.Rows[0]) != 2 ||
		!strings.HasPrefix(d.Status, "1 file under several paths") || d.Pager != "" {
		t.Errorf("by content: %+v", d)
	}
	for _, r := range d.Rows[0] {
		if !strings.Contains(r, "Lone") || !strings.HasSuffix(r, "| 9.8 KiB") {
			t.Errorf("by content: row %q, want a path and its size", r)
		}
	}
	if p.eval("is the library's list hidden", `String(getComputedStyle(document.getElementById("entries")).display === "none")`) != "true" {
		t.Errorf("the library's list shows under the Duplicates view")
	}

	p.click("open the title tab", `#dupes-by a[data-by=title]`)
	d = p.waitDupes("the works held twice", `d.by === "title" && d.groups.length === 2`)
	film := []string{
		lib + "/Movies/Quiet.Harbour.2015.1080p.x264.mkv | 7.8 KiB | 1080p | H.264 | – | –",
		lib + "/Movies/Quiet Harbour (2015)/Quiet Harbour.720p.mkv | 5.9 KiB | 720p | – | – | –",
	}
	if want := []string{"Quiet Harbour (2015): 2 copies, 5.9 KiB wasted", "Grey Coast S01E02: 2 copies, 2.9 KiB wasted"}; !eq(d.Groups, want) ||
		d.URL != "?view=duplicates&by=title" || !eq(d.Rows[0], film) || len(d.Rows[1]) != 2 || !strings.Contains(d.Rows[1][0], "H.265") {
		t.Errorf("by title: %+v, want groups %q, the film's rows %q", d, want, film)
	}
	p.screenshot("duplicates-by-title")

	p.click("open the larger copy's record", `#dupe-groups a.copy`)
	d = p.waitDupes("the copy's record", `d.record !== "" && !d.shown`)
	if !strings.Contains(d.URL, "cid=") || !strings.Contains(d.URL, "by=title") {
		t.Errorf("the record: %+v, want the copy's CID in the URL over the title tab", d)
	}
	p.click("close the record", `#close-record`)
	d = p.waitDupes("the groups again", `d.shown && d.groups.length === 2 && d.record === ""`)
	if d.URL != "?view=duplicates&by=title" {
		t.Errorf("after closing: %+v", d)
	}

	p.navigate("/?view=duplicates&by=title&limit=1")
	d = p.waitDupes("the first page of one group", `d.shown && d.groups.length === 1 && d.pager !== ""`)
	if d.Pager != "Page 1 of 2" || !strings.HasPrefix(d.Groups[0], "Quiet Harbour") {
		t.Errorf("page 1: %+v", d)
	}
	p.click("turn the page", `#dupes-next`)
	d = p.waitDupes("the second page", `d.url.includes("page=2") && d.groups.length === 1 && d.groups[0].startsWith("Grey")`)
	if d.Pager != "Page 2 of 2" || d.URL != "?view=duplicates&by=title&page=2&limit=1" {
		t.Errorf("page 2: %+v", d)
	}
	p.noConsoleErrors()
}
