package ingest_test

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

func TestWatch_Lifecycle(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	in := watch(t, s, l)
	data := randBytes(t, 2<<20)

	t.Run("arrive", func(t *testing.T) {
		l.write("Show.Name.S01E05.1080p.WEB.x264.mkv", data)
		waiting.For(t, "arrival", func() bool {
			st, err := s.Path(bg, l.path("Show.Name.S01E05.1080p.WEB.x264.mkv"))
			return err == nil && st.Hashed
		})
		_, doc := docOf(t, s, l.path("Show.Name.S01E05.1080p.WEB.x264.mkv"))
		if len(doc.CIDs) != 3 {
			t.Errorf("cids = %v", doc.CIDs)
		}
	})
	t.Run("duplicate", func(t *testing.T) {
		l.write("copy/dup.mkv", data)
		waiting.For(t, "duplicate", func() bool {
			st, err := s.Path(bg, l.path("copy/dup.mkv"))
			return err == nil && st.Hashed
		})
		_, doc := docOf(t, s, l.path("copy/dup.mkv"))
		if doc.FilePath() != l.path("Show.Name.S01E05.1080p.WEB.x264.mkv") || !slices.Equal(doc.Duplicates, []string{l.path("copy/dup.mkv")}) {
			t.Errorf("doc = %q %v", doc.FilePath(), doc.Duplicates)
		}
	})
	t.Run("rename keeps the root", func(t *testing.T) {
		old := l.path("Show.Name.S01E05.1080p.WEB.x264.mkv")
		before, _ := docOf(t, s, old)
		if err := os.Rename(old, l.path("renamed.mkv")); err != nil {
			t.Fatal(err)
		}
		waiting.For(t, "rename", func() bool { return known(s, l.path("renamed.mkv")) && !known(s, old) })
		after, doc := docOf(t, s, l.path("renamed.mkv"))
		if after.Root != before.Root || doc.FilePath() != l.path("renamed.mkv") {
			t.Errorf("rename: root %s → %s, filePath %q", before.Root, after.Root, doc.FilePath())
		}
		ev := events(t, s)
		last := ev[len(ev)-1]
		if last.Type != store.EventRename || last.OldPath != old || last.Path != l.path("renamed.mkv") {
			t.Errorf("last event = %+v", last)
		}
	})
	t.Run("directory move", func(t *testing.T) {
		before, _ := docOf(t, s, l.path("copy/dup.mkv"))
		n := len(events(t, s))
		if err := os.Rename(l.path("copy"), l.path("moved")); err != nil {
			t.Fatal(err)
		}
		waiting.For(t, "directory move", func() bool { return known(s, l.path("moved/dup.mkv")) && !known(s, l.path("copy/dup.mkv")) })
		idle(t, in)
		after, doc := docOf(t, s, l.path("moved/dup.mkv"))
		if after.Root != before.Root || !slices.Equal(doc.Duplicates, []string{l.path("moved/dup.mkv")}) {
			t.Errorf("moved duplicate: %+v %v", after, doc.Duplicates)
		}
		var kinds []string
		for _, e := range events(t, s)[n:] {
			kinds = append(kinds, e.Type)
		}
		if !slices.Equal(kinds, []string{"rename"}) {
			t.Errorf("events for a directory move = %v, want one rename", kinds)
		}
		// Files created in the moved directory are still seen.
		l.write("moved/later.txt", []byte("later"))
		waiting.For(t, "file in moved directory", func() bool { return known(s, l.path("moved/later.txt")) })
	})
	t.Run("change", func(t *testing.T) {
		before, _ := docOf(t, s, l.path("moved/later.txt"))
		l.write("moved/later.txt", []byte("later, and longer"))
		waiting.For(t, "change", func() bool {
			st, err := s.Path(bg, l.path("moved/later.txt"))
			return err == nil && st.Hashed && st.Size == int64(len("later, and longer"))
		})
		after, _ := docOf(t, s, l.path("moved/later.txt"))
		if after.Root == before.Root {
			t.Error("new content kept the old root")
		}
		if _, err := s.Document(bg, before.Root); err == nil {
			t.Error("emptied root was not dropped")
		}
	})
	t.Run("delete promotes then removes", func(t *testing.T) {
		st, _ := docOf(t, s, l.path("renamed.mkv"))
		os.Remove(l.path("renamed.mkv"))
		waiting.For(t, "promotion", func() bool { return !known(s, l.path("renamed.mkv")) })
		_, doc := docOf(t, s, l.path("moved/dup.mkv"))
		if doc.FilePath() != l.path("moved/dup.mkv") || len(doc.Duplicates) != 0 {
			t.Errorf("after deleting the primary: %q %v", doc.FilePath(), doc.Duplicates)
		}
		os.RemoveAll(l.path("moved"))
		waiting.For(t, "delete", func() bool { return !known(s, l.path("moved/dup.mkv")) })
		if _, err := s.Document(bg, st.Root); err == nil {
			t.Error("root survived the deletion of its last path")
		}
	})
	idle(t, in)
	mustCheck(t, s)
	if n, _ := s.Roots(bg); n != 0 {
		left, _ := s.PathsAfter(bg, "", 100)
		t.Errorf("roots left: %d (paths %v)", n, left)
	}
}

