package ingest_test

import (
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// Every change the watcher applies is logged at Info naming its files,
// relative to the library, as soon as the ingester goes idle; a burst is
// one line per kind with a count and the first names.
func TestWatch_ChangeLines(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	logs := &storetest.Buffer{}
	cfg := testConfig(l)
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	cfg.ProgressInterval = time.Hour // the lines come from going idle
	in := watchWith(t, s, cfg)

	// step makes a change, waits until the store has it and the ingester
	// is idle, and returns the change lines logged meanwhile.
	step := func(t *testing.T, what string, change func(), done func() bool) []string {
		t.Helper()
		before := len(logs.String())
		change()
		waiting.For(t, what, done)
		idle(t, in)
		var out []string
		for _, line := range strings.Split(logs.String()[before:], "\n") {
			if strings.Contains(line, "level=INFO") {
				out = append(out, line)
			}
		}
		return out
	}
	want := func(t *testing.T, got []string, msg string) {
		t.Helper()
		w := fmt.Sprintf("msg=%q component=ingest library=%s", msg, l.dir)
		if len(got) != 1 || !strings.Contains(got[0], w) {
			t.Errorf("lines = %q, want one with %s", got, w)
		}
	}
	hashed := func(rel string) func() bool {
		return func() bool { st, err := s.Path(bg, l.path(rel)); return err == nil && st.Hashed }
	}

	t.Run("added", func(t *testing.T) {
		got := step(t, "arrival", func() { l.write("Films/a.mkv", randBytes(t, 4096)) }, hashed("Films/a.mkv"))
		want(t, got, "added Films/a.mkv")
	})
	t.Run("renamed", func(t *testing.T) {
		got := step(t, "rename", func() {
			if err := os.Rename(l.path("Films/a.mkv"), l.path("Films/b.mkv")); err != nil {
				t.Fatal(err)
			}
		}, func() bool { return known(s, l.path("Films/b.mkv")) && !known(s, l.path("Films/a.mkv")) })
		want(t, got, "renamed Films/a.mkv → Films/b.mkv")
	})
	t.Run("changed", func(t *testing.T) {
		before, _ := s.Path(bg, l.path("Films/b.mkv"))
		got := step(t, "change", func() { l.write("Films/b.mkv", randBytes(t, 8192)) }, func() bool {
			st, err := s.Path(bg, l.path("Films/b.mkv"))
			return err == nil && st.Hashed && st.Root != before.Root
		})
		want(t, got, "changed Films/b.mkv")
	})
	t.Run("deleted", func(t *testing.T) {
		got := step(t, "delete", func() { os.Remove(l.path("Films/b.mkv")) }, func() bool { return !known(s, l.path("Films/b.mkv")) })
		want(t, got, "deleted Films/b.mkv")
	})
	t.Run("a burst is one line", func(t *testing.T) {
		got := step(t, "five arrivals", func() {
			for i := range 5 {
				l.write(fmt.Sprintf("batch/%d.mkv", i), randBytes(t, 4096))
			}
		}, func() bool {
			for i := range 5 {
				if !hashed(fmt.Sprintf("batch/%d.mkv", i))() {
					return false
				}
			}
			return true
		})
		re := regexp.MustCompile(`msg="added 5 files: batch/\d\.mkv, batch/\d\.mkv, batch/\d\.mkv, …" component=ingest library=`)
		if len(got) != 1 || !re.MatchString(got[0]) {
			t.Errorf("lines = %q, want one matching %s", got, re)
		}
	})
}

// TestScan_ChangesWhileStopped: the first scan after a restart tells
// what changed while the node was stopped as the watcher tells it while
// it runs, one line per kind, relative to the library: a file added, one
// changed, one deleted, and one renamed and a whole folder moved (the
// files keep their roots and are not hashed again). A first ingest, into
// a store that knew none of the library, tells only its progress.
func TestScan_ChangesWhileStopped(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	old := time.Now().Add(-time.Hour) // settled long ago, as a library is
	put := func(rel string, n int) {
		t.Helper()
		p := l.write(rel, randBytes(t, n))
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	put("Films/a.mkv", 4096)
	put("Films/b.mkv", 5000)
	put("Films/c.mkv", 6000)
	put("Shows/S1/e1.mkv", 2<<20) // a large file: the midhash route
	put("Shows/S1/e2.mkv", 7000)
	scanLogged := func() (ingest.Progress, []string) {
		t.Helper()
		logs := &storetest.Buffer{}
		cfg := testConfig(l)
		cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
		p, err := ingest.Scan(bg, s, cfg, time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		var msgs []string
		for _, line := range strings.Split(logs.String(), "\n") {
			if !strings.Contains(line, "level=INFO") || !strings.Contains(line, "library="+l.dir) {
				continue
			}
			if m := regexp.MustCompile(`msg="([^"]*)"`).FindStringSubmatch(line); m != nil {
				msgs = append(msgs, m[1])
			}
		}
		return p, msgs
	}
	if _, msgs := scanLogged(); len(msgs) != 0 {
		t.Errorf("a first ingest told its files one by one: %q", msgs)
	}
	roots := map[string]store.RootID{}
	for _, rel := range []string{"Films/a.mkv", "Shows/S1/e1.mkv", "Shows/S1/e2.mkv"} {
		st, _ := docOf(t, s, l.path(rel))
		roots[rel] = st.Root
	}

	// While the node is stopped.
	if err := os.Rename(l.path("Films/a.mkv"), l.path("Films/a (2019).mkv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(l.path("Shows/S1"), l.path("Shows/Season 1")); err != nil {
		t.Fatal(err)
	}
	os.Remove(l.path("Films/b.mkv"))
	put("Films/c.mkv", 6100)
	put("Films/d.mkv", 8000)

	p, msgs := scanLogged()
	var renamed string
	var others []string
	for _, m := range msgs {
		if strings.HasPrefix(m, "renamed ") {
			renamed = m
			continue
		}
		others = append(others, m)
	}
	slices.Sort(others)
	if want := []string{"added Films/d.mkv", "changed Films/c.mkv", "deleted Films/b.mkv"}; !slices.Equal(others, want) {
		t.Errorf("lines %q, want %q and one of renames", msgs, want)
	}
	moves, ok := strings.CutPrefix(renamed, "renamed 3 files: ")
	got := strings.Split(moves, ", ")
	slices.Sort(got)
	if want := []string{"Films/a.mkv → Films/a (2019).mkv", "Shows/S1/e1.mkv → Shows/Season 1/e1.mkv", "Shows/S1/e2.mkv → Shows/Season 1/e2.mkv"}; !ok || !slices.Equal(got, want) {
		t.Errorf("renames told as %q, want renamed 3 files: %q", renamed, want)
	}
	for rel, was := range map[string]string{"Films/a (2019).mkv": "Films/a.mkv", "Shows/Season 1/e1.mkv": "Shows/S1/e1.mkv", "Shows/Season 1/e2.mkv": "Shows/S1/e2.mkv"} {
		if st, _ := docOf(t, s, l.path(rel)); st.Root != roots[was] {
			t.Errorf("%s has root %s, %s had %s", rel, st.Root, was, roots[was])
		}
		if known(s, l.path(was)) {
			t.Errorf("%s is still known", was)
		}
	}
	// Hashed: the changed file and the new one; no moved file.
	if p.Hashed != 2 || p.FilesDone != 5 || p.FilesTotal != 5 {
		t.Errorf("scan: %d hashed, %d/%d files; want 2 hashed, 5/5", p.Hashed, p.FilesDone, p.FilesTotal)
	}
	mustCheck(t, s)
}
