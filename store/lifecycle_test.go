package store_test

import (
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

func TestArrive_MintAndAlias(t *testing.T) {
	s := storetest.New(t)
	c := content{1, 1}
	h := c.hashes()
	o := must[store.Outcome](t)(s.Arrive(ctx, stat("/lib/a.mkv", 100), h.Midhash))
	if o.Kind != store.KindMinted {
		t.Fatalf("Arrive = %v, want minted", o.Kind)
	}
	if got := must[store.RootID](t)(s.GetByCID(ctx, h.Midhash)); got != o.Root {
		t.Errorf("GetByCID(midhash) = %s, want %s", got, o.Root)
	}
	doc := must[store.Document](t)(s.Document(ctx, o.Root))
	if doc.FilePath() != "/lib/a.mkv" || doc.Fields["sizeByte"] != "100" || doc.CanonicalCID() != h.Midhash {
		t.Errorf("document after arrive = %+v", doc)
	}
	// The full pass adds the strong CIDs; canonical moves to the IPFS CID.
	if o := must[store.Outcome](t)(s.Confirm(ctx, stat("/lib/a.mkv", 100), h)); o.Kind != store.KindConfirmed {
		t.Fatalf("Confirm = %v", o.Kind)
	}
	doc = must[store.Document](t)(s.Document(ctx, o.Root))
	want := []string{h.IPFS, h.SHA256, h.Midhash}
	slices.Sort(want)
	if !reflect.DeepEqual(doc.CIDs, want) {
		t.Errorf("cids = %v, want %v", doc.CIDs, want)
	}
	if doc.CanonicalCID() != h.IPFS {
		t.Errorf("canonical = %s, want the IPFS CID %s", doc.CanonicalCID(), h.IPFS)
	}
	for _, c := range want {
		if got := must[store.RootID](t)(s.GetByCID(ctx, c)); got != o.Root {
			t.Errorf("GetByCID(%s) = %s", c, got)
		}
	}
	mustCheck(t, s)
}

// Arriving at a known path changes nothing and answers the path's state,
// as Path reads it.
func TestArrive_KnownPathState(t *testing.T) {
	s := storetest.New(t)
	f := stat("/lib/a", 5)
	ingest(t, s, f, content{1, 1})
	o := must[store.Outcome](t)(s.Arrive(ctx, store.FileStat{Path: "/lib/a", Size: 9, MtimeNs: 9}, content{2, 2}.hashes().Midhash))
	want := must[store.PathState](t)(s.Path(ctx, "/lib/a"))
	if o.Kind != store.KindExists || o.State != want || !want.Hashed || !want.Primary || want.Size != 5 {
		t.Errorf("Arrive(known path) = %+v, want exists with %+v", o, want)
	}
	if o := must[store.Outcome](t)(s.Arrive(ctx, stat("/lib/b", 6), content{3, 3}.hashes().Midhash)); o.State != (store.PathState{}) {
		t.Errorf("Arrive(new path) = %+v, want no state", o)
	}
	mustCheck(t, s)
}

func TestArrive_DuplicateConfirmedAndPromoted(t *testing.T) {
	s := storetest.New(t)
	c := content{1, 1}
	a := ingest(t, s, stat("/lib/a.mkv", 100), c)
	b := ingest(t, s, stat("/lib/copy/a.mkv", 100), c)
	if b.Kind != store.KindConfirmed || b.Root != a.Root {
		t.Fatalf("duplicate = %+v, want confirmed on %s", b, a.Root)
	}
	doc := must[store.Document](t)(s.Document(ctx, a.Root))
	if !reflect.DeepEqual(doc.Duplicates, []string{"/lib/copy/a.mkv"}) {
		t.Errorf("duplicates = %v", doc.Duplicates)
	}
	mustCheck(t, s)

	// Deleting the primary promotes the duplicate.
	o := must[store.Outcome](t)(s.RemovePath(ctx, "/lib/a.mkv"))
	if o.Kind != store.KindPromoted || o.Path != "/lib/copy/a.mkv" {
		t.Fatalf("RemovePath(primary) = %+v, want promoted", o)
	}
	doc = must[store.Document](t)(s.Document(ctx, a.Root))
	if doc.FilePath() != "/lib/copy/a.mkv" || len(doc.Duplicates) != 0 {
		t.Errorf("after promote: filePath %q duplicates %v", doc.FilePath(), doc.Duplicates)
	}
	mustCheck(t, s)

	// Deleting the last path deletes the root and everything it had.
	if o := must[store.Outcome](t)(s.RemovePath(ctx, "/lib/copy/a.mkv")); o.Kind != store.KindDeleted {
		t.Fatalf("RemovePath(last) = %v, want deleted", o.Kind)
	}
	for _, c := range []string{c.hashes().Midhash, c.hashes().SHA256, c.hashes().IPFS} {
		if _, err := s.GetByCID(ctx, c); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetByCID(%s) after delete: %v", c, err)
		}
	}
	if keys := dumpKeys(t, s); len(keys) != 1 || keys[0] != "meta:events" {
		t.Errorf("keys left after the last delete: %v", keys)
	}
	mustCheck(t, s)
}

