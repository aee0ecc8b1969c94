package dav

import (
	"context"
	"slices"
	"testing"

	"github.com/metamesh/node/store"
)

func doc(root, cid string, fields map[string]string, peers ...string) store.Changed {
	return store.Changed{Root: store.RootID(root), Exists: true, Document: store.Document{Root: store.RootID(root), Fields: fields, CIDs: []string{cid}, Peers: peers}}
}

// TestLibrary_Take: the share follows the store's changes: a root put,
// changed, deleted, and a sweep that drops what it did not name; a
// household's name learned later renames its folder.
func TestLibrary_Take(t *testing.T) {
	names := map[string]string{}
	l := NewLibrary(func(peers ...string) map[string]string {
		out := map[string]string{}
		for _, p := range peers {
			if n, ok := names[p]; ok {
				out[p] = n
			}
		}
		return out
	})
	take := func(b store.ChangeBatch) {
		t.Helper()
		if err := l.Take(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	has := func(want ...string) {
		t.Helper()
		got := paths(l.Tree())
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Fatalf("%q not in %q", w, got)
			}
		}
	}
	heat := map[string]string{"filePath": "/lib/heat.mkv", "title": "Heat", "movieYear": "1995", "videoType": "movie", "fileType": "video", "sizeByte": "10", "mtime": "1700000000000000000"}
	take(store.ChangeBatch{Roots: []store.Changed{
		doc("01", "bafkreiheat", heat),
		doc("02", "bafkreipeer", map[string]string{"title": "Dune", "year": "2021", "fileType": "video", "mimeType": "video/x-matroska"}, "peerA"),
	}})
	has("Movies/Heat (1995)/Heat (1995).mkv", "From other households/peerA/Movies/Dune (2021)/Dune (2021).mkv")
	if e := l.Tree().Find("/Movies/Heat (1995)/Heat (1995).mkv"); e.Size != 10 || e.ModTime.Unix() != 1700000000 {
		t.Errorf("entry %+v", e)
	}

	names["peerA"] = "The Neighbours"
	has("From other households/The Neighbours/Movies/Dune (2021)/Dune (2021).mkv")

	heat["title"] = "Heat!"
	take(store.ChangeBatch{Roots: []store.Changed{doc("01", "bafkreiheat", heat)}})
	has("Movies/Heat! (1995)/Heat! (1995).mkv")

	take(store.ChangeBatch{Roots: []store.Changed{{Root: "02"}}})
	if got := paths(l.Tree()); slices.Contains(got, "From other households/") {
		t.Errorf("a deleted root still shows: %q", got)
	}

	take(store.ChangeBatch{Sweep: true, First: true, Last: true, Roots: []store.Changed{
		doc("03", "bafkreinew", map[string]string{"filePath": "/lib/new.mkv", "title": "New", "videoType": "movie", "fileType": "video"})}})
	if got := paths(l.Tree()); !slices.Equal(got, []string{"Movies/", "Movies/New/", "Movies/New/New.mkv", "Movies/New/New.nfo"}) {
		t.Errorf("after a sweep: %q", got)
	}
}
