package node_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/metamesh/node/internal/waiting"
)

// TestWeb_PlayerResumes: the player starts a film where this browser
// left it (kept in the browser by CID) and remembers where it is as it
// plays; a real clip, which Chromium plays, made by ffmpeg.
func TestWeb_PlayerResumes(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	lib := t.TempDir()
	clip := filepath.Join(lib, "Movies", "Clip (2020)", "Clip.2020.webm")
	writeClip(t, clip, 30)
	n := startNodeWith(t, lib, nil)
	c := canonicalOf(t, clip)
	waiting.For(t, "the clip in the list", func() bool { return library(t, n, "view=movies").Total == 1 })
	p := openPage(t, n)

	// Where the browser left it last time.
	p.navigate("/")
	p.eval("remember a place", `localStorage.setItem("metamesh.at.`+c+`", "12"); "ok"`)
	p.navigate("/?cid=" + c)
	must(t, p.ctx, "wait for the player to resume", p.ce, chromedp.Poll[bool](`(() => {
	  const v = document.querySelector("#player video");
	  return !!v && v.readyState >= 1 && Math.abs(v.currentTime - 12) < 0.6; })()`, chromedp.WithPollingTimeout(20*time.Second)))

	// Moving on is remembered; the end forgets it.
	must(t, p.ctx, "wait for the new place to be kept", p.ce, chromedp.Poll[bool](`(() => {
	  const v = document.querySelector("#player video");
	  if (v.currentTime < 19) v.currentTime = 20;
	  return Math.abs(parseFloat(localStorage.getItem("metamesh.at.`+c+`")) - 20) < 0.6; })()`, chromedp.WithPollingTimeout(10*time.Second)))
	must(t, p.ctx, "play to the end", p.ce, chromedp.Poll[bool](`(() => {
	  const v = document.querySelector("#player video");
	  if (v.currentTime < 29) { v.muted = true; v.currentTime = 29.2; v.play(); }
	  return localStorage.getItem("metamesh.at.`+c+`") === null; })()`, chromedp.WithPollingTimeout(20*time.Second)))
	p.noConsoleErrors()
}

// writeClip writes at path a WebM clip of a test pattern that Chromium
// plays, made by ffmpeg: seconds long, two frames a second (small, and
// long enough to resume in the middle of). Clips of different lengths
// are different files.
func writeClip(t *testing.T, path string, seconds int) {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Fatal("ffmpeg is not installed (sudo apt-get install ffmpeg); make test installs it")
	}
	writeOld(t, path, nil)
	if out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=96x64:rate=2",
		"-t", strconv.Itoa(seconds), "-c:v", "libvpx", "-b:v", "20k", "-deadline", "realtime", "-cpu-used", "8", path).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	old := time.Now().Add(-time.Hour) // settled, as writeOld's
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}