func TestRemovePath_DuplicateOnly(t *testing.T) {
	s := storetest.New(t)
	c := content{1, 1}
	a := ingest(t, s, stat("/lib/a", 10), c)
	ingest(t, s, stat("/lib/b", 10), c)
	if o := must[store.Outcome](t)(s.RemovePath(ctx, "/lib/b")); o.Kind != store.KindRemoved {
		t.Fatalf("RemovePath(dup) = %v", o.Kind)
	}
	doc := must[store.Document](t)(s.Document(ctx, a.Root))
	if doc.FilePath() != "/lib/a" || len(doc.Duplicates) != 0 {
		t.Errorf("doc = %+v", doc)
	}
	if o := must[store.Outcome](t)(s.RemovePath(ctx, "/lib/nope")); o.Kind != store.KindGone {
		t.Errorf("RemovePath(unknown) = %v, want gone", o.Kind)
	}
	mustCheck(t, s)
}

func TestConfirm_MidhashCollisionSplits(t *testing.T) {
	s := storetest.New(t)
	first, other := content{7, 1}, content{7, 2} // same midhash, different bytes
	a := ingest(t, s, stat("/lib/a", 10), first)
	b := ingest(t, s, stat("/lib/b", 10), other)
	if b.Kind != store.KindSplit || b.Root == a.Root {
		t.Fatalf("collision = %+v, want split to its own root", b)
	}
	mid := first.hashes().Midhash
	if got := must[store.RootID](t)(s.GetByCID(ctx, mid)); got != a.Root {
		t.Errorf("midhash alias moved to %s; it stays with the first root %s", got, a.Root)
	}
	for _, r := range []store.RootID{a.Root, b.Root} {
		doc := must[store.Document](t)(s.Document(ctx, r))
		if !slices.Contains(doc.CIDs, mid) {
			t.Errorf("root %s lost the ambiguous midhash from its key-set", r)
		}
		if len(doc.Duplicates) != 0 {
			t.Errorf("root %s duplicates = %v", r, doc.Duplicates)
		}
	}
	if got := must[store.RootID](t)(s.GetByCID(ctx, other.hashes().SHA256)); got != b.Root {
		t.Errorf("sha2-256 of the split file resolves to %s", got)
	}
	mustCheck(t, s)

	// A third file equal to the second joins the second's root.
	c := ingest(t, s, stat("/lib/c", 10), other)
	if c.Kind != store.KindSplit || c.Root != b.Root {
		t.Fatalf("third = %+v, want it on %s", c, b.Root)
	}
	mustCheck(t, s)

	// Deleting the first root hands the midhash alias to the second.
	must[store.Outcome](t)(s.RemovePath(ctx, "/lib/a"))
	if got := must[store.RootID](t)(s.GetByCID(ctx, mid)); got != b.Root {
		t.Errorf("midhash after deleting its holder resolves to %s, want %s", got, b.Root)
	}
	mustCheck(t, s)
}

func TestConfirm_DuplicateBeforePrimaryIsUnknown(t *testing.T) {
	s := storetest.New(t)
	c := content{1, 1}
	h := c.hashes()
	a := must[store.Outcome](t)(s.Arrive(ctx, stat("/a", 5), h.Midhash))
	must[store.Outcome](t)(s.Arrive(ctx, stat("/b", 5), h.Midhash))
	if o := must[store.Outcome](t)(s.Confirm(ctx, stat("/b", 5), h)); o.Kind != store.KindUnknown {
		t.Fatalf("Confirm(dup before primary) = %v, want unknown", o.Kind)
	}
	must[store.Outcome](t)(s.Confirm(ctx, stat("/a", 5), h))
	if o := must[store.Outcome](t)(s.Confirm(ctx, stat("/b", 5), h)); o.Kind != store.KindConfirmed || o.Root != a.Root {
		t.Fatalf("Confirm(dup after primary) = %+v", o)
	}
	if o := must[store.Outcome](t)(s.Confirm(ctx, stat("/b", 6), h)); o.Kind != store.KindStale {
		t.Errorf("Confirm with another size = %v, want stale", o.Kind)
	}
	mustCheck(t, s)
}

