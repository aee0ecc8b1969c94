package share_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/node/share"
)

// A household that does not share its files still serves the blocks of
// the files Config.Art names, indexed at ingest or on the first want (a
// file of several blocks whole), asking Config.Art once per file, not
// per block; any other file's wants are answered DONT_HAVE.
func TestFetch_ArtWithoutSharing(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	art := map[string]bool{}
	asked := map[string]int{}
	a := newHousehold(t, false, func(c *share.Config) {
		c.Art = func(_ context.Context, root cid.Cid) bool {
			mu.Lock()
			defer mu.Unlock()
			asked[root.String()]++
			return art[string(root.Hash())]
		}
	})
	b := newHousehold(t, false, nil)
	link(t, b, a)
	poster := random(700 << 10) // three blocks
	posterRoot, _ := a.add(t, poster, false)
	fanart := random(100 << 10) // one
	fanartRoot, _ := a.add(t, fanart, true)
	filmRoot, _ := a.add(t, random(1<<20), true)
	mu.Lock()
	art[string(posterRoot.Hash())], art[string(fanartRoot.Hash())] = true, true
	mu.Unlock()

	for _, f := range []struct {
		root cid.Cid
		data []byte
	}{{posterRoot, poster}, {fanartRoot, fanart}} {
		got, err := fetchAll(t, b, a, f.root)
		if err != nil || !bytes.Equal(got, f.data) {
			t.Fatalf("artwork %s: %d bytes (%v), want %d", f.root, len(got), err, len(f.data))
		}
	}
	_, err := b.x.Fetch(context.Background(), filmRoot, []peer.ID{a.h.ID()})
	var u *share.UnavailableError
	if !errors.As(err, &u) || len(u.Sources) != 1 || u.Sources[0].State != "does not share" {
		t.Fatalf("a file that is no artwork: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked[posterRoot.String()] != 1 {
		t.Errorf("Config.Art asked %d times of a file of three blocks, want once", asked[posterRoot.String()])
	}
}