// TestWatch_FileBeingCopied: a file that keeps growing is not ingested
// until it stops.
func TestWatch_FileBeingCopied(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	cfg := testConfig(l)
	cfg.Watch = true
	cfg.Settle = 500 * time.Millisecond // far above the pause between writes
	in, err := ingest.New(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(bg); err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	idle(t, in)
	f, err := os.Create(l.path("growing.mkv"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := randBytes(t, 64<<10)
	for i := 0; i < 30; i++ {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
		if known(s, l.path("growing.mkv")) {
			t.Fatalf("ingested after %d of 30 chunks, while still being written", i+1)
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.Close()
	waiting.For(t, "ingest after the copy finished", func() bool {
		st, err := s.Path(bg, l.path("growing.mkv"))
		return err == nil && st.Hashed
	})
	st, _ := docOf(t, s, l.path("growing.mkv"))
	if st.Size != 30*64<<10 {
		t.Errorf("stored size %d, want the complete file", st.Size)
	}
	for _, e := range events(t, s) {
		if e.Type == store.EventChange {
			t.Errorf("a change event means a partial file was ingested: %+v", e)
		}
	}
}

// TestWatch_Markers: the watcher tells OnMarker of a marker file created
// and removed, and of no other dot-file; neither is ingested.
func TestWatch_Markers(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	told := make(chan string, 16)
	cfg := testConfig(l)
	cfg.Markers = []string{".metamesh-private"}
	cfg.OnMarker = func(p string) { told <- p }
	l.write("Films/a.mkv", randBytes(t, 4096))
	watchWith(t, s, cfg)
	l.write("Films/.hidden", []byte("x"))
	m := l.write("Films/.metamesh-private", []byte("x"))
	got, _ := waiting.Recv(t, told, "the marker created")
	if got != m {
		t.Fatalf("OnMarker(%q), want %q", got, m)
	}
	// A file ingested after the marker's events (the loop takes events
	// in order) marks the end of them: what is told after the removal
	// is the removal's.
	l.write("Films/after.mkv", randBytes(t, 4096))
	waiting.For(t, "a file after the marker", func() bool { return known(s, l.path("Films/after.mkv")) })
	for len(told) > 0 {
		<-told
	}
	if err := os.Remove(m); err != nil {
		t.Fatal(err)
	}
	if got, _ = waiting.Recv(t, told, "the marker removed"); got != m {
		t.Fatalf("OnMarker(%q), want %q", got, m)
	}
	// A directory made with its marker at once: told whether the event
	// came before the directory's watch or its walk found the marker.
	n := l.write("New/.metamesh-private", []byte("x"))
	if got, _ = waiting.Recv(t, told, "the new directory's marker"); got != n {
		t.Fatalf("OnMarker(%q), want %q", got, n)
	}
	if known(s, m) || known(s, l.path("Films/.hidden")) {
		t.Error("a dot-file was ingested")
	}
}