func TestRename(t *testing.T) {
	s := storetest.New(t)
	c := content{1, 1}
	a := ingest(t, s, stat("/lib/a", 5), c)
	ingest(t, s, stat("/lib/b", 5), c)
	for _, mv := range [][2]string{{"/lib/a", "/lib/x/a"}, {"/lib/b", "/lib/x/b"}} {
		if o := must[store.Outcome](t)(s.Rename(ctx, mv[0], mv[1])); o.Kind != store.KindRenamed || o.Root != a.Root {
			t.Fatalf("Rename(%s) = %+v", mv[0], o)
		}
	}
	doc := must[store.Document](t)(s.Document(ctx, a.Root))
	if doc.FilePath() != "/lib/x/a" || !reflect.DeepEqual(doc.Duplicates, []string{"/lib/x/b"}) {
		t.Errorf("after rename: %q %v", doc.FilePath(), doc.Duplicates)
	}
	if _, err := s.Rename(ctx, "/lib/x/a", "/lib/x/b"); !errors.Is(err, store.ErrPathExists) {
		t.Errorf("Rename onto a known path: %v", err)
	}
	under := must[[]string](t)(s.PathsUnder(ctx, "/lib/x"))
	if !reflect.DeepEqual(under, []string{"/lib/x/a", "/lib/x/b"}) {
		t.Errorf("PathsUnder = %v", under)
	}
	evs := must[[]store.Event](t)(s.Events(ctx, "", 100))
	last := evs[len(evs)-1]
	if last.Type != store.EventRename || last.Path != "/lib/x/b" || last.OldPath != "/lib/b" || last.Midhash != c.hashes().Midhash {
		t.Errorf("last event = %+v", last)
	}
	mustCheck(t, s)
}

func TestChange(t *testing.T) {
	s := storetest.New(t)
	a := ingest(t, s, stat("/lib/a", 5), content{1, 1})
	must[int](t)(s.SetFields(ctx, a.Root, map[string]string{"title": "A"}))

	// Touch: same bytes, new mtime. Same root, fields kept.
	touched := store.FileStat{Path: "/lib/a", Size: 5, MtimeNs: 42}
	if o := must[store.Outcome](t)(s.Change(ctx, touched, content{1, 1}.hashes(), store.Meta{})); o.Kind != store.KindSame || o.Root != a.Root {
		t.Fatalf("Change(same bytes) = %+v", o)
	}
	st := must[store.PathState](t)(s.Path(ctx, "/lib/a"))
	if st.MtimeNs != 42 || !st.Hashed || !st.Primary {
		t.Errorf("path state after touch = %+v", st)
	}

	// New bytes: the old root is dropped (it became empty), a new one holds
	// the path.
	o := must[store.Outcome](t)(s.Change(ctx, stat("/lib/a", 6), content{2, 2}.hashes(), store.Meta{}))
	if o.Root == a.Root {
		t.Fatalf("Change(new bytes) kept the old root: %+v", o)
	}
	if _, err := s.Document(ctx, a.Root); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("old root still there: %v", err)
	}
	// New bytes equal to another file's: the path joins that root.
	b := ingest(t, s, stat("/lib/b", 7), content{3, 3})
	if o := must[store.Outcome](t)(s.Change(ctx, stat("/lib/a", 7), content{3, 3}.hashes(), store.Meta{})); o.Root != b.Root || o.Kind != store.KindConfirmed {
		t.Fatalf("Change(to b's bytes) = %+v, want confirmed on %s", o, b.Root)
	}
	doc := must[store.Document](t)(s.Document(ctx, b.Root))
	if !reflect.DeepEqual(doc.Duplicates, []string{"/lib/a"}) {
		t.Errorf("b duplicates = %v", doc.Duplicates)
	}
	mustCheck(t, s)
}

