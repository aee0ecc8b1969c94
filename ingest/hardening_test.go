package ingest_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// A directory moved out of the library while Redis is down leaves the
// store once Redis answers again: the loop hands the lookup to a worker
// that retries, instead of logging the error and forgetting the paths.
func TestWatch_DirectoryMovedOutDuringOutage(t *testing.T) {
	dataDir := storetest.Dir(t)
	srv, err := store.StartServer(bg, store.ServerConfig{Dir: dataDir, Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(bg, store.Options{URL: srv.URL(), Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := newLib(t)
	a := l.write("show/a.bin", randBytes(t, 3000))
	b := l.write("show/sub/b.bin", randBytes(t, 4000))
	watch(t, s, l)
	if !known(s, a) || !known(s, b) {
		t.Fatal("not ingested before the outage")
	}

	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "show")
	if err := os.Rename(l.path("show"), outside); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the outage lasts a while
	srv2, err := store.StartServer(bg, store.ServerConfig{Dir: dataDir, Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv2.Close()
	waiting.For(t, "the moved-out paths to leave the store", func() bool { return !known(s, a) && !known(s, b) })
	if n, err := s.Roots(bg); err != nil || n != 0 {
		t.Errorf("roots left: %d %v", n, err)
	}
	mustCheck(t, s)
}

// Editing a file through one hard link updates the record of the other.
func TestWatch_HardLinkEdit(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	a := l.write("a.bin", randBytes(t, 5000))
	b := l.path("b.bin")
	if err := os.Link(a, b); err != nil {
		t.Fatal(err)
	}
	in := watch(t, s, l)
	stA, _ := docOf(t, s, a)
	stB, _ := docOf(t, s, b)
	if stA.Root != stB.Root {
		t.Fatalf("hard links on two roots: %s %s", stA.Root, stB.Root)
	}
	f, err := os.OpenFile(a, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(randBytes(t, 1000)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, _ := os.Stat(b)
	waiting.For(t, "the other link's record to follow", func() bool {
		st, err := s.Path(bg, b)
		return err == nil && st.Hashed && st.Size == fi.Size() && st.MtimeNs == fi.ModTime().UnixNano()
	})
	idle(t, in)
	stA, docA := docOf(t, s, a)
	stB, _ = docOf(t, s, b)
	if stA.Root != stB.Root || stA.Root == stB.Root && docA.Fields["sizeByte"] != "6000" {
		t.Errorf("after the edit: roots %s %s, size %s", stA.Root, stB.Root, docA.Fields["sizeByte"])
	}
	mustCheck(t, s)
}

// "mv known.tmp known.mkv" is one rename: the temp file's root keeps the
// path, the target's previous root lets go.
func TestWatch_AtomicReplaceByKnownTemp(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	target := l.write("film.mkv", randBytes(t, 3000))
	tmp := l.write("film.mkv.tmp", randBytes(t, 5000))
	link := l.path("latest.mkv") // a symlink to the replaced name
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	in := watch(t, s, l)
	tmpSt, _ := docOf(t, s, tmp)
	oldSt, _ := docOf(t, s, target)
	last := events(t, s)
	if err := os.Rename(tmp, target); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the replace", func() bool { return !known(s, tmp) })
	idle(t, in)
	st, _ := docOf(t, s, target)
	if st.Root != tmpSt.Root {
		t.Errorf("film.mkv is on root %s, want the temp file's %s", st.Root, tmpSt.Root)
	}
	if _, err := s.Document(bg, oldSt.Root); err == nil {
		t.Errorf("the target's previous root %s survived", oldSt.Root)
	}
	var got []store.Event
	for _, e := range events(t, s)[len(last):] {
		if e.Lifecycle() {
			got = append(got, e)
		}
	}
	if len(got) == 0 || got[0].Type != store.EventRename || got[0].OldPath != tmp || got[0].Path != target {
		t.Errorf("lifecycle events = %+v, want one rename first", got)
	}
	for _, e := range got[1:] {
		if e.Path != link {
			t.Errorf("event %+v for another path than the symlink", e)
		}
	}
	// The symlink now resolves to the new bytes: its record follows.
	waiting.For(t, "the symlink's record to follow", func() bool {
		st, err := s.Path(bg, link)
		return err == nil && st.Size == 5000 && st.Hashed
	})
	mustCheck(t, s)
}

// A running node releases stored paths under no configured library; a
// one-off scan of a subset leaves them alone.
func TestScan_ReleaseOutside(t *testing.T) {
	s := storetest.New(t)
	old, cur := newLib(t), newLib(t)
	o := old.write("old.bin", randBytes(t, 1000))
	c := cur.write("cur.bin", randBytes(t, 1000))
	cfg := testConfig(old)
	cfg.Libraries = []string{old.dir, cur.dir}
	if _, err := ingest.Scan(bg, s, cfg, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	scan(t, s, cur) // a subset: the other library's paths stay
	if !known(s, o) || !known(s, c) {
		t.Fatal("a subset scan released another library's paths")
	}
	cfg = testConfig(cur)
	cfg.ReleaseOutside = true
	if _, err := ingest.Scan(bg, s, cfg, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	if known(s, o) || !known(s, c) {
		t.Errorf("after a scan that releases: old known %v, current known %v", known(s, o), known(s, c))
	}
	mustCheck(t, s)
}

// Empty files are not content: they get no root and no CID.
func TestScan_EmptyFilesAreNotContent(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	for i := 0; i < 5; i++ {
		l.write(filepath.Join("empty", string(rune('a'+i))), nil)
	}
	full := l.write("full.bin", randBytes(t, 100))
	scan(t, s, l)
	if n, _ := s.Roots(bg); n != 1 || !known(s, full) {
		t.Errorf("roots = %d, want only the non-empty file", n)
	}
}

// A symlink never stays the primary when the real file is in the
// library, whichever is ingested first.
func TestScan_RealFileIsPrimaryOverSymlink(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	real := l.write("z-real.bin", randBytes(t, 2000))
	link := l.path("a-link.bin")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(l)
	cfg.Workers = 1 // the link (first in walk order) arrives first
	if _, err := ingest.Scan(bg, s, cfg, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	_, doc := docOf(t, s, real)
	if doc.FilePath() != real || !slices.Equal(doc.Duplicates, []string{link}) {
		t.Errorf("primary %q duplicates %v, want the real file primary", doc.FilePath(), doc.Duplicates)
	}
	mustCheck(t, s)
}

// Switching the library on one data directory serves only the new
// library's files once the node runs.
func TestWatch_SwitchedLibraryReleasesOldPaths(t *testing.T) {
	s := storetest.New(t)
	old, cur := newLib(t), newLib(t)
	data := randBytes(t, 4000)
	o := old.write("film.mkv", data)
	scan(t, s, old)
	c := cur.write("film.mkv", data) // the same file copied to the new library
	cfg := testConfig(cur)
	cfg.ReleaseOutside = true
	watchWith(t, s, cfg)
	if known(s, o) {
		t.Error("the old library's path is still served")
	}
	if _, doc := docOf(t, s, c); doc.FilePath() != c || len(doc.Duplicates) != 0 {
		t.Errorf("new file: primary %q duplicates %v", doc.FilePath(), doc.Duplicates)
	}
	mustCheck(t, s)
}

// A store written by an older parser is re-extracted by a rescan, without
// hashing anything again: fields the parser now reads differently are
// rewritten, fields it no longer finds are dropped, others stay.
func TestScan_ReextractsWithNewerParser(t *testing.T) {
	s, raw := storeWithRaw(t)
	l := newLib(t)
	p := l.write("Movies/Fear and Loathing in Las Vegas (1998)/Fear.and.Loathing.in.Las.Vegas.720p.HDDVD.DTS.x264-ESiR.mkv", mkv(t))
	scan(t, s, l)
	st, doc := docOf(t, s, p)
	if doc.Fields["movieYear"] != "1998" {
		t.Fatalf("first scan: movieYear %q", doc.Fields["movieYear"])
	}
	// What an older parser left: a wrong title, a stray field, no version.
	raw.Set(bg, "file:"+string(st.Root)+"/titles/eng", "Fear and Loathing in Las Vegas 720p", 0)
	raw.Set(bg, "file:"+string(st.Root)+"/release/cd", "1", 0)
	raw.HSet(bg, "fields:"+string(st.Root), "release/cd", "")
	raw.Set(bg, "file:"+string(st.Root)+"/tmdb/id", "1878", 0)
	raw.HSet(bg, "fields:"+string(st.Root), "tmdb/id", "")
	storetest.SetPathField(t, raw, p, "xv", "")

	prog := scan(t, s, l)
	if prog.Hashed != 0 {
		t.Errorf("the rescan hashed %d files, want none", prog.Hashed)
	}
	_, doc = docOf(t, s, p)
	if doc.Fields["titles/eng"] != "Fear and Loathing in Las Vegas" || doc.Fields["tmdb/id"] != "1878" {
		t.Errorf("after the rescan: title %q tmdb %q", doc.Fields["titles/eng"], doc.Fields["tmdb/id"])
	}
	if _, ok := doc.Fields["release/cd"]; ok {
		t.Error("a field the parser no longer finds survived")
	}
	mustCheck(t, s)
}

// mkv returns bytes a sniffer takes for Matroska video: an EBML header
// with the matroska doc type, then random bytes.
func mkv(tb testing.TB) []byte {
	head := []byte{0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01, 0x42, 0xF7, 0x81, 0x01, 0x42, 0xF2, 0x81, 0x04,
		0x42, 0xF3, 0x81, 0x08, 0x42, 0x82, 0x88, 'm', 'a', 't', 'r', 'o', 's', 'k', 'a', 0x42, 0x87, 0x81, 0x04, 0x42, 0x85, 0x81, 0x02}
	return append(head, randBytes(tb, 4000)...)
}

// A symlink's target deleted: the link dangles, so the file is gone from
// the store with every path, not kept alive through the link.
func TestWatch_SymlinkTargetDeleted(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	target := l.write("Other/target.mkv", randBytes(t, 40000))
	link := l.path("Other/link-to-target.mkv")
	if err := os.Symlink("target.mkv", link); err != nil {
		t.Fatal(err)
	}
	in := watch(t, s, l)
	st, _ := docOf(t, s, target)
	if lst, _ := docOf(t, s, link); lst.Root != st.Root {
		t.Fatalf("link on root %s, target on %s", lst.Root, st.Root)
	}
	before := len(events(t, s))
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "both paths to go", func() bool { return !known(s, target) && !known(s, link) })
	idle(t, in)
	if _, err := s.Document(bg, st.Root); err == nil {
		t.Errorf("root %s survived its target's deletion through a dangling link", st.Root)
	}
	for _, e := range events(t, s)[before:] {
		if e.Type == store.EventPromote {
			t.Errorf("the dangling link was promoted on the way out: %+v", e)
		}
	}
	mustCheck(t, s)
}

// Bytes no container signature matches under a video file's name are
// read as a video: the name gives the title, year, season and episode.
func TestScan_UnrecognisedBytesUnderAVideoName(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	for _, tc := range []struct {
		rel, mime string
		want      map[string]string
	}{
		{"Movies/Some.Film.2010.1080p.BluRay.x264-GRP.mkv", "video/matroska", map[string]string{"titles/eng": "Some Film", "movieYear": "2010"}},
		{"Show.Name.S01E02.720p.mp4", "video/mp4", map[string]string{"season": "1", "episode": "2"}},
		{"notes.txt.bin", "application/octet-stream", map[string]string{"fileType": "other"}},
	} {
		// Random bytes alone match a signature now and then (an MPEG
		// audio frame sync in the first two bytes, 1 in ~2,000): the head
		// is fixed, and no container starts like it.
		b := randBytes(t, 30000)
		copy(b, "NO-SIGNATURE STARTS THIS\x00")
		p := l.write(tc.rel, b)
		scan(t, s, l)
		_, doc := docOf(t, s, p)
		if doc.Fields["mimeType"] != tc.mime {
			t.Errorf("%s: mimeType %q, want %q", tc.rel, doc.Fields["mimeType"], tc.mime)
		}
		for f, v := range tc.want {
			if doc.Fields[f] != v {
				t.Errorf("%s: %s = %q, want %q (fields %v)", tc.rel, f, doc.Fields[f], v, doc.Fields)
			}
		}
	}
}
