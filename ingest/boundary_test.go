package ingest_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store/storetest"
)

// OpenInLibrary opens only regular files inside the library it is asked
// in, without blocking on a FIFO.
func TestOpenInLibrary(t *testing.T) {
	l := newLib(t)
	outside := newLib(t)
	secret := outside.write("secret.nfo", []byte("<movie><title>Secret</title></movie>"))
	l.write("Movies/a.mkv", []byte("a"))
	l.write("nfos/inside.nfo", []byte("<movie/>"))
	mkfifo(t, l.path("Movies/fifo.nfo"))
	symlink(t, secret, l.path("Movies/out.nfo"))
	symlink(t, "../nfos/inside.nfo", l.path("Movies/in.nfo"))
	symlink(t, "/dev/null", l.path("Movies/null.nfo"))
	type open struct {
		path string
		want error // nil: opened
	}
	var more []open
	// A character device inside the library (where this user may make one).
	if err := syscall.Mknod(l.path("Movies/null.mkv"), syscall.S_IFCHR|0o644, 1<<8|3); err == nil {
		more = append(more, open{"Movies/null.mkv", ingest.ErrNotRegular})
	} else {
		t.Logf("no character device in the library (mknod: %v): the FIFO stands for it", err)
	}
	for _, tt := range append([]open{
		{"Movies/a.mkv", nil},
		{"Movies/in.nfo", nil},
		{"Movies/fifo.nfo", ingest.ErrNotRegular},
		{"Movies", ingest.ErrNotRegular},
		{"Movies/out.nfo", ingest.ErrOutsideLibrary},
		{"Movies/null.nfo", ingest.ErrOutsideLibrary},
		{"../x", ingest.ErrOutsideLibrary},
		{"Movies/none.nfo", os.ErrNotExist},
	}, more...) {
		f, _, err := ingest.OpenInLibrary(l.dir, filepath.Join(l.dir, tt.path))
		if f != nil {
			f.Close()
		}
		if (tt.want == nil) != (err == nil) || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.path, err, tt.want)
		}
	}
	if _, _, err := ingest.OpenInLibrary(l.dir, secret); !errors.Is(err, ingest.ErrOutsideLibrary) {
		t.Errorf("a path outside the library: %v", err)
	}
}

// FIFOs named as a video, its NFO, the show's tvshow.nfo, a subtitle and
// a poster stall nothing: the other files are ingested, the ingester goes
// idle, a file added later is ingested, a restart finishes its scan, and
// Close returns. Nothing of theirs is linked.
func TestBoundary_FIFOs(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	cfg := testConfig(l)
	cfg.Extractors = []ingest.Extractor{ingest.FileInfo{}, ingest.Filename{}, ingest.NFOReader{}}
	film := l.write("Movies/Fifo (2007)/Fifo (2007).mkv", randBytes(t, 40<<10))
	mkfifo(t, l.path("Movies/Fifo (2007)/Fifo (2007).nfo"))
	mkfifo(t, l.path("Movies/Fifo (2007)/Fifo (2007).en.srt"))
	mkfifo(t, l.path("Movies/Fifo (2007)/poster.jpg"))
	mkfifo(t, l.path("Movies/Pipe (2008).mkv"))
	episode := l.write("Shows/Pipes/Season 1/Pipes.S01E01.mkv", randBytes(t, 40<<10))
	mkfifo(t, l.path("Shows/Pipes/tvshow.nfo"))
	in := watchWith(t, s, cfg)
	for _, v := range []string{film, episode} {
		if !known(s, v) {
			t.Errorf("%s was not ingested beside the FIFOs", v)
		}
		if links := linksOf(t, s, v); len(links) != 0 {
			t.Errorf("%s links %v", v, links)
		}
	}
	if known(s, l.path("Movies/Pipe (2008).mkv")) {
		t.Error("a FIFO named as a video was ingested")
	}
	later := l.write("Movies/Later (2009).mkv", randBytes(t, 30<<10))
	waiting.For(t, "a file added after the FIFOs", func() bool { return known(s, later) })
	idle(t, in)
	if _, _, stuck := in.Stuck(); stuck {
		t.Error("the ingester says it is stuck")
	}
	closed := make(chan error, 1)
	go func() { closed <- in.Close() }()
	waiting.Recv(t, closed, "Close to return with FIFOs in the library")
	// A restart scans the same library to its end.
	watchWith(t, s, cfg)
	mustCheck(t, s)
}

// An NFO, a subtitle and a poster symlinked to files outside the library
// give the video nothing: no title, no plot, no link; the same sidecars
// symlinked to files inside the library work.
func TestBoundary_SymlinksOutside(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	outside := newLib(t)
	nfo := outside.write("secret.nfo", []byte("<movie><title>Secret</title><plot>not for peers</plot></movie>"))
	srt := outside.write("secret.srt", []byte("1\n00:00:01,000 --> 00:00:02,000\nsecret\n"))
	jpg := outside.write("secret.jpg", randBytes(t, 4<<10))
	cfg := testConfig(l)
	cfg.Extractors = []ingest.Extractor{ingest.FileInfo{}, ingest.Filename{}, ingest.NFOReader{}}
	leak := l.write("Movies/Leak (1977)/Leak (1977).mkv", randBytes(t, 40<<10))
	symlink(t, nfo, l.path("Movies/Leak (1977)/Leak (1977).nfo"))
	symlink(t, srt, l.path("Movies/Leak (1977)/Leak (1977).en.srt"))
	symlink(t, jpg, l.path("Movies/Leak (1977)/poster.jpg"))
	inside := l.write("Movies/Inside (1980)/Inside (1980).mkv", randBytes(t, 40<<10))
	l.write("extras/inside.nfo", []byte("<movie><title>Inside Title</title></movie>"))
	l.write("extras/inside.srt", []byte("1\n00:00:01,000 --> 00:00:02,000\nin\n"))
	symlink(t, "../../extras/inside.nfo", l.path("Movies/Inside (1980)/Inside (1980).nfo"))
	symlink(t, "../../extras/inside.srt", l.path("Movies/Inside (1980)/Inside (1980).en.srt"))
	watchWith(t, s, cfg)
	_, d := docOf(t, s, leak)
	for k, v := range d.Fields {
		if strings.Contains(v, "Secret") || strings.Contains(v, "not for peers") || strings.HasPrefix(k, "subtitles/") || strings.HasPrefix(k, "art/") {
			t.Errorf("the video's record carries %s = %q from outside the library", k, v)
		}
	}
	for _, p := range []string{"Leak (1977).nfo", "Leak (1977).en.srt", "poster.jpg"} {
		if known(s, l.path("Movies/Leak (1977)/"+p)) {
			t.Errorf("%s, a link out of the library, was ingested", p)
		}
	}
	_, d = docOf(t, s, inside)
	if d.Fields["titles/eng"] != "Inside Title" || d.Fields["subtitles/eng/0"] == "" {
		t.Errorf("sidecars symlinked inside the library: title %q, subtitle %q", d.Fields["titles/eng"], d.Fields["subtitles/eng/0"])
	}
	mustCheck(t, s)
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}
