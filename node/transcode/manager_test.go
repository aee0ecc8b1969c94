package transcode

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// clip writes a few seconds of HEVC and AC-3 in Matroska, made by ffmpeg.
func clip(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "clip.mkv")
	out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=96x64:rate=10",
		"-f", "lavfi", "-i", "sine", "-t", "4", "-pix_fmt", "yuv420p", "-c:v", "libx265", "-preset", "ultrafast",
		"-x265-params", "log-level=error", "-c:a", "ac3", p).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	return p
}

func newManager(t *testing.T, dir string, cacheBytes int64) *Manager {
	t.Helper()
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatal("ffmpeg is not installed (make test installs it)")
	}
	m, err := New(Config{Dir: dir, FFmpeg: ffmpeg, CacheBytes: cacheBytes, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func request(path string, start float64) Request {
	src := Source{Container: "matroska,webm", Video: "hevc", Audio: "ac3"}
	return Request{CID: "bafkreiclip", Source: src, Plan: Decide(src, Browser{}), Start: start,
		Open: func(context.Context) (io.ReadSeekCloser, error) { return os.Open(path) }}
}

func readAll(t *testing.T, m *Manager, req Request) (int, Status) {
	t.Helper()
	s, err := m.Open(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, err := io.ReadAll(s)
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	return len(b), s.Status()
}

// TestManager_KeptAndEvicted: a stream made whole is kept, found again
// by the next Manager over the directory and read without ffmpeg; past
// the cap the least recently used goes.
func TestManager_KeptAndEvicted(t *testing.T) {
	src := clip(t)
	dir := t.TempDir()
	first := newManager(t, dir, 0)
	n, st := readAll(t, first, request(src, 0))
	if n == 0 || !st.Done || st.Cached || st.Mode != string(ModeVideo) || st.Speed <= 0 {
		t.Fatalf("first stream: %d bytes, %+v", n, st)
	}
	first.Close()

	m := newManager(t, dir, int64(n)*5/4) // room for one such stream, not for two
	again, st := readAll(t, m, request(src, 0))
	if again != n || !st.Cached {
		t.Fatalf("the same stream again: %d bytes (want %d), %+v, want it from the cache", again, n, st)
	}
	if _, st = readAll(t, m, request(src, 2)); st.Cached || !st.Done {
		t.Fatalf("a stream from 2 s: %+v", st)
	}
	kept, _ := filepath.Glob(filepath.Join(dir, "*"+keptExt))
	if len(kept) != 1 || filepath.Base(kept[0]) != keyOf(request(src, 2))+keptExt {
		t.Errorf("kept %v, want only the latest stream", kept)
	}
	if m.Running() != 0 {
		t.Errorf("%d ffmpeg running once every stream is whole", m.Running())
	}
}

// TestManager_LastReaderStops: two readers of one stream share an
// ffmpeg; when both are gone it is stopped and its file removed.
func TestManager_LastReaderStops(t *testing.T) {
	src := clip(t)
	dir := t.TempDir()
	m := newManager(t, dir, 0)
	ctx := context.Background()
	req := request(src, 0)
	// A file ffmpeg reads slowly: it never ends before the readers go.
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	req.Open = func(ctx context.Context) (io.ReadSeekCloser, error) {
		f, err := os.Open(src)
		return &slowFile{File: f, block: block, ctx: ctx}, err
	}
	a, err := m.Open(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Open(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if m.Running() != 1 {
		t.Fatalf("%d ffmpeg for two readers of one stream, want 1", m.Running())
	}
	a.Close()
	if st := b.Status(); !st.Running {
		t.Fatalf("one reader gone: %+v, want the stream still made", st)
	}
	b.Close()
	s, ok := m.Status(req.CID)
	for ok && s.Running {
		_, _, changed := b.j.state()
		<-changed
		s, ok = m.Status(req.CID)
	}
	if s.Done || s.Error == "" || m.Running() != 0 {
		t.Errorf("both readers gone: %+v, %d running; want it stopped", s, m.Running())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("left in the cache: %v", left)
	}
}

// slowFile reads a file's first bytes, then waits until block closes or
// its request ends.
type slowFile struct {
	*os.File
	block chan struct{}
	ctx   context.Context
	read  int
}

func (f *slowFile) Read(p []byte) (int, error) {
	if f.read > 4096 {
		select {
		case <-f.block:
		case <-f.ctx.Done():
			return 0, f.ctx.Err()
		}
	}
	n, err := f.File.Read(p[:min(len(p), 1024)])
	f.read += n
	return n, err
}
