package stills_test

import (
	"context"
	"errors"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node/stills"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// video writes a real video at path with ffmpeg: a test pattern of
// width×height, seconds long.
func video(t *testing.T, path, size string, seconds string) {
	t.Helper()
	ffmpeg(t)
	if out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size="+size+":rate=5",
		"-t", seconds, "-c:v", "mpeg4", path).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
}

func ffmpeg(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatal("ffmpeg is not installed (sudo apt-get install ffmpeg); make test installs it")
	}
	return p
}

// ingestVideo puts the file at path in st as a local video of the given
// duration and returns its root.
func ingestVideo(t *testing.T, st *store.Store, path, duration string) (store.RootID, ingest.FileHashes) {
	t.Helper()
	ctx := context.Background()
	h, err := ingest.HashFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	o, _, err := st.Ingest(ctx, store.FileStat{Path: path, Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano()}, h.Store(),
		store.Meta{Version: 1, Owned: []string{"fileType", "fileinfo"}, Fields: map[string]string{"fileType": "video", "fileinfo/duration": duration}})
	if err != nil {
		t.Fatal(err)
	}
	return o.Root, h
}

// maker runs a Maker on st until the test ends; take hands it roots as
// store.Changes would.
func maker(t *testing.T, st *store.Store, dir string) (m *stills.Maker, take func(...store.RootID)) {
	t.Helper()
	m, err := stills.New(stills.Config{Dir: dir, FFmpeg: ffmpeg(t), Store: st, Ready: func() bool { return true }, Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { m.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return m, func(roots ...store.RootID) {
		t.Helper()
		ch, err := st.ReadChanged(ctx, roots)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Take(ctx, store.ChangeBatch{Roots: ch}); err != nil {
			t.Fatal(err)
		}
	}
}

// stillOf is root's still link, "" for none.
func stillOf(t *testing.T, st *store.Store, r store.RootID) string {
	t.Helper()
	ch, err := st.ReadChanged(context.Background(), []store.RootID{r})
	if err != nil {
		t.Fatal(err)
	}
	return ch[0].Document.Fields[store.StillField]
}

// A still is a JPEG at most stills.Width wide, named by its IPFS CID,
// linked on its root; a poster that comes later drops the link, and the
// file goes with its last link.
func TestMaker_StillThenPoster(t *testing.T) {
	t.Parallel()
	st, lib, dir := storetest.New(t), t.TempDir(), filepath.Join(t.TempDir(), "stills")
	p := filepath.Join(lib, "wide.avi")
	video(t, p, "1280x720", "2")
	r, _ := ingestVideo(t, st, p, "2.000000")
	m, take := maker(t, st, dir)
	take(r)
	waiting.For(t, "the still linked", func() bool { return stillOf(t, st, r) != "" })
	c := stillOf(t, st, r)

	f, err := m.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(f)
	f.Close()
	if err != nil || img.Bounds().Dx() != stills.Width || img.Bounds().Dy() != 360 {
		t.Fatalf("the still: %v, %v; want %d×360", err, img, stills.Width)
	}
	h, err := ingest.HashFile(context.Background(), filepath.Join(dir, c+".jpg"))
	if err != nil || h.IPFS != c {
		t.Errorf("the still named %s hashes to %s (%v)", c, h.IPFS, err)
	}
	for _, bad := range []string{"../wide", "notacid", ""} {
		if _, err := m.Open(bad); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Open(%q): %v, want not found", bad, err)
		}
	}

	// A poster: no still is linked any more, and the file goes.
	if _, err := st.SetFields(context.Background(), r, map[string]string{store.PosterField: c}); err != nil {
		t.Fatal(err)
	}
	if changed, err := st.SetStill(context.Background(), r, "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"); changed || err != nil {
		t.Errorf("SetStill on a root with a poster: %v %v, want nothing linked", changed, err)
	}
	take(r)
	waiting.For(t, "the link dropped", func() bool { return stillOf(t, st, r) == "" })
	take(r)
	waiting.For(t, "the file removed", func() bool {
		_, err := os.Stat(filepath.Join(dir, c+".jpg"))
		return os.IsNotExist(err)
	})
}

// A file ffmpeg makes nothing of is tried once: handed again, or to a
// new Maker on the same directory, it is not queued.
func TestMaker_FailureRemembered(t *testing.T) {
	t.Parallel()
	st, lib, dir := storetest.New(t), t.TempDir(), filepath.Join(t.TempDir(), "stills")
	bad := filepath.Join(lib, "bad.mkv")
	if err := os.WriteFile(bad, []byte("not a video at all, only some bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	rb, hb := ingestVideo(t, st, bad, "")
	good := filepath.Join(lib, "good.avi")
	video(t, good, "64x48", "1")
	rg, _ := ingestVideo(t, st, good, "")
	_, take := maker(t, st, dir)
	take(rb)
	waiting.For(t, "the failure remembered", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "failed.txt"))
		return string(b) == hb.IPFS+"\n"
	})

	// A new Maker: the bad file handed before the good one would be
	// tried first (one worker, in order).
	_, take2 := maker(t, st, dir)
	take2(rb, rg)
	waiting.For(t, "the good video's still (taken at its first frame: no duration)", func() bool { return stillOf(t, st, rg) != "" })
	b, _ := os.ReadFile(filepath.Join(dir, "failed.txt"))
	if string(b) != hb.IPFS+"\n" {
		t.Errorf("failed.txt after a second Maker: %q", b)
	}
}
