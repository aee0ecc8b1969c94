package node_test

import (
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/metamesh/node/internal/waiting"
)

// TestWeb_Edit: a file's record has an Edit form holding its fields;
// saving a title and a kind shows them at once, marks them as edits, and
// the node keeps them; clearing the title brings back the name's.
func TestWeb_Edit(t *testing.T) {
	t.Parallel()
	ctx, ce := browser(t)
	lib := t.TempDir()
	data := make([]byte, 24<<10)
	rand.Read(data)
	path := filepath.Join(lib, "party_1964.mp4")
	writeOld(t, path, data)
	n := startNodeWith(t, lib, nil)
	cid := canonicalOf(t, path)
	base := "http://" + n.APIAddr() + "/"
	poll := func(what, js string) {
		t.Helper()
		must(t, ctx, what, ce, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(20*time.Second)))
	}

	must(t, ctx, "open the record", ce, chromedp.Navigate(base+"?cid="+cid))
	poll("wait for the Edit form", `!document.getElementById("edit").hidden && document.getElementById("edit-title").value !== ""`)
	if v := must(t, ctx, "read the title field", ce, chromedp.Evaluate[string](`document.getElementById("edit-title").value`)); v != "party" {
		t.Errorf("the form's title %q, want the name's, party", v)
	}
	must(t, ctx, "open Edit", ce, chromedp.Click(chromedp.CSS("#edit summary")))
	must(t, ctx, "set the title", ce, chromedp.SetValue(chromedp.ID("edit-title"), "Grandma's birthday"))
	must(t, ctx, "set the kind", ce, chromedp.SetValue(chromedp.ID("edit-videoType"), "other"))
	must(t, ctx, "save", ce, chromedp.Click(chromedp.CSS("#edit-form button[type=submit]")))
	poll("wait for the new title", `document.getElementById("record-title").textContent.includes("Grandma's birthday")`)
	poll("wait for the edited marks", `document.getElementById("edit-title").closest("label").classList.contains("edited") &&
		document.getElementById("edit-videoType").closest("label").classList.contains("edited")`)

	_, body := do(t, n, "GET", "/api/meta/"+cid, nil)
	if got := strings.Join(edited(t, body), " "); got != "titles/eng videoType" {
		t.Errorf("the node's edited fields %q after the page saved", got)
	}

	// A home video leaves Movies for its own view.
	inView := func(view string) bool {
		_, body := do(t, n, "GET", "/api/library?view="+view, nil)
		return strings.Contains(string(body), cid)
	}
	waiting.Until(t, "the file to leave Movies for Home videos", func() string {
		if inView("movies") || !inView("other") {
			return fmt.Sprintf("in movies %v, in other %v", inView("movies"), inView("other"))
		}
		return ""
	})
	must(t, ctx, "open Home videos", ce, chromedp.Navigate(base+"?view=other"))
	poll("wait for the home video's card", `document.getElementById("library").textContent.includes("Grandma's birthday")`)
	must(t, ctx, "open the record again", ce, chromedp.Navigate(base+"?cid="+cid))
	poll("wait for the Edit form again", `!document.getElementById("edit").hidden && document.getElementById("edit-title").value === "Grandma's birthday"`)
	must(t, ctx, "open Edit again", ce, chromedp.Click(chromedp.CSS("#edit summary")))

	must(t, ctx, "clear the title", ce, chromedp.Evaluate[bool](`(document.getElementById("edit-title").value = "") === ""`))
	must(t, ctx, "save again", ce, chromedp.Click(chromedp.CSS("#edit-form button[type=submit]")))
	poll("wait for the name's title", `document.getElementById("edit-title").value === "party" &&
		!document.getElementById("edit-title").closest("label").classList.contains("edited")`)
	if errs := ce(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestWeb_ShowAsHomeVideos: clips whose names read as a show's episodes
// (party_0102.mp4: S01E02 of "party": a name no camera writes) are marked home videos from the
// show's page in one action, and leave Shows for Home videos.
func TestWeb_ShowAsHomeVideos(t *testing.T) {
	t.Parallel()
	ctx, ce := browser(t)
	lib := t.TempDir()
	var cids []string
	for _, name := range []string{"party_0102.mp4", "party_0103.mp4", "party_0201.mp4"} {
		data := make([]byte, 16<<10)
		rand.Read(data)
		writeOld(t, filepath.Join(lib, name), data)
	}
	n := startNodeWith(t, lib, nil)
	for _, name := range []string{"party_0102.mp4", "party_0103.mp4", "party_0201.mp4"} {
		cids = append(cids, canonicalOf(t, filepath.Join(lib, name)))
	}
	list := func(q string) string {
		_, body := do(t, n, "GET", "/api/library?"+q, nil)
		return string(body)
	}
	waiting.Until(t, "the clips read as the show party", func() string {
		if l := list("show=party&season=1"); !strings.Contains(l, cids[0]) || !strings.Contains(l, cids[1]) {
			return l
		}
		return ""
	})
	base := "http://" + n.APIAddr() + "/"
	must(t, ctx, "open the show", ce, chromedp.Navigate(base+"?show=party"))
	must(t, ctx, "wait for the show's form", ce, chromedp.WaitVisible(chromedp.ID("show-kind")))
	must(t, ctx, "choose home videos", ce, chromedp.SetValue(chromedp.ID("show-kind"), "other"))
	must(t, ctx, "apply", ce, chromedp.Click(chromedp.CSS("#show-form button[type=submit]")))
	// Applied, the page goes back to Shows itself: the test navigates
	// only after it has, never while it does.
	must(t, ctx, "the page back on Shows", ce, chromedp.Poll[bool](`new URLSearchParams(location.search).get("view") === "shows"`, chromedp.WithPollingTimeout(time.Minute)))
	waiting.Until(t, "every clip to leave Shows for Home videos", func() string {
		shows, other := list("view=shows"), list("view=other")
		for _, c := range cids {
			if !strings.Contains(other, c) {
				return "not in other: " + c
			}
		}
		if strings.Contains(shows, `"show": "party"`) {
			return "still a show"
		}
		return ""
	})
	must(t, ctx, "open Home videos", ce, chromedp.Navigate(base+"?view=other"))
	must(t, ctx, "wait for the clips' cards", ce, chromedp.Poll[bool](`document.querySelectorAll("#entries li").length === 3`, chromedp.WithPollingTimeout(20*time.Second)))
	if errs := ce(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestWeb_FolderAsHomeVideos: from one file's record, every video of
// its folder is marked home videos in one action, and leaves the films
// with no year from its name; another folder's videos are given one
// show title, and are that show's episodes.
func TestWeb_FolderAsHomeVideos(t *testing.T) {
	t.Parallel()
	ctx, ce := browser(t)
	lib := t.TempDir()
	names := []string{"Camera/VID_20190314_181510.mp4", "Camera/beach.day.1964.mp4", "Films/Quiet.Harbour.2015.mkv",
		"Class/pottery.s01e01.mkv", "Class/pottery.s01e02.mkv"}
	var cids []string
	for _, name := range names {
		data := make([]byte, 16<<10)
		rand.Read(data)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(lib, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		writeOld(t, filepath.Join(lib, name), data)
	}
	n := startNodeWith(t, lib, nil)
	for _, name := range names {
		cids = append(cids, canonicalOf(t, filepath.Join(lib, name)))
	}
	list := func(q string) string {
		_, body := do(t, n, "GET", "/api/library?"+q, nil)
		return string(body)
	}
	waiting.Until(t, "the camera folder's videos listed by folder", func() string {
		if l := list("folder=" + url.QueryEscape(filepath.Join(lib, "Camera"))); !strings.Contains(l, cids[0]) || !strings.Contains(l, cids[1]) || strings.Contains(l, cids[2]) {
			return l
		}
		return ""
	})
	if films := list("view=movies"); !strings.Contains(films, cids[1]) || !strings.Contains(films, `"year": 1964`) {
		t.Fatalf("beach.day.1964 is not yet a film of 1964 as its name says: %s", films)
	}
	base := "http://" + n.APIAddr() + "/"
	must(t, ctx, "open the record", ce, chromedp.Navigate(base+"?cid="+cids[1]))
	must(t, ctx, "wait for the folder form", ce, chromedp.Poll[bool](`!document.getElementById("edit").hidden && document.getElementById("folder-name").textContent.endsWith("/Camera")`, chromedp.WithPollingTimeout(time.Minute)))
	must(t, ctx, "open Edit", ce, chromedp.Click(chromedp.CSS("#edit summary")))
	must(t, ctx, "choose home videos", ce, chromedp.SetValue(chromedp.ID("folder-kind"), "other"))
	must(t, ctx, "apply to the folder", ce, chromedp.Click(chromedp.CSS("#folder-form button[type=submit]")))
	waiting.Until(t, "the camera's videos in Home videos with no year, the film not", func() string {
		other := list("view=other")
		if !strings.Contains(other, cids[0]) || !strings.Contains(other, cids[1]) || strings.Contains(other, cids[2]) || strings.Contains(other, `"year"`) {
			return other
		}
		if films := list("view=movies"); strings.Contains(films, cids[1]) {
			return films
		}
		return ""
	})
	must(t, ctx, "the record shows no year", ce, chromedp.Poll[bool](`document.getElementById("record-facts").textContent !== "" && !document.getElementById("record-facts").textContent.includes("1964")`, chromedp.WithPollingTimeout(time.Minute)))

	must(t, ctx, "open an episode", ce, chromedp.Navigate(base+"?cid="+cids[3]))
	must(t, ctx, "wait for its folder form", ce, chromedp.Poll[bool](`!document.getElementById("edit").hidden && document.getElementById("folder-name").textContent.endsWith("/Class") && document.getElementById("edit-title-label").textContent === "Show"`, chromedp.WithPollingTimeout(time.Minute)))
	must(t, ctx, "open Edit", ce, chromedp.Click(chromedp.CSS("#edit summary")))
	must(t, ctx, "name the show", ce, chromedp.SetValue(chromedp.ID("folder-title"), "Pottery Class"))
	must(t, ctx, "apply to the folder", ce, chromedp.Click(chromedp.CSS("#folder-form button[type=submit]")))
	waiting.Until(t, "one show Pottery Class of both episodes", func() string {
		shows := list("view=shows")
		if !strings.Contains(shows, `"title": "Pottery Class"`) || !strings.Contains(shows, `"episodes": 2`) || strings.Contains(shows, `"title": "pottery"`) {
			return shows
		}
		return ""
	})
	if errs := ce(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}
