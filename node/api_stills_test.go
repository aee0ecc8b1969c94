package node_test

import (
	"bytes"
	"crypto/rand"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/store/storetest"
)

// stillOf is the still GET /api/meta gives the file of CID c, "" for
// none.
func stillOf(t *testing.T, n *node.Node, c string) string {
	t.Helper()
	var doc map[string]any
	getJSON(t, n, "/api/meta/"+c, &doc)
	s, _ := doc["still"].(string)
	return s
}

// stillsLibrary writes a library of three real videos, the first with a
// poster beside it, and a file named as a video that is none. Returns
// the videos' paths, the poster's and the one that is none.
func stillsLibrary(t *testing.T, lib string) (videos []string, poster, bad string) {
	t.Helper()
	for i, name := range []string{"Alpha (2020)/Alpha.2020.webm", "Bravo (2021)/Bravo.2021.webm", "Charlie (2022)/Charlie.2022.webm"} {
		p := filepath.Join(lib, "Movies", name)
		writeClip(t, p, []int{4, 10, 20}[i]) // a tenth of the way in: frames 0, 2 and 4
		videos = append(videos, p)
	}
	img := image.NewRGBA(image.Rect(0, 0, 60, 90))
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	poster = filepath.Join(lib, "Movies", "Alpha (2020)", "poster.png")
	writeOld(t, poster, b.Bytes())
	junk := make([]byte, 20<<10)
	rand.Read(junk)
	bad = filepath.Join(lib, "Movies", "Delta (2023)", "Delta.2023.mkv")
	writeOld(t, bad, junk)
	return videos, poster, bad
}

// A video without a poster gets a still: a JPEG under DATA/stills named
// by its IPFS CID, linked as still, shown as the list's poster and
// served as a thumbnail; a video with a poster gets none; a file ffmpeg
// makes nothing of is logged once and, remembered, not tried again
// after a restart; a still no root links any more is removed.
func TestStills_VideosWithoutPoster(t *testing.T) {
	t.Parallel()
	lib, data := t.TempDir(), storetest.Dir(t)
	redis := storetest.Server(t).URL()
	videos, poster, bad := stillsLibrary(t, lib)
	cfg := func(c *node.Config) { c.Stills, c.DataDir, c.RedisURL = true, data, redis }
	n, logs := startNodeLogged(t, lib, cfg)
	a, b, c := canonicalOf(t, videos[0]), canonicalOf(t, videos[1]), canonicalOf(t, videos[2])
	waiting.For(t, "a still of each video without a poster", func() bool { return stillOf(t, n, b) != "" && stillOf(t, n, c) != "" })
	waiting.For(t, "the failure logged", func() bool { return strings.Contains(logs.String(), "no still of a video") })

	if s := stillOf(t, n, a); s != "" {
		t.Errorf("the video with a poster got the still %s", s)
	}
	posters := map[string]string{}
	waiting.For(t, "the list's pictures", func() bool {
		for _, e := range library(t, n, "view=movies&limit=50").Entries {
			posters[e.CID] = e.Poster
		}
		return posters[a] != "" && posters[b] != "" && posters[c] != ""
	})
	if want := canonicalOf(t, poster); posters[a] != want {
		t.Errorf("the list's poster of the video with one: %q, want %q", posters[a], want)
	}
	stills := map[string]string{}
	for _, v := range []string{b, c} {
		s := stillOf(t, n, v)
		stills[v] = s
		if posters[v] != s {
			t.Errorf("the list's poster of %s: %q, want its still %q", v, posters[v], s)
		}
		jpg, err := os.ReadFile(filepath.Join(data, "stills", s+".jpg"))
		if err != nil {
			t.Fatal(err)
		}
		if got := canonicalOfBytes(t, jpg); got != s {
			t.Errorf("the still's file hashes to %s, is named %s", got, s)
		}
		if img, err := jpeg.Decode(bytes.NewReader(jpg)); err != nil || img.Bounds().Dx() != 96 {
			t.Errorf("the still of %s: %v, %v (want the video's 96 px wide)", v, err, img)
		}
		resp, body := do(t, n, "GET", "/api/thumb/"+s+"?w=160", nil)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/jpeg" {
			t.Fatalf("GET /api/thumb of a still: %s %s", resp.Status, body)
		}
		if _, err := jpeg.Decode(bytes.NewReader(body)); err != nil {
			t.Errorf("the still's thumbnail: %v", err)
		}
	}
	if stills[b] == stills[c] {
		t.Fatalf("two videos, one still: %s", stills[b])
	}
	if got := strings.Count(logs.String(), "no still of a video"); got != 1 || !strings.Contains(logs.String(), filepath.Base(bad)) {
		t.Errorf("%d failures logged, want one naming %s", got, bad)
	}

	// Restarted with a new video: the failure is not tried again (it
	// would be, before the new video, which comes after the start's sweep).
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	echo := filepath.Join(lib, "Movies", "Echo (2024)", "Echo.2024.webm")
	writeClip(t, echo, 7)
	n, logs = startNodeLogged(t, lib, cfg)
	e := canonicalOf(t, echo)
	waiting.For(t, "the new video's still", func() bool { return stillOf(t, n, e) != "" })
	if strings.Contains(logs.String(), "no still of a video") {
		t.Errorf("the failure was tried again after a restart:\n%s", logs.String())
	}

	// A video deleted takes its still with it.
	if err := os.Remove(videos[2]); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the deleted video's still removed", func() bool {
		_, err := os.Stat(filepath.Join(data, "stills", stills[c]+".jpg"))
		return os.IsNotExist(err)
	})
	if _, err := os.Stat(filepath.Join(data, "stills", stills[b]+".jpg")); err != nil {
		t.Errorf("the other still: %v", err)
	}
}