// Change writes the metadata that comes along in the same step, only on
// the root where the path ends up primary, as SetExtracted would.
func TestChange_WithMeta(t *testing.T) {
	s := storetest.New(t)
	meta := func(v int, title string) store.Meta {
		return store.Meta{Version: v, Owned: []string{"titles"}, Fields: map[string]string{"titles/eng": title}}
	}
	a := ingest(t, s, stat("/lib/a", 5), content{1, 1})
	b := ingest(t, s, stat("/lib/b", 7), content{3, 3})
	field := func(r store.RootID, f string) string { return must[store.Document](t)(s.Document(ctx, r)).Fields[f] }

	// Same bytes: written when newer than the last extraction, not again.
	if o := must[store.Outcome](t)(s.Change(ctx, store.FileStat{Path: "/lib/a", Size: 5, MtimeNs: 42}, content{1, 1}.hashes(), meta(3, "A"))); o.Kind != store.KindSame || field(a.Root, "titles/eng") != "A" {
		t.Fatalf("Change(same bytes, meta) = %+v, title %q", o, field(a.Root, "titles/eng"))
	}
	must[store.Outcome](t)(s.Change(ctx, store.FileStat{Path: "/lib/a", Size: 5, MtimeNs: 43}, content{1, 1}.hashes(), meta(3, "not again")))
	if got := field(a.Root, "titles/eng"); got != "A" {
		t.Errorf("a change with metadata as old as the last wrote it: %q", got)
	}
	// New bytes: the new root gets the metadata.
	o := must[store.Outcome](t)(s.Change(ctx, stat("/lib/a", 6), content{2, 2}.hashes(), meta(3, "New A")))
	if got := field(o.Root, "titles/eng"); got != "New A" || o.Root == a.Root {
		t.Errorf("Change(new bytes, meta) = %+v, title %q", o, got)
	}
	// Bytes of another root's: a duplicate, whose metadata is not written.
	must[store.Outcome](t)(s.Change(ctx, stat("/lib/a", 7), content{3, 3}.hashes(), meta(3, "Not B")))
	if got := field(b.Root, "titles/eng"); got == "Not B" {
		t.Errorf("a duplicate's change wrote its metadata on its root")
	}
	mustCheck(t, s)
}

func TestAddAlias(t *testing.T) {
	s := storetest.New(t)
	a := must[store.RootID](t)(s.Mint(ctx, stat("/a", 1)))
	b := must[store.RootID](t)(s.Mint(ctx, stat("/b", 2)))
	h := content{1, 1}.hashes()
	if err := s.AddAlias(ctx, a, h.SHA256); err != nil {
		t.Fatal(err)
	}
	if err := s.AddAlias(ctx, a, h.SHA256); err != nil {
		t.Fatalf("AddAlias twice: %v", err)
	}
	err := s.AddAlias(ctx, b, h.SHA256)
	var ce *store.AliasConflictError
	if !errors.Is(err, store.ErrAliasConflict) || !errors.As(err, &ce) || ce.Holder != a {
		t.Fatalf("AddAlias(foreign) = %v, want conflict held by %s", err, a)
	}
	if got := must[store.RootID](t)(s.GetByCID(ctx, h.SHA256)); got != a {
		t.Errorf("alias repointed to %s", got)
	}
	doc := must[store.Document](t)(s.Document(ctx, b))
	if !slices.Contains(doc.CIDs, h.SHA256) {
		t.Errorf("conflicting alias not recorded as a key-set member of b: %v", doc.CIDs)
	}
	if err := s.AddAlias(ctx, a, "QmNotCanonical"); err == nil {
		t.Error("AddAlias accepted a non-canonical CID")
	}
	if err := s.AddAlias(ctx, "01JKR8XW5T7QMV7AHNJ2DEFGHK", h.Midhash); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AddAlias(unknown root) = %v", err)
	}
	if _, err := s.Mint(ctx, stat("/a", 1)); !errors.Is(err, store.ErrPathExists) {
		t.Errorf("Mint(known path) = %v", err)
	}
	mustCheck(t, s)
}

func TestMergeIfAliasExists(t *testing.T) {
	s := storetest.New(t)
	h := content{1, 1}.hashes()
	a := ingest(t, s, stat("/a", 1), content{1, 1})
	must[int](t)(s.SetFields(ctx, a.Root, map[string]string{"title": "kept", "only/a": "x"}))
	n := must[store.RootID](t)(s.Mint(ctx, stat("/n", 1)))
	must[int](t)(s.SetFields(ctx, n, map[string]string{"title": "lost", "only/n": "y"}))

	if _, _, err := s.MergeIfAliasExists(ctx, n, h.Midhash); !errors.Is(err, store.ErrWeakLink) {
		t.Fatalf("merge through a midhash: %v, want ErrWeakLink", err)
	}
	got, merged, err := s.MergeIfAliasExists(ctx, n, h.SHA256)
	if err != nil || !merged || got != a.Root {
		t.Fatalf("MergeIfAliasExists = %s %v %v", got, merged, err)
	}
	doc := must[store.Document](t)(s.Document(ctx, a.Root))
	if doc.Fields["title"] != "kept" || doc.Fields["only/n"] != "y" || !reflect.DeepEqual(doc.Duplicates, []string{"/n"}) {
		t.Errorf("merged doc = %+v", doc)
	}
	if _, err := s.Document(ctx, n); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("merged-away root still readable: %v", err)
	}
	// An unknown strong CID becomes the root's own alias.
	m := must[store.RootID](t)(s.Mint(ctx, stat("/m", 3)))
	got, merged, err = s.MergeIfAliasExists(ctx, m, content{5, 5}.hashes().SHA256)
	if err != nil || merged || got != m {
		t.Fatalf("MergeIfAliasExists(new cid) = %s %v %v", got, merged, err)
	}
	mustCheck(t, s)
}

