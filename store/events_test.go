package store_test

import (
	"testing"

	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

func TestEvents_Lifecycle(t *testing.T) {
	s := storetest.New(t)
	c := content{1, 1}
	ingest(t, s, stat("/a", 1), c)
	must[store.Outcome](t)(s.Rename(ctx, "/a", "/b"))
	must[store.Outcome](t)(s.Change(ctx, stat("/b", 2), content{2, 2}.hashes(), store.Meta{}))
	must[store.Outcome](t)(s.RemovePath(ctx, "/b"))
	if err := s.AppendEvent(ctx, store.Event{Type: store.EventReset}); err != nil {
		t.Fatal(err)
	}
	evs := lifecycle(must[[]store.Event](t)(s.Events(ctx, "", 100)))
	want := []struct{ typ, path, old string }{
		{"add", "/a", ""}, {"rename", "/b", "/a"}, {"change", "/b", ""}, {"delete", "/b", ""}, {"reset", "", ""},
	}
	if len(evs) != len(want) {
		t.Fatalf("events = %+v", evs)
	}
	for i, w := range want {
		if e := evs[i]; e.Type != w.typ || e.Path != w.path || e.OldPath != w.old || e.Timestamp == 0 {
			t.Errorf("event %d = %+v, want %+v", i, e, w)
		}
	}
	if evs[0].Midhash != c.hashes().Midhash {
		t.Errorf("add event midhash = %q", evs[0].Midhash)
	}
	// Resuming after an ID returns only what follows.
	rest := lifecycle(must[[]store.Event](t)(s.Events(ctx, evs[2].ID, 100)))
	if len(rest) != 2 || rest[0].Type != "delete" {
		t.Errorf("events after %s = %+v", evs[2].ID, rest)
	}
}

// lifecycle keeps the path lifecycle events of evs.
func lifecycle(evs []store.Event) []store.Event {
	var out []store.Event
	for _, e := range evs {
		if e.Lifecycle() {
			out = append(out, e)
		}
	}
	return out
}
