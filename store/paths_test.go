package store_test

import (
	"slices"
	"testing"

	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// storetest stages path states in the order the store keeps them.
func TestPathFields_StoretestAgrees(t *testing.T) {
	if !slices.Equal(storetest.PathFields, store.PathFields) {
		t.Errorf("storetest.PathFields = %v, the store's %v", storetest.PathFields, store.PathFields)
	}
}

// A path is one member of the path index: paths that begin alike, or hold
// spaces and bytes that sort around the separator, are told apart by
// lookups and by every range.
func TestPathIndex_PathsThatBeginAlike(t *testing.T) {
	s := storetest.New(t)
	paths := []string{"/l/a", "/l/a b", "/l/a.x", "/l/a/x", "/l/a\x01", "/l/ab", "/l/a b/c d.mkv"}
	roots := map[string]store.RootID{}
	for i, p := range paths {
		roots[p] = ingest(t, s, stat(p, int64(10+i)), content{i + 1, i + 1}).Root
	}
	for i, p := range paths {
		st := must[store.PathState](t)(s.Path(ctx, p))
		if st.Root != roots[p] || st.Size != int64(10+i) || !st.Hashed || !st.Primary {
			t.Errorf("Path(%q) = %+v, want root %s size %d, hashed primary", p, st, roots[p], 10+i)
		}
	}
	if _, err := s.Path(ctx, "/l/a "); err == nil {
		t.Errorf(`Path("/l/a ") found a path that is not known`)
	}
	sorted := slices.Sorted(slices.Values(paths))
	var all []string
	for after := ""; ; {
		page := must[[]string](t)(s.PathsAfter(ctx, after, 2))
		if len(page) == 0 {
			break
		}
		all = append(all, page...)
		after = page[len(page)-1]
	}
	if !slices.Equal(all, sorted) {
		t.Errorf("PathsAfter pages = %q, want %q", all, sorted)
	}
	tests := []struct {
		dir  string
		want []string
	}{
		{"/l/a", []string{"/l/a/x"}},
		{"/l/a b", []string{"/l/a b/c d.mkv"}},
		{"/l", sorted},
		{"/m", nil},
	}
	for _, tt := range tests {
		if got := must[[]string](t)(s.PathsUnder(ctx, tt.dir)); !slices.Equal(got, tt.want) {
			t.Errorf("PathsUnder(%q) = %q, want %q", tt.dir, got, tt.want)
		}
	}
	got := must[[][]string](t)(s.PathsWithPrefixes(ctx, []string{"/l/a.", "/l/a b"}, 10))
	if !slices.Equal(got[0], []string{"/l/a.x"}) || !slices.Equal(got[1], []string{"/l/a b", "/l/a b/c d.mkv"}) {
		t.Errorf("PathsWithPrefixes = %q", got)
	}
	states := must[map[string]store.PathState](t)(s.Paths(ctx, append([]string{"/nowhere"}, paths...)))
	if len(states) != len(paths) {
		t.Errorf("Paths knows %d paths, want %d", len(states), len(paths))
	}
	for _, p := range paths {
		if states[p].Root != roots[p] || !states[p].Primary {
			t.Errorf("Paths[%q] = %+v", p, states[p])
		}
	}
	mustCheck(t, s)
}
