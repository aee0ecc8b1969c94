package store_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

func TestMembers_AddRemove(t *testing.T) {
	s := storetest.New(t)
	for _, m := range []string{"bob", "Alice Ann", "ö-3_x"} {
		if err := s.AddMember(ctx, m); err != nil {
			t.Fatalf("AddMember(%q): %v", m, err)
		}
	}
	if err := s.AddMember(ctx, "bob"); !errors.Is(err, store.ErrMemberExists) {
		t.Errorf("AddMember(bob) again: %v, want ErrMemberExists", err)
	}
	for _, bad := range []string{"", " bob", "a/b", strings.Repeat("x", 41), "semi;colon"} {
		if err := s.AddMember(ctx, bad); !errors.Is(err, model.ErrBadRequest) {
			t.Errorf("AddMember(%q): %v, want ErrBadRequest", bad, err)
		}
	}
	if got, want := must[[]string](t)(s.Members(ctx)), []string{"Alice Ann", "bob", "ö-3_x"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Members = %q, want %q", got, want)
	}
	root := ingest(t, s, stat("/lib/a.mkv", 100), content{1, 1}).Root
	if err := s.SetWatch(ctx, "bob", root, model.WatchState{Position: 12, Duration: 100, LastPlayed: 5}); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveMember(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveMember(ctx, "bob"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RemoveMember(bob) again: %v, want ErrNotFound", err)
	}
	dump := must[map[string]string](t)(s.DebugDump(ctx))
	if v, ok := dump["watch:bob"]; ok {
		t.Errorf("a removed member's watch state is left: %s", v)
	}
	// A member added again starts with nothing watched.
	if err := s.AddMember(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Watch(ctx, "bob", root); ok || err != nil {
		t.Errorf("Watch of a new bob: ok %v, err %v; want none", ok, err)
	}
}

func TestWatch_SetRead(t *testing.T) {
	s := storetest.New(t)
	a := ingest(t, s, stat("/lib/a.mkv", 100), content{1, 1}).Root
	b := ingest(t, s, stat("/lib/b.mkv", 100), content{2, 2}).Root
	if err := s.SetWatch(ctx, "nobody", a, model.WatchState{Position: 1, Duration: 2}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetWatch of no member: %v, want ErrNotFound", err)
	}
	if _, err := s.Watching(ctx, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Watching of no member: %v, want ErrNotFound", err)
	}
	for _, m := range []string{"alice", "bob"} {
		if err := s.AddMember(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	wa := model.WatchState{Position: 754.5, Duration: 1800, LastPlayed: 1000}
	wb := model.WatchState{Position: 1800, Duration: 1800, Watched: true, LastPlayed: 2000}
	for _, w := range []struct {
		m string
		r store.RootID
		s model.WatchState
	}{{"alice", a, wa}, {"alice", b, wb}, {"bob", a, wb}} {
		if err := s.SetWatch(ctx, w.m, w.r, w.s); err != nil {
			t.Fatal(err)
		}
	}
	got, ok, err := s.Watch(ctx, "alice", a)
	if err != nil || !ok || got != wa {
		t.Errorf("Watch(alice, a) = %+v %v %v, want %+v", got, ok, err, wa)
	}
	all := must[map[store.RootID]model.WatchState](t)(s.Watching(ctx, "alice"))
	if want := map[store.RootID]model.WatchState{a: wa, b: wb}; !reflect.DeepEqual(all, want) {
		t.Errorf("Watching(alice) = %+v, want %+v", all, want)
	}
	// The key family is as docs/schema.md says.
	dump := must[map[string]string](t)(s.DebugDump(ctx))
	if !strings.Contains(dump["watch:alice"], string(a)) || !strings.Contains(dump["members"], "bob") {
		t.Errorf("keys: watch:alice %q, members %q", dump["watch:alice"], dump["members"])
	}
	if err := s.ForgetWatch(ctx, "alice", []store.RootID{b}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Watch(ctx, "alice", b); ok {
		t.Errorf("a forgotten state is still read")
	}
	mustCheck(t, s)
}

func TestSnapshot_KeepsWatchState(t *testing.T) {
	src := storetest.New(t)
	snapshotFixture(t, src)
	a := must[store.RootID](t)(src.GetByCID(ctx, content{1, 1}.hashes().SHA256))
	c := must[store.RootID](t)(src.GetByCID(ctx, content{2, 2}.hashes().SHA256))
	for _, m := range []string{"alice", "bob", "carol"} {
		if err := src.AddMember(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	wa := model.WatchState{Position: 60, Duration: 100, LastPlayed: 10}
	wc := model.WatchState{Position: 95, Duration: 100, Watched: true, LastPlayed: 20}
	must[struct{}](t)(struct{}{}, src.SetWatch(ctx, "alice", a, wa))
	must[struct{}](t)(struct{}{}, src.SetWatch(ctx, "bob", c, wc))
	data := exportSnapshot(t, src, true)

	dst := storetest.New(t)
	// The store being merged into has a member of its own, with state.
	d := ingest(t, dst, stat("/lib/a.mkv", 100), content{1, 1}).Root
	if err := dst.AddMember(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	mine := model.WatchState{Position: 5, Duration: 100, LastPlayed: 99}
	must[struct{}](t)(struct{}{}, dst.SetWatch(ctx, "alice", d, mine))
	must[store.ImportReport](t)(importSnapshot(dst, data, store.ImportOptions{Mode: store.ImportMerge}))
	mustCheck(t, dst)
	if got := must[[]string](t)(dst.Members(ctx)); !reflect.DeepEqual(got, []string{"alice", "bob", "carol"}) {
		t.Errorf("members after a merge: %q", got)
	}
	if got, _, _ := dst.Watch(ctx, "alice", d); got != mine {
		t.Errorf("a merge overwrote alice's own state: %+v, want %+v", got, mine)
	}
	dc := must[store.RootID](t)(dst.GetByCID(ctx, content{2, 2}.hashes().SHA256))
	if got, ok, _ := dst.Watch(ctx, "bob", dc); !ok || got != wc {
		t.Errorf("bob's state after a merge: %+v %v, want %+v", got, ok, wc)
	}

	// A replace makes the store's watch state the snapshot's.
	must[store.ImportReport](t)(importSnapshot(dst, data, store.ImportOptions{Mode: store.ImportReplace}))
	mustCheck(t, dst)
	ra := must[store.RootID](t)(dst.GetByCID(ctx, content{1, 1}.hashes().SHA256))
	if got, ok, _ := dst.Watch(ctx, "alice", ra); !ok || got != wa {
		t.Errorf("alice's state after a replace: %+v %v, want %+v", got, ok, wa)
	}
	if all := must[map[store.RootID]model.WatchState](t)(dst.Watching(ctx, "carol")); len(all) != 0 {
		t.Errorf("carol watched nothing, has %+v", all)
	}
}

func TestSnapshot_RefusesStrangersWatch(t *testing.T) {
	src := storetest.New(t)
	snapshotFixture(t, src)
	a := must[store.RootID](t)(src.GetByCID(ctx, content{1, 1}.hashes().SHA256))
	must[struct{}](t)(struct{}{}, src.AddMember(ctx, "alice"))
	must[struct{}](t)(struct{}{}, src.SetWatch(ctx, "alice", a, model.WatchState{Position: 1, Duration: 2, LastPlayed: 3}))
	lines := snapshotLines(t, exportSnapshot(t, src, false))
	for i, l := range lines {
		lines[i] = strings.ReplaceAll(l, `"members":["alice"]`, `"members":["bob"]`)
	}
	// The root line is refused before the trailer's digest is reached.
	dst := storetest.New(t)
	_, err := importSnapshot(dst, packSnapshot(lines), store.ImportOptions{Mode: store.ImportMerge})
	if !errors.Is(err, store.ErrBadSnapshot) || !strings.Contains(err.Error(), `watch of "alice", who is not among the header's members`) {
		t.Fatalf("import of a watch by no member: %v, want the line refused", err)
	}
	if got := must[[]string](t)(dst.Members(ctx)); len(got) != 0 {
		t.Errorf("a refused snapshot added members %q", got)
	}
}
