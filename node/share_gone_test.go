package node_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bsmsg "github.com/ipfs/boxo/bitswap/message"
	pb "github.com/ipfs/boxo/bitswap/message/pb"
	bsnet "github.com/ipfs/boxo/bitswap/network/bsnet"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/dag"
	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/kubotest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/store"
)

// openHere reports whether this process holds a descriptor of the file
// at path ("<path> (deleted)" for a file deleted while open): the node
// runs in the test's process.
func openHere(t *testing.T, path string) bool {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	for _, fd := range fds {
		if p, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && p == path {
			return true
		}
	}
	return false
}

// A file moved out of the library while peers fetch it is closed and
// no longer served once the library watcher applies the move: Kubo
// fetches it whole before; after the node reports the move (its store
// no longer has the path), the very next want of one of its blocks is
// answered DONT_HAVE and the node holds no descriptor of it. The same
// for a file deleted, and for one replaced by another file under its
// name.
func TestShare_FileThatLeftTheLibraryIsNotServed(t *testing.T) {
	t.Parallel()
	kubotest.Binary(t)
	for _, tc := range []struct {
		name  string
		leave func(t *testing.T, p string) string // returns where a descriptor of the old file points now
	}{
		{"moved out", func(t *testing.T, p string) string {
			out := filepath.Join(t.TempDir(), "B.bin")
			if err := os.Rename(p, out); err != nil {
				t.Fatal(err)
			}
			return out
		}},
		{"deleted", func(t *testing.T, p string) string {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			return p + " (deleted)"
		}},
		{"replaced", func(t *testing.T, p string) string {
			other := make([]byte, 1<<20)
			rand.Read(other)
			tmp := filepath.Join(filepath.Dir(p), ".B.bin.tmp")
			if err := os.WriteFile(tmp, other, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, p); err != nil {
				t.Fatal(err)
			}
			return p + " (deleted)"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lib, _ := filepath.EvalSymlinks(t.TempDir())
			data := make([]byte, 2<<20+777)
			rand.Read(data)
			p := filepath.Join(lib, "B.bin")
			writeOld(t, p, data)
			a, logs := startNodeLogged(t, lib, func(c *node.Config) { c.ShareFiles = true })
			ctx := waiting.Context(t)
			h, err := ingest.HashFile(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			catFromKubo(t, ctx, a, h.IPFS, data, "before the file left")
			ix, err := dag.Build(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			w := newWanter(t)
			id := w.connect(t, a)
			if !w.want(t, id, ix.Leaves[0].CID) {
				t.Fatal("the first leaf was refused while the file is in the library")
			}
			if !openHere(t, p) {
				t.Fatal("the node does not hold the file open after serving it: the test sees nothing")
			}

			now := tc.leave(t, p)
			waiting.For(t, "the node to apply the change of "+p, func() bool {
				st, err := a.Store().Path(ctx, p)
				return errors.Is(err, store.ErrNotFound) || (err == nil && st.Hashed && st.Midhash != h.Midhash)
			})
			applied := time.Now()
			if w.want(t, id, ix.Leaves[1].CID) {
				t.Fatalf("a want after the node applied the change was answered with the old file's block")
			}
			t.Logf("the first want after the node applied the change was refused %s later", time.Since(applied).Round(time.Millisecond))
			waiting.For(t, "the node to close the old file", func() bool { return !openHere(t, now) })
			if !strings.Contains(logs.String(), `msg="share: closed a file that left the library`) {
				t.Errorf("the node did not say it closed the file:\n%s", logs.String())
			}
			if w.want(t, id, ix.Root) {
				t.Error("the old file's root is still served")
			}
		})
	}
}

// wanter is a bare bitswap peer on loopback: it sends one want at a time
// and reads what the node answers, a block or DONT_HAVE.
type wanter struct {
	h   host.Host
	net interface {
		SendMessage(context.Context, peer.ID, bsmsg.BitSwapMessage) error
	}
	got chan bsmsg.BitSwapMessage
}

func newWanter(t *testing.T) *wanter {
	t.Helper()
	h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	n := bsnet.NewFromIpfsHost(h)
	w := &wanter{h: h, net: n, got: make(chan bsmsg.BitSwapMessage, 64)}
	n.Start(w)
	t.Cleanup(n.Stop)
	return w
}

func (w *wanter) ReceiveMessage(_ context.Context, _ peer.ID, m bsmsg.BitSwapMessage) {
	select {
	case w.got <- m:
	default:
	}
}
func (w *wanter) ReceiveError(error)       {}
func (w *wanter) PeerConnected(peer.ID)    {}
func (w *wanter) PeerDisconnected(peer.ID) {}
func (w *wanter) connect(t *testing.T, n *node.Node) peer.ID {
	t.Helper()
	ai, err := peer.AddrInfoFromString(n.P2PAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := w.h.Connect(waiting.Context(t), *ai); err != nil {
		t.Fatal(err)
	}
	return ai.ID
}

// want sends a want for block c to p and reports the answer: the block,
// or false for DONT_HAVE.
func (w *wanter) want(t *testing.T, p peer.ID, c cid.Cid) bool {
	t.Helper()
	m := bsmsg.New(false)
	m.AddEntry(c, 1, pb.Message_Wantlist_Block, true)
	if err := w.net.SendMessage(waiting.Context(t), p, m); err != nil {
		t.Fatal(err)
	}
	for {
		m, _ := waiting.Recv(t, w.got, "an answer to a want of "+c.String())
		for _, b := range m.Blocks() {
			if b.Cid().Equals(c) {
				return true
			}
		}
		for _, d := range m.DontHaves() {
			if d.Equals(c) {
				return false
			}
		}
	}
}
