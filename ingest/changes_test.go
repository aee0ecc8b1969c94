package ingest_test

import (
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

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
		waitFor(t, what, done)
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
