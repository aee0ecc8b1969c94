package ingest_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// A library moved away is unavailable, not emptied: nothing of it is
// deleted; moved back, it is watched and rescanned without a restart,
// the move made meanwhile is a rename, nothing is hashed again, and a
// file copied in afterwards is taken in.
func TestLibrary_MovedAwayAndBack(t *testing.T) {
	s := storetest.New(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := &lib{tb: t, dir: filepath.Join(base, "films")}
	away := filepath.Join(base, "elsewhere")
	a := l.write("a.bin", randBytes(t, 3000))
	b := l.write("sub/b.bin", randBytes(t, 4000))
	c := l.write("c.bin", randBytes(t, 5000))
	logs := &storetest.Buffer{}
	cfg := testConfig(l)
	cfg.LibraryCheck = 20 * time.Millisecond
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	in := watchWith(t, s, cfg)
	for _, p := range []string{a, b, c} {
		if !known(s, p) {
			t.Fatalf("%s not ingested", p)
		}
	}
	if _, err := os.Stat(l.path(ingest.MarkerName)); err != nil {
		t.Errorf("no marker in the library's root: %v", err)
	}
	before := len(events(t, s))

	if err := os.Rename(l.dir, away); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the library to be unavailable", func() bool { return !in.Libraries()[0].Available })
	if st := in.Libraries()[0]; st.Dir != l.dir || !strings.Contains(st.Reason, "gone") {
		t.Errorf("state = %+v, want %s gone", st, l.dir)
	}
	if err := in.Unavailable(l.dir); err == nil || err.Error() != "library unavailable: "+l.dir {
		t.Errorf("Unavailable = %v", err)
	}
	// Changed while away: a file moved into a subfolder.
	if err := os.Rename(filepath.Join(away, "a.bin"), filepath.Join(away, "sub", "a-moved.bin")); err != nil {
		t.Fatal(err)
	}
	idle(t, in)
	for _, p := range []string{a, b, c} {
		if !known(s, p) {
			t.Errorf("%s forgotten while its library was away", p)
		}
	}

	back := time.Now()
	if err := os.Rename(away, l.dir); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the library to be available again", func() bool { return in.Libraries()[0].Available })
	moved := l.path("sub/a-moved.bin")
	waiting.For(t, "the move made while away to be reconciled", func() bool { return known(s, moved) && !known(s, a) })
	waiting.For(t, "the rescan after the return to finish", func() bool {
		p := in.Progress()
		return p.StartedAt.After(back) && p.State == ingest.StateWatching
	})
	idle(t, in)
	if p := in.Progress(); p.Hashed != 0 {
		t.Errorf("the rescan after the return hashed %d files, want 0 (nothing changed)", p.Hashed)
	}
	d := l.write("sub/d.bin", randBytes(t, 2000))
	waiting.For(t, "a file copied in after the return to be ingested", func() bool { return known(s, d) })

	renamed := false
	for _, e := range events(t, s)[before:] {
		switch {
		case e.Type == store.EventDelete:
			t.Errorf("delete event %s: nothing was deleted", e.Path)
		case e.Type == store.EventRename && e.OldPath == a && e.Path == moved:
			renamed = true
		}
	}
	if !renamed {
		t.Errorf("no rename event %s → %s", a, moved)
	}
	for _, want := range []string{
		`level=WARN msg="library unavailable: ` + l.dir + `: its directory is gone`,
		`level=INFO msg="library available again: ` + l.dir + `"`,
	} {
		if strings.Count(logs.String(), want) != 1 {
			t.Errorf("log has %q %d times, want once:\n%s", want, strings.Count(logs.String(), want), logs)
		}
	}
	mustCheck(t, s)
}
