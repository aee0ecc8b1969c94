package node_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/dag"
	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/kubotest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// A file that shares its first blocks with a partial copy of it (`head
// -c 2097152 big.bin > big-part.bin`) is still fetched whole by Kubo and
// by another household once the copy is removed and the node restarted:
// the block index keeps every file that holds a block, and forgetting
// the copy leaves them to big.bin.
func TestShare_SharedBlocksOutliveACopysRemoval(t *testing.T) {
	t.Parallel()
	kubotest.Binary(t)
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	data := make([]byte, 3<<20) // 12 leaves
	rand.Read(data)
	big, part := filepath.Join(lib, "big.bin"), filepath.Join(lib, "big-part.bin")
	writeOld(t, big, data)
	redisURL, dataDir := storetest.Server(t).URL(), storetest.Dir(t)
	cfg := func(c *node.Config) { c.ShareFiles, c.RedisURL, c.DataDir = true, redisURL, dataDir }
	a := startNodeWith(t, lib, cfg)
	ctx := waiting.Context(t)

	// The copy is indexed after big.bin: before, its 8 leaves named only
	// the copy.
	if err := os.WriteFile(part, data[:2<<20], 0o644); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the partial copy to be hashed", func() bool {
		st, err := a.Store().Path(ctx, part)
		return err == nil && st.Hashed
	})
	partRoot, err := dag.Build(bytes.NewReader(data[:2<<20]))
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := a.Share().Indexed(ctx, partRoot.Root); !ok {
		t.Fatal("the partial copy is not in the block index")
	}
	if err := os.Remove(part); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the partial copy's removal to be applied", func() bool {
		_, err := a.Store().Path(ctx, part)
		return errors.Is(err, store.ErrNotFound)
	})
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	a = startNodeWith(t, lib, cfg)
	// The start's sweep drops the copy's index: then big.bin is fetched.
	waiting.For(t, "the restarted node to drop the copy's block index", func() bool {
		ok, err := a.Share().Indexed(ctx, partRoot.Root)
		return err == nil && !ok
	})
	h, err := ingest.HashFile(ctx, big)
	if err != nil {
		t.Fatal(err)
	}
	catFromKubo(t, ctx, a, h.IPFS, data, "after the copy left")

	b := p2pNode(t, nil)
	if err := connect(b, a); err != nil {
		t.Fatal(err)
	}
	var doc api.Document
	getJSON(t, b, "/api/meta/"+h.Canonical, &doc)
	resp, body := do(t, b, "GET", "/api/file/"+h.Canonical, nil)
	if resp.StatusCode != 200 || !bytes.Equal(body, data) {
		t.Fatalf("another household's GET /api/file after the copy left: %s, %d bytes, want the file's %d: %.300s", resp.Status, len(body), len(data), body)
	}
}

// catFromKubo has a new Kubo node connected to n get the file ipfs, and
// fails the test unless it gets want (when says at what point).
func catFromKubo(t *testing.T, ctx context.Context, n *node.Node, ipfs string, want []byte, when string) {
	t.Helper()
	k := kubotest.Start(t, kubotest.Options{})
	k.Connect(t, n.P2PAddrs()[0])
	var got bytes.Buffer
	if err := k.Cat(ctx, ipfs, &got); err != nil || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("ipfs cat %s %s: %d bytes (%v), want the file's %d\n%s", ipfs, when, got.Len(), err, len(want), k.Output())
	}
}
