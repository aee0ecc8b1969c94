package store_test

import (
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// TestAnnouncedMany reads, for many roots at once, what Announced reads
// root by root: a confirmed local file's Canonical of its own digests,
// nothing for one still at its midhash, one known only from a peer, or a
// root that is gone.
func TestAnnouncedMany(t *testing.T) {
	s := storetest.New(t)
	confirmed := content{1, 1}
	o1, _, err := s.Ingest(ctx, stat("/l/a", 10), confirmed.hashes(), store.Meta{Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	o2 := must[store.Outcome](t)(s.Arrive(ctx, stat("/l/b", 20), content{2, 2}.hashes().Midhash))
	k, _, _ := crypto.GenerateEd25519Key(nil)
	p, _ := peer.IDFromPrivateKey(k)
	remote := content{3, 3}.hashes()
	if _, err := s.MergeRecord(ctx, p.String(), []string{remote.IPFS, remote.SHA256}, map[string]string{"titles/eng": "Remote"}); err != nil {
		t.Fatal(err)
	}
	peerRoot := must[store.RootID](t)(s.GetByCID(ctx, remote.IPFS))
	gone := store.NewRootID()
	roots := []store.RootID{o1.Root, o2.Root, peerRoot, gone}

	got := must[map[store.RootID]string](t)(s.AnnouncedMany(ctx, roots))
	want := map[store.RootID]string{o1.Root: confirmed.hashes().Canonical(), o2.Root: "", peerRoot: "", gone: ""}
	for _, r := range roots {
		one := must[string](t)(s.Announced(ctx, r))
		if got[r] != want[r] || one != want[r] {
			t.Errorf("root %s: AnnouncedMany %q, Announced %q, want %q", r, got[r], one, want[r])
		}
	}
	if c := confirmed.hashes(); c.Canonical() != c.IPFS {
		t.Errorf("Canonical of a multi-chunk file's digests = %q, want its IPFS CID %q", c.Canonical(), c.IPFS)
	}
	if c := (store.Hashes{Midhash: confirmed.hashes().Midhash}); c.Canonical() != "" {
		t.Errorf("Canonical of a midhash alone = %q, want none", c.Canonical())
	}
}
