package node_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// TestWeb_TranscodePlaysAndSeeks: an HEVC and AC-3 film in Matroska,
// which Chromium decodes neither of, plays on the page through the
// node's converted stream (the video to H.264, the sound to AAC); a seek
// to the middle plays on from there; the node says how fast it
// converted.
func TestWeb_TranscodePlaysAndSeeks(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	lib := t.TempDir()
	clip := filepath.Join(lib, "Movies", "Heavy (2021)", "Heavy.2021.mkv")
	writeMedia(t, clip, 24, "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error", "-c:a", "ac3")
	n, c := nodeWithFilm(t, lib, clip, nil)

	var st api.StreamStatus
	getJSON(t, n, "/api/stream/"+c+"/status", &st)
	if st.Source.Video != "hevc" || st.Source.Audio != "ac3" || st.Max != 1 {
		t.Fatalf("status before playing: %+v, want the source hevc and ac3 and at most 1 transcode", st)
	}

	p := openPage(t, n)
	p.navigate("/?cid=" + c)
	playsPast(t, p, 1)
	if why := p.eval("the sentence under the player", `document.querySelector("#player .stream-why").textContent`); !strings.Contains(why, "converts") {
		t.Errorf("the page says %q under the player, want that the node converts the file", why)
	}
	getJSON(t, n, "/api/stream/"+c+"/status", &st)
	if st.Stream == nil || st.Stream.Mode != "video" {
		t.Fatalf("status while playing: %+v, want a stream of mode video", st.Stream)
	}

	// The middle, which the first stream may or may not have reached:
	// the page asks for it when it has not.
	must(t, p.ctx, "seek to the middle", p.ce, chromedp.Evaluate[bool](`(() => { const v = document.querySelector("#player video"); v.currentTime = 12; return true; })()`))
	playsPast(t, p, 13)

	waiting.For(t, "the stream's speed reported", func() bool {
		getJSON(t, n, "/api/stream/"+c+"/status", &st)
		return st.Stream != nil && st.Stream.Speed > 0
	})
	if st.Stream.Slow != (st.Stream.Speed < 1 && st.Stream.Running) || (st.Stream.Note != "") != st.Stream.Slow {
		t.Errorf("status %+v: slow and its note do not follow the speed", st.Stream)
	}
	p.noConsoleErrors()
}

// TestWeb_TranscodeRemux: H.264 and AAC in AVI, a container Chromium
// does not play, is remuxed, both codecs copied.
func TestWeb_TranscodeRemux(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	lib := t.TempDir()
	clip := filepath.Join(lib, "Movies", "Broadcast (2019)", "Broadcast.2019.avi")
	writeMedia(t, clip, 20, "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac")
	n, c := nodeWithFilm(t, lib, clip, nil)

	p := openPage(t, n)
	p.navigate("/?cid=" + c)
	playsPast(t, p, 1)
	var st api.StreamStatus
	getJSON(t, n, "/api/stream/"+c+"/status", &st)
	if st.Stream == nil || st.Stream.Mode != "remux" {
		t.Fatalf("status: %+v, want a stream of mode remux", st.Stream)
	}
	p.noConsoleErrors()
}

