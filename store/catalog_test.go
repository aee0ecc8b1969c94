package store_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// TestCatalogEntries: each entry says what the root's document says
// (title, year, season and episode, size, type, canonical CID, source),
// read from the catalog fields alone, for local files, a file known
// only from peers (its fields are the peers' claims) and a local file a
// peer's record gave a member of its own; a root that does not exist is
// left out and the order of the roots is kept.
func TestCatalogEntries(t *testing.T) {
	s := storetest.New(t)
	movie := addFile(t, s, "/lib/Inception.2010.mkv", content{1, 1},
		map[string]string{"titles/eng": "Inception", "movieYear": "2010", "fileType": "video"})
	ep := addFile(t, s, "/lib/Show/Show.S02E03.mkv", content{2, 2},
		map[string]string{"titles/eng": "The Show", "season": "2", "episode": "3", "episodeTitle": "Third", "fileType": "video"})
	bare := addFile(t, s, "/lib/untitled.bin", content{3, 3}, nil)

	// Two peers' IDs in the shape of libp2p's; the first by ID is p1.
	const p1, p2 = "12D3KooWCatalogPeerOneCatalogPeerOneCatalogPeerOne", "12D3KooWCatalogPeerTwoCatalogPeerTwoCatalogPeerTwo"
	far := content{4, 4}.hashes()
	if _, err := s.MergeRecord(ctx, p1, []string{far.IPFS, far.SHA256}, map[string]string{"titles/eng": "Far Away", "sizeByte": "4242", "season": "0", "episode": "7"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MergeRecord(ctx, p2, []string{far.IPFS, far.SHA256}, map[string]string{"titles/eng": "Elsewhere", "fileType": "video"}); err != nil {
		t.Fatal(err)
	}
	remote := must[store.RootID](t)(s.GetByCID(ctx, far.IPFS))
	// A peer's record of the movie with a made-up IPFS CID: learned, so
	// it does not become the movie's canonical CID.
	made := content{5, 5}.hashes()
	if _, err := s.MergeRecord(ctx, p1, []string{content{1, 1}.hashes().SHA256, made.IPFS}, nil); err != nil {
		t.Fatal(err)
	}

	got := must[[]store.Summary](t)(s.CatalogEntries(ctx, []store.RootID{bare, remote, "01J0000000000000000000GONE", movie, ep}))
	want := []store.Summary{
		{Root: bare, Title: "untitled.bin", Size: 1003, Source: "local"},
		{Root: remote, Title: "Far Away", Season: ptr(0), Episode: ptr(7), Size: 4242, FileType: "video", Source: p1},
		{Root: movie, Title: "Inception", Year: 2010, Size: 1001, FileType: "video", Source: "local"},
		{Root: ep, Title: "The Show", Season: ptr(2), Episode: ptr(3), EpisodeTitle: "Third", Size: 1002, FileType: "video", Source: "local"},
	}
	if len(got) != len(want) {
		t.Fatalf("CatalogEntries = %+v, want %d entries", got, len(want))
	}
	for i, w := range want {
		d := must[store.Document](t)(s.Document(ctx, w.Root))
		w.CID = d.CanonicalCID()
		if !reflect.DeepEqual(got[i], w) {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], w)
		}
	}
	if got[2].CID == made.IPFS {
		t.Errorf("the movie's canonical CID is the peer's made-up %s", made.IPFS)
	}
	if !got[0].Local() || got[1].Local() {
		t.Errorf("Local() of %+v and %+v: want true, false", got[0], got[1])
	}
}

// TestCatalogEntries_Batches: more roots than one script reads come back
// whole and in order.
func TestCatalogEntries_Batches(t *testing.T) {
	s := storetest.New(t)
	var roots []store.RootID
	for i := range 600 {
		roots = append(roots, must[store.RootID](t)(s.Mint(ctx, stat(fmt.Sprintf("/lib/f%03d.mkv", i), int64(i+1)))))
	}
	got := must[[]store.Summary](t)(s.CatalogEntries(ctx, roots))
	if len(got) != len(roots) {
		t.Fatalf("%d entries for %d roots", len(got), len(roots))
	}
	for i, e := range got {
		if e.Root != roots[i] || e.Title != fmt.Sprintf("f%03d.mkv", i) || e.Size != int64(i+1) {
			t.Fatalf("entry %d = %+v, want root %s, f%03d.mkv", i, e, roots[i], i)
		}
	}
	if got, err := s.CatalogEntries(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("CatalogEntries(nil) = %v, %v", got, err)
	}
}

func ptr[T any](v T) *T { return &v }