func TestDeleteRoot(t *testing.T) {
	s := storetest.New(t)
	a := ingest(t, s, stat("/a", 1), content{1, 1})
	ingest(t, s, stat("/b", 1), content{1, 1})
	must[int](t)(s.SetFields(ctx, a.Root, map[string]string{"x/y": "1"}))
	if err := s.DeleteRoot(ctx, a.Root); err != nil {
		t.Fatal(err)
	}
	if keys := dumpKeys(t, s); len(keys) != 1 {
		t.Errorf("keys left: %v", keys)
	}
	if err := s.DeleteRoot(ctx, a.Root); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteRoot twice = %v", err)
	}
	mustCheck(t, s)
}

func TestArrive_ConcurrentSameContent(t *testing.T) {
	s := storetest.New(t)
	for round := 0; round < 50; round++ {
		h := content{round, round}.hashes()
		var wg sync.WaitGroup
		outs := make([]store.Outcome, 2)
		for i := range outs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				o, err := s.Arrive(ctx, stat("/lib/"+string(rune('a'+i))+"/"+h.Midhash, 9), h.Midhash)
				if err != nil {
					t.Error(err)
				}
				outs[i] = o
			}()
		}
		wg.Wait()
		kinds := []store.Kind{outs[0].Kind, outs[1].Kind}
		slices.Sort(kinds)
		if !reflect.DeepEqual(kinds, []store.Kind{store.KindDuplicate, store.KindMinted}) || outs[0].Root != outs[1].Root {
			t.Fatalf("round %d: %+v, want one minted root and one duplicate of it", round, outs)
		}
	}
	if n := must[int64](t)(s.Roots(ctx)); n != 50 {
		t.Errorf("roots = %d, want 50", n)
	}
	mustCheck(t, s)
}

func TestSetFields_Validation(t *testing.T) {
	s := storetest.New(t)
	a := must[store.RootID](t)(s.Mint(ctx, stat("/a", 1)))
	for _, f := range []string{"filePath", "duplicates", "cids/x", "cids", "", "/x", "x/", "a//b"} {
		if _, err := s.SetFields(ctx, a, map[string]string{f: "v"}); err == nil {
			t.Errorf("SetFields(%q) accepted", f)
		}
	}
	if n := must[int](t)(s.SetFields(ctx, a, map[string]string{"t": "1"})); n != 1 {
		t.Errorf("first write changed %d", n)
	}
	if n := must[int](t)(s.SetFields(ctx, a, map[string]string{"t": "1"})); n != 0 {
		t.Errorf("same write again changed %d, want 0", n)
	}
}

func TestDocument_Nested(t *testing.T) {
	s := storetest.New(t)
	a := ingest(t, s, stat("/lib/a.mkv", 1), content{1, 1})
	must[int](t)(s.SetNested(ctx, a.Root, "", map[string]any{
		"titles":   map[string]any{"eng": "Inception"},
		"fileinfo": map[string]any{"streamdetails": map[string]any{"audio": []any{map[string]any{"codec": "aac"}, map[string]any{"codec": "dts"}}}},
	}))
	n := must[store.Document](t)(s.Document(ctx, a.Root)).Nested()
	audio := n["fileinfo"].(map[string]any)["streamdetails"].(map[string]any)["audio"].([]any)
	if len(audio) != 2 || audio[1].(map[string]any)["codec"] != "dts" {
		t.Errorf("audio = %#v", audio)
	}
	if n["canonical_cid"] != (content{1, 1}).hashes().IPFS || n["filePath"] != "/lib/a.mkv" {
		t.Errorf("nested = %#v", n)
	}
	if _, ok := n["cids"].([]string); !ok {
		t.Errorf("cids is %T, want a list", n["cids"])
	}
}
