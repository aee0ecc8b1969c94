package ingest_test

import (
	"os"
	"slices"
	"testing"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

func TestScan_IngestsLibrary(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	movie := randBytes(t, 3<<20)
	l.write("Movies/Inception.2010.1080p.BluRay.x264.mkv", movie)
	l.write("Copies/inception.mkv", movie)
	l.write("notes.txt", []byte("hello library\n"))
	l.write(".hidden", []byte("x"))
	l.write(".trash/old.mkv", []byte("x"))
	l.write("download.mkv.part", []byte("x"))
	l.write("movie.crdownload", []byte("x"))
	l.write("torrent.mkv.!qB", []byte("x"))
	l.write("backup~", []byte("x"))

	p := scan(t, s, l)
	if p.FilesTotal != 3 || p.FilesDone != 3 || p.State != ingest.StateIdle {
		t.Errorf("progress = %+v, want 3 of 3 files, idle", p)
	}
	all, _ := s.PathsAfter(bg, "", 100)
	if len(all) != 3 {
		t.Fatalf("stored paths = %v, want the 3 visible complete files", all)
	}
	primary := l.path("Copies/inception.mkv") // smaller path arrives... either may be primary
	st, doc := docOf(t, s, l.path("Movies/Inception.2010.1080p.BluRay.x264.mkv"))
	if !st.Hashed {
		t.Error("full pass not recorded")
	}
	paths := append([]string{doc.FilePath()}, doc.Duplicates...)
	slices.Sort(paths)
	if len(paths) != 2 || paths[0] != primary {
		t.Errorf("root paths = %v, want both copies on one root", paths)
	}
	h, err := ingest.HashFile(bg, l.path("Copies/inception.mkv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{h.Midhash, h.SHA256, h.IPFS} {
		if !slices.Contains(doc.CIDs, c) {
			t.Errorf("key-set %v lacks %s", doc.CIDs, c)
		}
		if r, err := s.GetByCID(bg, c); err != nil || r != st.Root {
			t.Errorf("GetByCID(%s) = %s, %v", c, r, err)
		}
	}
	if doc.CanonicalCID() != h.IPFS || protocol.Rank(h.IPFS) != 40 {
		t.Errorf("canonical = %s, want IPFS CID %s", doc.CanonicalCID(), h.IPFS)
	}
	if doc.Fields["sizeByte"] != "3145728" || doc.Fields["mtime"] == "" {
		t.Errorf("schema fields = %v", doc.Fields)
	}
	_, txt := docOf(t, s, l.path("notes.txt"))
	if txt.Fields["fileType"] != "text" || txt.Fields["mimeType"] != "text/plain" {
		t.Errorf("file-info fields = %v", txt.Fields)
	}
	adds := 0
	for _, e := range events(t, s) {
		if e.Type == store.EventAdd {
			adds++
		}
	}
	if adds != 3 {
		t.Errorf("add events = %d, want 3", adds)
	}
	mustCheck(t, s)
}

func TestScan_RestartReconciles(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	l.write("a.bin", randBytes(t, 5000))
	l.write("b.bin", randBytes(t, 5000))
	l.write("dir/c.bin", randBytes(t, 2<<20))
	if p := scan(t, s, l); p.Hashed != 3 {
		t.Fatalf("first scan hashed %d files, want 3", p.Hashed)
	}
	// Unchanged: nothing is hashed again and no lifecycle event is written.
	before := len(events(t, s))
	if p := scan(t, s, l); p.Hashed != 0 {
		t.Errorf("rescan of an unchanged library hashed %d files", p.Hashed)
	}
	if ev := events(t, s)[before:]; len(ev) != 1 || ev[0].Type != store.EventReset {
		t.Errorf("rescan events = %+v, want only a reset", ev)
	}
	// While the node was down: one file deleted, one added, one changed.
	os.Remove(l.path("a.bin"))
	l.write("new.bin", randBytes(t, 7000))
	l.write("dir/c.bin", randBytes(t, 2<<20+1))
	if p := scan(t, s, l); p.Hashed != 2 {
		t.Errorf("reconciling scan hashed %d files, want 2 (new and changed)", p.Hashed)
	}
	if known(s, l.path("a.bin")) {
		t.Error("deleted file still stored")
	}
	for _, p := range []string{"b.bin", "new.bin", "dir/c.bin"} {
		st, doc := docOf(t, s, l.path(p))
		fi, _ := os.Stat(l.path(p))
		if !st.Hashed || st.Size != fi.Size() || doc.FilePath() != l.path(p) {
			t.Errorf("%s: state %+v", p, st)
		}
	}
	var kinds []string
	for _, e := range events(t, s)[before+1:] {
		kinds = append(kinds, e.Type)
	}
	for _, want := range []string{"delete", "add", "change"} {
		if !slices.Contains(kinds, want) {
			t.Errorf("events %v lack %q", kinds, want)
		}
	}
	mustCheck(t, s)
}

func TestScan_MidhashCollision(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	// Same size and same middle MiB, different first bytes: equal
	// midhash, different content.
	a := randBytes(t, 3<<20)
	b := append([]byte(nil), a...)
	b[0] ^= 0xFF
	l.write("a.bin", a)
	l.write("b.bin", b)
	scan(t, s, l)
	sa, da := docOf(t, s, l.path("a.bin"))
	sb, db := docOf(t, s, l.path("b.bin"))
	if sa.Root == sb.Root {
		t.Fatal("different content shares a root")
	}
	if sa.Midhash != sb.Midhash {
		t.Fatal("fixture is not a midhash collision")
	}
	for _, d := range []store.Document{da, db} {
		if !slices.Contains(d.CIDs, sa.Midhash) || len(d.Duplicates) != 0 {
			t.Errorf("doc %v: want the ambiguous midhash in the key-set and no duplicates", d)
		}
	}
	mustCheck(t, s)
}

func TestScan_SymlinksStayInside(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	outside := newLib(t)
	secret := outside.write("secret.bin", randBytes(t, 100))
	inside := l.write("real.bin", randBytes(t, 100))
	if err := os.Symlink(secret, l.path("escape.bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(inside, l.path("alias.bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside.dir, l.path("outdir")); err != nil {
		t.Fatal(err)
	}
	scan(t, s, l)
	if known(s, l.path("escape.bin")) || known(s, l.path("outdir/secret.bin")) {
		t.Error("followed a symlink out of the library")
	}
	st, doc := docOf(t, s, l.path("alias.bin"))
	if st.Root == "" || len(doc.Duplicates) != 1 {
		t.Errorf("a link inside the library should be a duplicate of its target: %+v", doc)
	}
}

func TestScan_NeverWritesLibrary(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	p := l.write("a.mkv", randBytes(t, 10000))
	before, _ := os.Stat(p)
	if err := os.Chmod(l.dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(l.dir, 0o755)
	scan(t, s, l)
	after, _ := os.Stat(p)
	if !after.ModTime().Equal(before.ModTime()) || after.Mode() != before.Mode() {
		t.Error("library file was modified")
	}
	entries, _ := os.ReadDir(l.dir)
	if len(entries) != 1 {
		t.Errorf("library has %d entries after scan", len(entries))
	}
}

// TestScan_EmptyLibraryKeepsStore: a library that comes up empty at
// start-up (an unmounted drive) does not wipe its roots.
func TestScan_EmptyLibraryKeepsStore(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	l.write("a.bin", randBytes(t, 1000))
	l.write("sub/b.bin", randBytes(t, 1000))
	scan(t, s, l)
	aside := t.TempDir()
	os.Rename(l.path("a.bin"), aside+"/a.bin")
	os.Rename(l.path("sub"), aside+"/sub")
	scan(t, s, l)
	if !known(s, l.path("a.bin")) || !known(s, l.path("sub/b.bin")) {
		t.Fatal("an empty library wiped the store")
	}
	// Once the library has files again, what is missing is deleted.
	l.write("c.bin", randBytes(t, 1000))
	scan(t, s, l)
	if known(s, l.path("a.bin")) || !known(s, l.path("c.bin")) {
		t.Error("missing files not deleted once the library is back")
	}
	mustCheck(t, s)
}

// TestScan_ResumesUnfinishedPass: a path that arrived but whose full pass
// never ran (the node died) is finished on restart, also when its bytes
// changed under an unchanged mtime.
func TestScan_ResumesUnfinishedPass(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	same := l.write("same.bin", randBytes(t, 3000))
	other := l.write("other.bin", randBytes(t, 3000))
	for _, p := range []string{same, other} {
		fi, _ := os.Stat(p)
		mid := func() string {
			if p == same {
				h, _ := ingest.HashFile(bg, p)
				return h.Midhash
			}
			h, _ := ingest.HashFile(bg, same) // a midhash of other bytes
			return h.Midhash
		}()
		if _, err := s.Arrive(bg, store.FileStat{Path: p, Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano()}, mid); err != nil {
			t.Fatal(err)
		}
	}
	scan(t, s, l)
	for _, p := range []string{same, other} {
		h, _ := ingest.HashFile(bg, p)
		st, doc := docOf(t, s, p)
		if !st.Hashed || !slices.Contains(doc.CIDs, h.SHA256) || st.Midhash != h.Midhash {
			t.Errorf("%s: %+v %v", p, st, doc.CIDs)
		}
	}
	_, a := docOf(t, s, same)
	_, b := docOf(t, s, other)
	if a.FilePath() == b.FilePath() {
		t.Error("different bytes ended on one root")
	}
	mustCheck(t, s)
}