// With stills off (--stills=false, the zero Config) no video gets one.
func TestStills_Off(t *testing.T) {
	t.Parallel()
	lib, data := t.TempDir(), storetest.Dir(t)
	videos, _, _ := stillsLibrary(t, lib)
	n := startNodeWith(t, lib, func(c *node.Config) { c.DataDir = data })
	b := canonicalOf(t, videos[1])
	waiting.For(t, "the videos listed", func() bool { return library(t, n, "view=movies").Total == 4 })
	if s := stillOf(t, n, b); s != "" {
		t.Errorf("a still with stills off: %s", s)
	}
	if _, err := os.Stat(filepath.Join(data, "stills")); !os.IsNotExist(err) {
		t.Errorf("DATA/stills with stills off: %v", err)
	}
}

// canonicalOfBytes is the IPFS CID (and canonical CID) of a file of
// these bytes.
func canonicalOfBytes(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return canonicalOf(t, p)
}

// Every video of the sample library (scripts/sample.sh, make sample)
// without a poster gets a still, which its list entry shows.
func TestStills_SampleLibrary(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	if out, err := exec.Command("../scripts/sample.sh", lib).CombinedOutput(); err != nil {
		t.Fatalf("sample.sh: %v\n%s", err, out)
	}
	onDisk := 0
	err := filepath.WalkDir(lib, func(p string, d os.DirEntry, err error) error {
		if ext := filepath.Ext(p); err == nil && (ext == ".mkv" || ext == ".mp4" || ext == ".webm") {
			onDisk++
		}
		return err
	})
	if err != nil || onDisk < 4 {
		t.Fatalf("the sample library: %d videos, %v", onDisk, err)
	}
	n := startNodeWith(t, lib, func(c *node.Config) { c.Stills = true })
	var videos []string
	waiting.For(t, "every video listed", func() bool {
		videos = videos[:0]
		for _, e := range library(t, n, "view=recent&limit=200").Entries {
			if e.FileType == "video" {
				videos = append(videos, e.CID)
			}
		}
		return len(videos) == onDisk
	})
	stilled := 0
	for _, v := range videos {
		waiting.For(t, "a poster or a still of "+v, func() bool {
			var doc map[string]any
			getJSON(t, n, "/api/meta/"+v, &doc)
			art, _ := doc["art"].(map[string]any)
			return art["poster"] != nil || doc["still"] != nil
		})
		if stillOf(t, n, v) != "" {
			stilled++
		}
	}
	waiting.For(t, "every video's entry with a picture", func() bool {
		for _, e := range library(t, n, "view=recent&limit=200").Entries {
			if e.FileType == "video" && e.Poster == "" {
				return false
			}
		}
		return true
	})
	t.Logf("%d of the sample's %d videos got a still", stilled, len(videos))
	if stilled == 0 || stilled == len(videos) {
		t.Errorf("%d of the sample's %d videos got a still; want those without a poster only", stilled, len(videos))
	}
}

// Without ffmpeg on the PATH the node says once, at start, that stills
// are off and why, and runs without them. (Not parallel: it sets PATH.)
func TestStills_NoFFmpeg(t *testing.T) {
	bin := t.TempDir()
	for _, b := range []string{"redis-server", "ffprobe"} {
		p, err := exec.LookPath(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(bin, b)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	lib, data := t.TempDir(), storetest.Dir(t)
	writeOld(t, filepath.Join(lib, "Movies", "Foxtrot (2020)", "Foxtrot.2020.mkv"), []byte("a video"))
	_, logs := startNodeLogged(t, lib, func(c *node.Config) { c.Stills, c.DataDir = true, data })
	if got := strings.Count(logs.String(), "stills are off: ffmpeg is not on the PATH"); got != 1 {
		t.Errorf("said %d times that stills are off:\n%s", got, logs.String())
	}
	if _, err := os.Stat(filepath.Join(data, "stills")); !os.IsNotExist(err) {
		t.Errorf("DATA/stills without ffmpeg: %v", err)
	}
}
