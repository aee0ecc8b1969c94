package ingest_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store/storetest"
)

// TestWatch_DirectoryCopiedThenDeleted: a copy-then-delete of a directory
// is a delete and an add (new mtimes), and ends with every file stored
// once and nothing left behind after the files go.
func TestWatch_DirectoryCopiedThenDeleted(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	in := watch(t, s, l)
	data := randBytes(t, 2<<20)
	l.write("a.mkv", data)
	l.write("copy/dup.mkv", data)
	waiting.For(t, "both files", func() bool {
		st, err := s.Path(bg, l.path("copy/dup.mkv"))
		st2, err2 := s.Path(bg, l.path("a.mkv"))
		return err == nil && err2 == nil && st.Hashed && st2.Hashed
	})
	if out, err := exec.Command("cp", "-r", l.path("copy"), l.path("moved")).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	os.RemoveAll(l.path("copy"))
	waiting.For(t, "the copy", func() bool { return known(s, l.path("moved/dup.mkv")) && !known(s, l.path("copy/dup.mkv")) })
	idle(t, in)
	os.Remove(l.path("a.mkv"))
	os.RemoveAll(l.path("moved"))
	waiting.For(t, "deletes", func() bool { return !known(s, l.path("a.mkv")) && !known(s, l.path("moved/dup.mkv")) })
	idle(t, in)
	if n, _ := s.Roots(bg); n != 0 {
		left, _ := s.PathsAfter(bg, "", 100)
		t.Errorf("roots left: %d (paths %v)", n, left)
	}
	mustCheck(t, s)
}
