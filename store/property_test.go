package store_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// TestStore_RandomOperations runs long random sequences of lifecycle
// operations over a small universe of paths and contents (with midhash
// collisions) and checks every store invariant after each step, plus
// what the store says about each path against a model of the library.
func TestStore_RandomOperations(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			s := storetest.New(t)
			rng := rand.New(rand.NewPCG(seed, seed*7919))
			contents := []content{{1, 1}, {1, 2}, {2, 3}, {3, 4}, {3, 5}, {4, 6}}
			paths := []string{"/l/a", "/l/b", "/l/c", "/l/d/e", "/l/d/f", "/l/g"}
			lib := map[string]content{} // the model: what is on disk
			steps := 300
			if testing.Short() {
				steps = 60
			}
			for step := 0; step < steps; step++ {
				p := paths[rng.IntN(len(paths))]
				c := contents[rng.IntN(len(contents))]
				_, known := lib[p]
				var op string
				switch n := rng.IntN(10); {
				case !known && n < 4:
					op = "arrive"
					ingest(t, s, stat(p, int64(c.full)), c)
					lib[p] = c
				case !known && n < 7:
					op = "ingest"
					m := store.Meta{Version: 1, Owned: []string{"title"}, Fields: map[string]string{"title": p}}
					res, _, err := s.Ingest(ctx, stat(p, int64(c.full)), c.hashes(), m)
					if err != nil {
						t.Fatal(err)
					}
					if res.Kind == store.KindUnknown {
						t.Fatalf("ingest of %s left it unconfirmed: %+v", p, res)
					}
					lib[p] = c
				case known && n < 3:
					op = "remove"
					must[store.Outcome](t)(s.RemovePath(ctx, p))
					delete(lib, p)
				case known && n < 6:
					op = "change"
					o := must[store.Outcome](t)(s.Change(ctx, stat(p, int64(c.full)), c.hashes(), store.Meta{}))
					if o.Kind == store.KindUnknown { // joined a root whose primary is unconfirmed
						t.Fatalf("change left an unconfirmed duplicate: %+v", o)
					}
					lib[p] = c
				case known:
					op = "rename"
					q := paths[rng.IntN(len(paths))]
					if _, taken := lib[q]; taken {
						continue
					}
					must[store.Outcome](t)(s.Rename(ctx, p, q))
					lib[q] = lib[p]
					delete(lib, p)
				case n == 9:
					op = "delete-root"
					if r, err := s.GetByCID(ctx, c.hashes().SHA256); err == nil {
						doc := must[store.Document](t)(s.Document(ctx, r))
						must[struct{}](t)(struct{}{}, s.DeleteRoot(ctx, r))
						for _, q := range append(doc.Duplicates, doc.FilePath()) {
							delete(lib, q)
						}
					}
				default:
					continue
				}
				if v := must[[]store.Violation](t)(s.Check(ctx)); len(v) > 0 {
					t.Fatalf("step %d (%s %s): %v", step, op, p, v)
				}
				checkModel(t, s, lib, step, op)
			}
			checkReplay(t, s)
		})
	}
}

// checkModel: every file on disk is in the store under a root whose
// key-set has its sha2-256, and files with equal bytes share one root.
func checkModel(t *testing.T, s *store.Store, lib map[string]content, step int, op string) {
	t.Helper()
	byFull := map[int]store.RootID{}
	for p, c := range lib {
		st, err := s.Path(ctx, p)
		if err != nil {
			t.Fatalf("step %d (%s): path %s: %v", step, op, p, err)
		}
		doc := must[store.Document](t)(s.Document(ctx, st.Root))
		if !slices.Contains(doc.CIDs, c.hashes().SHA256) {
			t.Fatalf("step %d (%s): %s's root lacks its sha2-256", step, op, p)
		}
		if r, ok := byFull[c.full]; ok && r != st.Root {
			t.Fatalf("step %d (%s): equal bytes on two roots %s %s", step, op, r, st.Root)
		}
		byFull[c.full] = st.Root
	}
	all := must[[]string](t)(s.PathsAfter(ctx, "", 1000))
	if len(all) != len(lib) {
		t.Fatalf("step %d (%s): store has paths %v, library %v", step, op, all, strings.Join(keys(lib), " "))
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestCheck_FindsCorruption(t *testing.T) {
	tests := []struct {
		name    string
		corrupt func(s *store.Store, r store.RootID, h store.Hashes) error
		want    string
	}{
		{"dangling alias", func(s *store.Store, r store.RootID, h store.Hashes) error {
			return s.DebugSet(ctx, "cid:"+content{9, 9}.hashes().SHA256, string(r))
		}, "key-set"},
		{"missing alias", func(s *store.Store, r store.RootID, h store.Hashes) error {
			return s.DebugDel(ctx, "cid:"+h.SHA256)
		}, "has no cid:"},
		{"orphan field", func(s *store.Store, r store.RootID, h store.Hashes) error {
			return s.DebugSet(ctx, "file:"+string(r)+"/stray", "x")
		}, "not listed"},
		{"lost path index", func(s *store.Store, r store.RootID, h store.Hashes) error {
			return s.DebugDelPath(ctx, "/a")
		}, "indexed to"},
		{"orphan root keys", func(s *store.Store, r store.RootID, h store.Hashes) error {
			return s.DebugSet(ctx, "file:01JKR8XW5T7QMV7AHNJ2DEFGHK/title", "x")
		}, "no indexed root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := storetest.New(t)
			a := ingest(t, s, stat("/a", 1), content{1, 1})
			mustCheck(t, s)
			if err := tt.corrupt(s, a.Root, content{1, 1}.hashes()); err != nil {
				t.Fatal(err)
			}
			v := must[[]store.Violation](t)(s.Check(ctx))
			found := false
			for _, x := range v {
				found = found || strings.Contains(x.String(), tt.want)
			}
			if !found {
				t.Errorf("Check = %v, want a violation mentioning %q", v, tt.want)
			}
		})
	}
}