// TestWeb_TranscodeSharedAndStopped: a seek far past what is loaded
// plays on from there (a new stream, the old one's ffmpeg stopped); with
// --transcodes=1, a second player of the same stream shares its ffmpeg,
// a player asking for another waits and gets 503 with Retry-After; once
// the page is closed and the other player gone, no ffmpeg of the node's
// is left.
func TestWeb_TranscodeSharedAndStopped(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	lib := t.TempDir()
	// Twenty minutes (a clip copied over and over), long enough that its
	// conversion runs for the whole test.
	short := filepath.Join(t.TempDir(), "short.mkv")
	writeMedia(t, short, 30, "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error", "-c:a", "ac3")
	clip := filepath.Join(lib, "Movies", "Long (2018)", "Long.2018.mkv")
	if err := os.MkdirAll(filepath.Dir(clip), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-stream_loop", "39", "-i", short, "-c", "copy", clip).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	settle(t, clip)
	var data string
	n, c := nodeWithFilm(t, lib, clip, func(c *node.Config) { c.Transcodes = 1; data = c.DataDir })

	p := openPage(t, n)
	p.navigate("/?cid=" + c)
	playsPast(t, p, 1)
	// Ten minutes in, far past what the page loaded (a minute ahead at
	// most): the page asks for a stream from there, which replaces the
	// first one (its ffmpeg stopped, the only slot taken by the new one).
	must(t, p.ctx, "seek ten minutes in", p.ce, chromedp.Evaluate[bool](`(() => { document.querySelector("#player video").currentTime = 600; return true; })()`))
	playsPast(t, p, 601)

	// A second player of the same stream (what the page asked for: from
	// 600 s, neither codec decoded) reads the same ffmpeg's output.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := streamGet(t, ctx, n, "/api/stream/"+c+"?start=600&video=0&audio=0")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the second player: %s", resp.Status)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 4096)); err != nil {
		t.Fatalf("the second player reads: %v", err)
	}
	if got := n.Transcodes(); got != 1 {
		t.Fatalf("%d ffmpeg processes for two players of the same stream, want 1", got)
	}

	// Another stream waits for the slot, then is refused.
	busy := streamGet(t, context.Background(), n, "/api/stream/"+c+"?start=0&video=0&audio=0")
	body, _ := io.ReadAll(busy.Body)
	busy.Body.Close()
	if busy.StatusCode != http.StatusServiceUnavailable || busy.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "--transcodes") {
		t.Fatalf("another stream while the only slot is taken: %s, Retry-After %q, %s; want 503 with Retry-After saying --transcodes", busy.Status, busy.Header.Get("Retry-After"), body)
	}

	// Both players gone: the page closed, the other one's request ended.
	cancel()
	resp.Body.Close()
	if err := chromedp.Cancel(p.ctx); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(data, "transcode")
	waiting.For(t, "no ffmpeg left", func() bool { return n.Transcodes() == 0 && len(processesUsing(t, dir)) == 0 })
	var st api.StreamStatus
	getJSON(t, n, "/api/stream/"+c+"/status", &st)
	if st.Stream == nil || st.Stream.Done || !strings.Contains(st.Stream.Error, "stopped") {
		t.Errorf("status once both players went: %+v, want the stream stopped, not done", st.Stream)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.part")); len(left) > 0 {
		t.Errorf("half-made streams left: %v", left)
	}
}

// nodeWithFilm starts a node on lib, whose one film is clip, and waits
// for the film in its list; c is the film's canonical CID.
func nodeWithFilm(t *testing.T, lib, clip string, edit func(*node.Config)) (n *node.Node, c string) {
	t.Helper()
	n = startNodeWith(t, lib, edit)
	c = canonicalOf(t, clip)
	waiting.For(t, "the film in the list", func() bool { return library(t, n, "view=movies").Total == 1 })
	return n, c
}

// playsPast waits until the page's player plays (muted) past at seconds.
func playsPast(t *testing.T, p *webPage, at float64) {
	t.Helper()
	sec := strconv.FormatFloat(at, 'f', -1, 64)
	_, err := chromedp.Run(p.ctx, chromedp.Poll[bool](`(() => {
	  const v = document.querySelector("#player video");
	  if (!v) return false;
	  if (v.paused) { v.muted = true; v.play().catch(() => {}); }
	  return v.currentTime > `+sec+`; })()`, chromedp.WithPollingTimeout(60*time.Second)))
	if err != nil {
		got, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`(() => {
		  const v = document.querySelector("#player video");
		  if (!v) return "no player: " + document.getElementById("player").textContent;
		  const b = [];
		  for (let i = 0; i < v.buffered.length; i++) b.push(v.buffered.start(i).toFixed(2) + "-" + v.buffered.end(i).toFixed(2));
		  const n = document.querySelector("#player .stream-note");
		  return "currentTime " + v.currentTime + ", paused " + v.paused + ", readyState " + v.readyState + ", buffered " + b.join(" ") +
		    ", error " + (v.error ? v.error.code + " " + v.error.message : "none") + ", note " + (n ? n.textContent : ""); })()`))
		t.Fatalf("play past %s s: %v; the player: %s (console errors: %q)", sec, err, got, p.ce())
	}
}

// writeMedia writes at path seconds of a test pattern and a tone, 160 ×
// 90 at 25 frames a second, encoded with codec (ffmpeg's output options).
func writeMedia(t *testing.T, path string, seconds int, codec ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	a := []string{"-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25",
		"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", strconv.Itoa(seconds), "-pix_fmt", "yuv420p"}
	a = append(append(a, codec...), path)
	if out, err := exec.Command("ffmpeg", a...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	settle(t, path)
}

// settle dates path an hour back, so that the first scan takes it.
func settle(t *testing.T, path string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

// streamGet starts GET path on n, its body read by the caller.
func streamGet(t *testing.T, ctx context.Context, n *node.Node, path string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+n.APIAddr()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// processesUsing lists the processes whose command line names dir.
func processesUsing(t *testing.T, dir string) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), dir) {
			out = append(out, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}
