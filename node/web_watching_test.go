package node_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// profilePage opens the page of n in a browser of its own profile (its
// own user data directory: its own cookies and storage), as another
// device would.
func profilePage(t *testing.T, n *node.Node, dir string) *webPage {
	t.Helper()
	ctx, ce := browserFor(t, 2*waiting.Guard, chromedp.UserDataDir(dir))
	return &webPage{t: t, ctx: ctx, ce: ce, base: "http://" + n.APIAddr(), width: 1200}
}

// until waits until the page's JS expression js is true.
func (p *webPage) until(what, js string) {
	p.t.Helper()
	waiting.For(p.t, what, func() bool {
		ok, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](js))
		if err != nil {
			p.t.Fatalf("%s: %v (console errors: %q)", what, err, p.ce())
		}
		return ok
	})
}

// video is the JS of the player's video element.
const video = `document.querySelector("#player video")`

// TestWeb_WatchingAcrossDevices: two browsers (two profiles) as one
// member of the household. Where one paused an episode, the other
// offers to resume, and its video starts there; Continue watching lists
// it; an episode played to its end offers the next one, whose Play
// button plays it, and the watched one is marked so on its card. Real
// clips that Chromium plays, made by ffmpeg.
func TestWeb_WatchingAcrossDevices(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	lib := t.TempDir()
	e1 := filepath.Join(lib, "Shows", "Clip Show", "Season 1", "Clip.Show.S01E01.webm")
	e2 := filepath.Join(lib, "Shows", "Clip Show", "Season 1", "Clip.Show.S01E02.webm")
	writeClip(t, e1, 30)
	writeClip(t, e2, 20)
	n := startNodeWith(t, lib, func(c *node.Config) { c.Users = []string{"alice", "bob"} })
	c1, c2 := canonicalOf(t, e1), canonicalOf(t, e2)
	waiting.For(t, "the episodes in the list", func() bool { return library(t, n, "view=recent").Total == 2 })

	phone := profilePage(t, n, filepath.Join(t.TempDir(), "phone"))
	tv := profilePage(t, n, filepath.Join(t.TempDir(), "tv"))
	for _, p := range []*webPage{phone, tv} {
		p.navigate("/")
		p.until("the members in Who's watching", `!!document.querySelector('#who-members button[data-member="alice"]')`)
		p.click("choose alice", `#who-members button[data-member="alice"]`)
		p.until("alice chosen", `document.querySelector('#who-members button[data-member="alice"]').getAttribute("aria-pressed") === "true" && document.cookie.includes("metamesh_member=alice")`)
	}

	// The phone plays the first episode a few seconds and pauses.
	phone.navigate("/?cid=" + c1)
	phone.until("the phone's video loaded", `!!`+video+` && `+video+`.readyState >= 1`)
	phone.eval("play", `(() => { const v = `+video+`; v.muted = true; v.play(); return "ok"; })()`)
	phone.until("a few seconds played", video+`.currentTime >= 3`)
	phone.eval("pause", `(() => { `+video+`.pause(); return "ok"; })()`)
	var saved api.WatchEntry
	waiting.Until(t, "the pause saved on the node", func() string {
		getJSON(t, n, "/api/members/alice/watch/"+c1, &saved)
		if saved.Position < 3 || saved.Watched {
			return fmt.Sprintf("alice's state: %+v", saved.WatchState)
		}
		return ""
	})
	phonePos, _ := strconv.ParseFloat(phone.eval("the phone's place", `String(`+video+`.currentTime)`), 64)
	if d := saved.Position - phonePos; d > 0.01 || d < -0.01 {
		t.Errorf("saved %v, the phone paused at %v", saved.Position, phonePos)
	}

	// The TV offers to resume there, and its video starts there.
	tv.navigate("/?cid=" + c1)
	at := fmt.Sprintf("%d:%02d", int(saved.Position)/60, int(saved.Position)%60)
	tv.until("the TV's offer to resume", `(document.getElementById("resume") || {}).textContent === "Resume from `+at+`" && !!document.getElementById("start-over")`)
	tv.screenshot("resume-offer")
	tv.until("the TV's video at the saved place", `!!`+video+` && `+video+`.readyState >= 1 && Math.abs(`+video+`.currentTime - `+strconv.FormatFloat(saved.Position, 'f', -1, 64)+`) < 0.01`)

	// Continue watching, on Recently added, lists it.
	tv.navigate("/")
	tv.until("Continue watching to list the episode", `!document.getElementById("continue").hidden && [...document.querySelectorAll("#continue-list li.continue")].map(li => li.dataset.cid).join() === "`+c1+`"`)

	// The TV plays the episode to its end: the next one is offered.
	tv.navigate("/?cid=" + c1)
	tv.until("the TV's video loaded", `!!`+video+` && `+video+`.readyState >= 1`)
	tv.eval("seek near the end", `(() => { const v = `+video+`; v.muted = true; v.currentTime = 28.5; v.play(); return "ok"; })()`)
	tv.until("the next episode offered", `((document.getElementById("next-up") || {}).textContent || "").startsWith("Next: S01E02") && !!document.querySelector("#next-up button.play-next")`)
	var ended api.WatchEntry
	getJSON(t, n, "/api/members/alice/watch/"+c1, &ended)
	if !ended.Watched {
		t.Errorf("the episode played to its end is not watched: %+v", ended.WatchState)
	}

	// On the phone: the next episode leads Continue watching, and the
	// watched one has its mark.
	phone.navigate("/")
	phone.until("the next episode at the top of Continue watching", `(() => {
	  const first = document.querySelector("#continue-list li");
	  return !document.getElementById("continue").hidden && !!first && first.classList.contains("next-up") && first.dataset.cid === "`+c2+`"; })()`)
	phone.until("the watched mark on the card", `!!document.querySelector('#entries li.file.card[data-cid="`+c1+`"] .badge.watched') && !document.querySelector('#entries li.file.card[data-cid="`+c2+`"] .badge.watched')`)
	phone.screenshot("continue-watching")

	// Play plays the next episode.
	tv.click("play the next episode", "#next-up button.play-next")
	tv.until("the next episode playing", `new URLSearchParams(location.search).get("cid") === "`+c2+`" && !!`+video+` && `+video+`.src.endsWith("`+c2+`") && !`+video+`.paused`)
	phone.noConsoleErrors()
	tv.noConsoleErrors()
}
