package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/metamesh/node/store"
)

func titled(words ...string) Entry {
	return Entry{Text: Text{Title: words}, Summary: store.Summary{Title: words[0]}}
}

func roots(tb testing.TB, t *TextIndex, q string) []store.RootID {
	tb.Helper()
	res, err := t.Search(q, 100, "")
	if err != nil {
		tb.Fatal(err)
	}
	var out []store.RootID
	for _, m := range res.Matches {
		out = append(out, m.Root)
	}
	slices.Sort(out)
	return out
}

// The index on disk outlives the node; one of another version, or one
// that does not open, is built anew (empty: the indexer's sweep fills
// it).
func TestTextIndex_OnDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "search")
	open := func() *TextIndex {
		t.Helper()
		ti, err := OpenTextIndex(dir)
		if err != nil {
			t.Fatal(err)
		}
		return ti
	}
	ti := open()
	if err := ti.Put("r1", titled("lighthouse")); err != nil {
		t.Fatal(err)
	}
	if err := ti.Close(); err != nil { // Close writes what was put
		t.Fatal(err)
	}
	ti = open()
	if got := roots(t, ti, "lighthouse"); !slices.Equal(got, []store.RootID{"r1"}) {
		t.Errorf("after a restart: %v", got)
	}
	ti.Close()

	if err := os.WriteFile(filepath.Join(dir, "VERSION"), []byte("0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ti = open()
	if got := roots(t, ti, "lighthouse"); got != nil {
		t.Errorf("an index of another version was kept: %v", got)
	}
	ti.Put("r2", titled("harbour"))
	ti.Close()

	if err := os.RemoveAll(filepath.Join(dir, "index")); err != nil {
		t.Fatal(err)
	}
	ti = open()
	defer ti.Close()
	if got := roots(t, ti, "harbour"); got != nil {
		t.Errorf("a broken index gave %v", got)
	}
	ti.Put("r3", titled("harbour"))
	ti.Flush()
	if got := roots(t, ti, "harbour"); !slices.Equal(got, []store.RootID{"r3"}) {
		t.Errorf("the index built anew: %v", got)
	}
}

// Keep drops what no root holds any more; a root gone or without text
// leaves at its put.
func TestTextIndex_KeepAndGone(t *testing.T) {
	ti, err := OpenTextIndex("")
	if err != nil {
		t.Fatal(err)
	}
	defer ti.Close()
	for _, r := range []store.RootID{"r1", "r2", "r3", "r4"} {
		ti.Put(r, titled("common"))
	}
	ti.Put("r4", Entry{}) // gone
	ti.Put("r3", Entry{Summary: store.Summary{Title: "a sidecar"}})
	if err := ti.Keep(map[store.RootID]bool{"r1": true, "r3": true}); err != nil {
		t.Fatal(err)
	}
	if got := roots(t, ti, "common"); !slices.Equal(got, []store.RootID{"r1"}) {
		t.Errorf("after Keep: %v, want r1 alone", got)
	}
}

func TestOneEdit(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"lighthouse", "lighthuose", true}, {"lighthouse", "lighthous", true}, {"lighthouse", "lightxhouse", true},
		{"lighthouse", "lighthouze", true}, {"lighthouse", "lighthouse", false}, {"lighthouse", "lihgthuose", false},
		{"night", "light", true}, {"night", "lights", false}, {"été", "ete", false}, {"été", "étè", true},
	} {
		if got := oneEdit(tt.a, tt.b); got != tt.want {
			t.Errorf("oneEdit(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// Puts written in many batches leave many segments; Compact merges them
// into one, and every search finds what it found.
func TestTextIndex_Compact(t *testing.T) {
	ti, err := OpenTextIndex(filepath.Join(t.TempDir(), "search"))
	if err != nil {
		t.Fatal(err)
	}
	defer ti.Close()
	words := []string{"harbour", "lighthouse", "keepers", "crimson", "winter"}
	for i := range 40 {
		r := store.RootID(fmt.Sprintf("r%02d", i))
		if err := ti.Put(r, titled(words[i%len(words)], fmt.Sprintf("part%d", i))); err != nil {
			t.Fatal(err)
		}
		if err := ti.Flush(); err != nil { // a batch, a segment
			t.Fatal(err)
		}
	}
	queries := []string{"harbour", "light", "keepres", "part7", "winter part9"}
	before := map[string][]store.RootID{}
	for _, q := range queries {
		before[q] = roots(t, ti, q)
		if len(before[q]) == 0 {
			t.Fatalf("%q finds nothing before the compaction", q)
		}
	}
	// bleve's own merger may have merged some meanwhile, all of them on
	// a busy machine.
	n := ti.Segments()
	if err := ti.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m := ti.Segments(); m != 1 {
		t.Errorf("%d segments after Compact (%d before), want 1", m, n)
	}
	for _, q := range queries {
		if got := roots(t, ti, q); !slices.Equal(got, before[q]) {
			t.Errorf("%q after Compact: %v, before %v", q, got, before[q])
		}
	}
}
