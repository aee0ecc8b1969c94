package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

func openOn(t *testing.T, srv *store.Server) *store.Store {
	t.Helper()
	s, err := store.Open(ctx, store.Options{URL: srv.URL(), Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// waitDoc waits until r's document meets cond, failing with the last
// document read (or the error reading it).
func waitDoc(t *testing.T, s *store.Store, r store.RootID, what string, cond func(store.Document) bool) {
	t.Helper()
	waiting.Until(t, what, func() string {
		doc, err := s.Document(ctx, r)
		if err == nil && cond(doc) {
			return ""
		}
		return fmt.Sprintf("%+v %v", doc, err)
	})
}

func TestFollow_OutsideWriters(t *testing.T) {
	srv := storetest.Server(t)
	s := openOn(t, srv)
	o := rawClient(t, srv)
	patterns := func() int64 { n, _ := o.PubSubNumPat(ctx).Result(); return n }
	before := patterns()
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); s.Changes().Run(fctx) }()
	t.Cleanup(func() { cancel(); <-done })
	r := ingest(t, s, stat("/l/a", 10), content{1, 1}).Root
	waiting.For(t, "the changes' subscription", func() bool { return patterns() > before })

	k := "file:" + string(r) + "/tmdb/id"
	if err := o.Set(ctx, k, "27205", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitDoc(t, s, r, "the outside field", func(d store.Document) bool { return d.Fields["tmdb/id"] == "27205" })
	if nested := must[store.Document](t)(s.Document(ctx, r)).Nested(); nested["tmdb"].(map[string]any)["id"] != "27205" {
		t.Errorf("nested = %v", nested["tmdb"])
	}
	mustCheck(t, s)

	if err := o.Del(ctx, k).Err(); err != nil {
		t.Fatal(err)
	}
	waitDoc(t, s, r, "the deleted field to go", func(d store.Document) bool { _, ok := d.Fields["tmdb/id"]; return !ok })
	if err := o.Set(ctx, "file:"+string(r)+"/rating", "8", 200*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	waitDoc(t, s, r, "the expiring field", func(d store.Document) bool { return d.Fields["rating"] == "8" })
	waitDoc(t, s, r, "the expired field to go", func(d store.Document) bool { _, ok := d.Fields["rating"]; return !ok })

	// Another type under a field name does not break the document.
	if err := o.HSet(ctx, "file:"+string(r)+"/weird", "a", "b").Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	must[store.Document](t)(s.Document(ctx, r))

	// A key-set member written from outside becomes an alias.
	extra := content{9, 9}.hashes().SHA256
	if err := o.Set(ctx, "file:"+string(r)+"/cids/"+extra, "true", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitDoc(t, s, r, "the outside member", func(d store.Document) bool { return slices.Contains(d.CIDs, extra) })
	if got := must[store.RootID](t)(s.GetByCID(ctx, extra)); got != r {
		t.Errorf("outside member resolves to %s", got)
	}

	// The outside writer's field goes with the root.
	if err := o.Set(ctx, k, "27205", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitDoc(t, s, r, "the outside field again", func(d store.Document) bool { return d.Fields["tmdb/id"] == "27205" })
	must[store.Outcome](t)(s.RemovePath(ctx, "/l/a"))
	if n, err := o.Exists(ctx, k, "file:"+string(r)+"/cids/"+extra).Result(); err != nil || n != 0 {
		t.Errorf("outside keys left after the root was deleted: %d %v", n, err)
	}
	if err := o.Del(ctx, "file:"+string(r)+"/weird").Err(); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
}

// Writes made while no node followed them are taken in by Repair; keys of
// deleted roots go with deleteOrphans.
func TestRepair_RebuildsFieldIndex(t *testing.T) {
	srv := storetest.Server(t)
	s := openOn(t, srv)
	o := rawClient(t, srv)
	r := ingest(t, s, stat("/l/a", 10), content{1, 1}).Root
	must[store.Document](t)(s.Document(ctx, r))
	o.Set(ctx, "file:"+string(r)+"/tmdb/id", "27205", 0)
	o.Del(ctx, "file:"+string(r)+"/mtime")
	o.Set(ctx, "file:01JKR8XW5T7QMV7AHNJ2DEFGHK/title", "gone root", 0)
	if err := s.DebugDelPath(ctx, "/l/a"); err != nil {
		t.Fatal(err)
	}
	if v := must[[]store.Violation](t)(s.Check(ctx)); len(v) < 3 {
		t.Fatalf("Check = %v, want the outside writes reported", v)
	}
	rep := must[store.RepairReport](t)(s.Repair(ctx, true))
	if rep.Listed != 1 || rep.Unlisted != 1 || rep.Deleted != 1 || rep.Paths != 1 {
		t.Errorf("Repair = %+v", rep)
	}
	mustCheck(t, s)
	if doc := must[store.Document](t)(s.Document(ctx, r)); doc.Fields["tmdb/id"] != "27205" {
		t.Errorf("document lacks the outside field: %v", doc.Fields)
	}
	// A second repair finds nothing to do.
	if rep := must[store.RepairReport](t)(s.Repair(ctx, true)); rep != (store.RepairReport{}) {
		t.Errorf("second Repair = %+v", rep)
	}
}
