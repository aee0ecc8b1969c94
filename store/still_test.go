package store_test

import (
	"errors"
	"testing"

	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// SetStill links a local root's still, which its catalog entry shows
// where it has no poster; a poster wins and keeps a link from being set;
// a link is dropped from any root, and an unknown root is ErrNotFound.
func TestSetStill(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	o := ingest(t, s, stat("/l/a.mkv", 10), content{1, 1})
	still, poster := content{2, 2}.hashes().IPFS, content{3, 3}.hashes().IPFS
	entry := func() store.Summary {
		t.Helper()
		e := must[[]store.Summary](t)(s.CatalogEntries(ctx, []store.RootID{o.Root}))
		if len(e) != 1 {
			t.Fatalf("entries: %v", e)
		}
		return e[0]
	}

	if changed := must[bool](t)(s.SetStill(ctx, o.Root, still)); !changed {
		t.Error("SetStill: nothing changed")
	}
	if changed := must[bool](t)(s.SetStill(ctx, o.Root, still)); changed {
		t.Error("SetStill again: changed")
	}
	if got := entry().Poster; got != still {
		t.Errorf("the entry's poster: %q, want the still %q", got, still)
	}
	must[int](t)(s.SetFields(ctx, o.Root, map[string]string{store.PosterField: poster}))
	if got := entry().Poster; got != poster {
		t.Errorf("the entry's poster with both: %q, want the poster %q", got, poster)
	}
	if changed := must[bool](t)(s.SetStill(ctx, o.Root, "")); !changed {
		t.Error("the link not dropped")
	}
	if changed := must[bool](t)(s.SetStill(ctx, o.Root, still)); changed {
		t.Error("a still linked beside a poster")
	}
	if d := must[store.Document](t)(s.Document(ctx, o.Root)); d.Fields[store.StillField] != "" {
		t.Errorf("the document's still: %q", d.Fields[store.StillField])
	}
	if _, err := s.SetStill(ctx, "01NOSUCHROOT000000000000000", still); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetStill of an unknown root: %v, want ErrNotFound", err)
	}
	mustCheck(t, s)
}
