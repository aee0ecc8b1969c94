package share_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/dag"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node/share"
	"github.com/metamesh/node/store/storetest"
)

// fetchAll fetches root from a at b and reads it whole.
func fetchAll(t *testing.T, b, a *household, root cid.Cid) ([]byte, error) {
	t.Helper()
	f, err := b.x.Fetch(waiting.Context(t), root, []peer.ID{a.h.ID()})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// twelveLeaves is 3 MiB whose 12 leaves differ.
func twelveLeaves() []byte { return random(12 * dag.ChunkSize) }

// A file that shares its first 8 leaves with a partial copy indexed
// after it is fetched whole once the copy left the library: the shared
// leaves are served from the file itself.
func TestFetch_SharedBlocksAfterACopyLeft(t *testing.T) {
	t.Parallel()
	a, b := newHousehold(t, true, nil), newHousehold(t, false, nil)
	link(t, b, a)
	data := twelveLeaves()
	root, _ := a.add(t, data, true)
	copyRoot, copyPath := a.add(t, data[:8*dag.ChunkSize], true)
	if got, err := fetchAll(t, b, a, copyRoot); err != nil || !bytes.Equal(got, data[:8*dag.ChunkSize]) {
		t.Fatalf("the copy: %d bytes, %v", len(got), err)
	}
	a.leave(t, copyPath)
	got, err := fetchAll(t, b, a, root)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the file after its copy left: %d bytes (%v), want %d", len(got), err, len(data))
	}
	// A want of the copy finds it gone and drops its index: the file
	// keeps the blocks they shared. (From households with nothing in
	// their caches.)
	b2, b3 := newHousehold(t, false, nil), newHousehold(t, false, nil)
	link(t, b2, a)
	link(t, b3, a)
	if _, err := fetchAll(t, b2, a, copyRoot); !share.IsUnavailable(err) {
		t.Fatalf("the copy that left: %v, want it unavailable", err)
	}
	if ok, _ := a.x.Indexed(context.Background(), copyRoot); ok {
		t.Error("the copy that left is still indexed after a want found it gone")
	}
	if got, err := fetchAll(t, b3, a, root); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the file once its copy's index is dropped: %d bytes (%v), want %d", len(got), err, len(data))
	}
}

// An index of version 1 named a block two files hold by the file
// indexed last, and lost it when that file was forgotten: the start's
// sweep finds the file's blocks missing and indexes it again, and the
// file is fetched whole.
func TestSweep_IndexOfVersion1(t *testing.T) {
	t.Parallel()
	data := twelveLeaves()
	ix, err := dag.Build(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	lost := map[cid.Cid]bool{}
	for _, l := range ix.Leaves[:8] {
		lost[l.CID] = true
	}
	dir := t.TempDir()
	if err := share.WriteIndexV1(dir, ix, int64(len(data)), lost); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "big.bin")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var logs storetest.Buffer
	a := newHousehold(t, true, func(c *share.Config) {
		c.Dir = dir
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		c.Open = func(_ context.Context, root cid.Cid) (*share.Local, error) {
			if !root.Equals(ix.Root) {
				return nil, share.ErrNotLocal
			}
			f, err := os.Open(p)
			if err != nil {
				return nil, err
			}
			return &share.Local{File: f, Name: "big.bin", Path: p}, nil
		}
	})
	b := newHousehold(t, false, nil)
	link(t, b, a)
	waiting.For(t, "the sweep to index the file again", func() bool {
		return strings.Contains(logs.String(), "share: indexed a file's blocks")
	})
	got, err := fetchAll(t, b, a, ix.Root)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the file after the sweep: %d bytes (%v), want %d", len(got), err, len(data))
	}
}

// A block the index lost of a file a peer is fetching is found again:
// the want that misses it indexes the file again (the peer got the node
// that links it), instead of the fetch stalling.
func TestFetch_LostBlockIsIndexedAgain(t *testing.T) {
	t.Parallel()
	var logs storetest.Buffer
	a := newHousehold(t, true, func(c *share.Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	b := newHousehold(t, false, func(c *share.Config) { c.Stall = time.Minute })
	link(t, b, a)
	data := twelveLeaves()
	root, _ := a.add(t, data, true)
	ix, err := dag.Build(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := share.DropBlock(a.x, ix.Leaves[5].CID); err != nil {
		t.Fatal(err)
	}
	got, err := fetchAll(t, b, a, root)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("a file whose index lost a block: %d bytes (%v), want %d", len(got), err, len(data))
	}
	if !strings.Contains(logs.String(), `why="a peer wanted a block of it the block index had lost"`) {
		t.Errorf("the node did not say it indexed the file again:\n%s", logs.String())
	}
}

// A file that leaves the library while a peer fetches it: the fetch
// stalls and ends with an error that says the household answered
// DONT_HAVE, and the serving household logs why it did.
func TestFetch_StallSaysWhyOnBothSides(t *testing.T) {
	t.Parallel()
	var logs storetest.Buffer
	a := newHousehold(t, true, func(c *share.Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	b := newHousehold(t, false, func(c *share.Config) { c.Stall = 2 * time.Second })
	link(t, b, a)
	data := twelveLeaves()
	root, p := a.add(t, data, true)
	f, err := b.x.Fetch(waiting.Context(t), root, []peer.ID{a.h.ID()})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The root came; the file leaves before a leaf is wanted.
	if err := os.Rename(p, p+".away"); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	clear(a.files)
	a.mu.Unlock()
	got, err := io.ReadAll(f)
	if !errors.Is(err, share.ErrStalled) || !strings.Contains(err.Error(), "answered that it does not have block") {
		t.Fatalf("a fetch of a file that left: %d bytes, %v; want a stall saying the household does not have a block", len(got), err)
	}
	t.Logf("the fetching side: %v", err)
	// Whether the serving side still held the file open when the leaf's
	// want came (it left while served) or had closed it (no longer in
	// the library) is the machine's timing: either says why.
	if !strings.Contains(logs.String(), `msg="share: a want for a block of a file was answered DONT_HAVE"`) ||
		!strings.Contains(logs.String(), "left the library") && !strings.Contains(logs.String(), "no longer in the library") {
		t.Errorf("the serving side did not say why it refused:\n%s", logs.String())
	}
}
