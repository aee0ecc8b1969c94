package kubotest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/dag"
	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/node/p2p"
)

// randomFile writes size bytes of seeded random data under the test's
// temporary directory.
func randomFile(tb testing.TB, size int, seed uint64) (string, []byte) {
	tb.Helper()
	b := make([]byte, size)
	r := rand.New(rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)}))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	p := filepath.Join(tb.TempDir(), fmt.Sprintf("f%d.bin", size))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	return p, b
}

// exchange adds a multi-chunk file on one daemon and cats it on the
// other, connected to it, checking every byte and that each connection
// of either is on loopback.
func exchange(t *testing.T, from, to *Daemon) {
	t.Helper()
	p, want := randomFile(t, 3<<20+12345, 1) // 13 chunks, the last partial
	cid := from.Add(t, p)
	to.Connect(t, from.Addrs()[0])
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var got bytes.Buffer
	if err := to.Cat(ctx, cid, &got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("cat %s: %d bytes, not the %d added", cid, got.Len(), len(want))
	}
	for _, d := range []*Daemon{from, to} {
		peers, err := d.Peers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		other := from
		if d == from {
			other = to
		}
		if len(peers) != 1 || !strings.HasPrefix(peers[0], "/ip4/127.") || !strings.HasSuffix(peers[0], "/p2p/"+other.ID()) {
			t.Errorf("%s's peers: %v, want the other daemon on loopback alone", d.ID(), peers)
		}
	}
}

// Two daemons on loopback: a 3 MiB file added on one is fetched over
// bitswap by the other, byte for byte.
func TestBitswap_TwoDaemons(t *testing.T) {
	t.Parallel()
	exchange(t, Start(t, Options{}), Start(t, Options{}))
}

// The same on a private network (a swarm key on both), and a daemon with
// another key or none cannot connect to them.
func TestBitswap_SwarmKey(t *testing.T) {
	t.Parallel()
	key := NewSwarmKey()
	a, b := Start(t, Options{SwarmKey: key}), Start(t, Options{SwarmKey: key})
	exchange(t, a, b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for name, d := range map[string]*Daemon{"another key": Start(t, Options{SwarmKey: NewSwarmKey()}), "no key": Start(t, Options{})} {
		if err := d.rpcJSON(ctx, "swarm/connect", map[string][]string{"arg": {a.Addrs()[0]}}, nil); err == nil {
			t.Errorf("a daemon with %s connected to a private network", name)
		}
	}
}

// The bytes Options.SwarmKey takes are the file the node's --swarm-key
// reads: the node's host (node/p2p) with that file connects to a Kubo
// daemon given those bytes, and not to one with another key.
func TestSwarmKey_NodeAndKubo(t *testing.T) {
	t.Parallel()
	key := NewSwarmKey()
	file := filepath.Join(t.TempDir(), "swarm.key")
	if err := os.WriteFile(file, key, 0o600); err != nil {
		t.Fatal(err)
	}
	same, other := Start(t, Options{SwarmKey: key}), Start(t, Options{SwarmKey: NewSwarmKey()})
	priv, _, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := p2p.Start(ctx, p2p.Config{Listen: []string{"/ip4/127.0.0.1/tcp/0"}, SwarmKeyFile: file, DHTMode: "client",
		ConnLow: 10, ConnHigh: 20}, priv, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	connect := func(d *Daemon) error {
		ai, err := peer.AddrInfoFromString(d.Addrs()[0])
		if err != nil {
			t.Fatal(err)
		}
		return n.Host().Connect(ctx, *ai)
	}
	if err := connect(same); err != nil {
		t.Fatalf("the node with the same swarm.key: %v", err)
	}
	peers, err := same.Peers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(peers, func(a string) bool { return strings.HasSuffix(a, "/p2p/"+n.Host().ID().String()) }) {
		t.Errorf("Kubo's peers %v lack the node %s", peers, n.Host().ID())
	}
	if err := connect(other); err == nil {
		t.Error("the node connected to Kubo with another swarm key")
	}
}

// The CID Kubo prints for a file is the IPFS CID the project computes for
// it (dag.Build, and the ingest hasher): from an empty file to one whose
// DAG has two levels (more than 174 chunks).
func TestAdd_SameCIDAsProject(t *testing.T) {
	t.Parallel()
	d := Start(t, Options{})
	sizes := []int{0, 1, dag.ChunkSize - 1, dag.ChunkSize, dag.ChunkSize + 1, 3<<20 + 12345}
	if !testing.Short() {
		sizes = append(sizes, 175*dag.ChunkSize+7)
	}
	for i, size := range sizes {
		p, b := randomFile(t, size, uint64(i)+100)
		kubo := d.Add(t, p)
		ix, err := dag.Build(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		h, err := ingest.HashFile(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if ix.Root.String() != kubo || h.IPFS != kubo {
			t.Errorf("%d bytes: Kubo %s, dag.Build %s, ingest.HashFile %s", size, kubo, ix.Root, h.IPFS)
		}
	}
}

// The connection gater holds every non-loopback range (the backstop of
// the loopback-only configuration), and the daemon tells loopback
// addresses only.
func TestDaemon_LoopbackOnly(t *testing.T) {
	t.Parallel()
	d := Start(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var f struct{ Strings []string }
	if err := d.rpcJSON(ctx, "swarm/filters", nil, &f); err != nil {
		t.Fatal(err)
	}
	for _, want := range nonLoopback {
		if !slices.Contains(f.Strings, want) {
			t.Errorf("swarm filters %v lack %s", f.Strings, want)
		}
	}
	var id struct{ Addresses []string }
	if err := d.rpcJSON(ctx, "id", nil, &id); err != nil {
		t.Fatal(err)
	}
	for _, a := range id.Addresses {
		if !loopbackTCP(a) {
			t.Errorf("the daemon tells %s", a)
		}
	}
}

// METAMESH_KUBO set to something that is not Kubo 0.42 is an error, not
// ErrNotFound: asked for explicitly, Kubo must not be skipped silently.
func TestFind_ExplicitNotKubo(t *testing.T) {
	for _, p := range []string{"/nonexistent/ipfs", "/bin/true"} {
		t.Setenv(EnvBinary, p)
		_, err := Find()
		if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "scripts/kubo.sh") {
			t.Errorf("%s=%s: %v, want an error saying how to get Kubo, not ErrNotFound", EnvBinary, p, err)
		}
	}
}

// BitswapThroughput reports a transfer of the whole file.
func TestBitswapThroughput(t *testing.T) {
	t.Parallel()
	p, _ := randomFile(t, 4<<20, 7)
	bps, ttfb := BitswapThroughput(t, p)
	if bps <= 0 || ttfb <= 0 {
		t.Errorf("%.0f B/s, ttfb %v", bps, ttfb)
	}
	t.Logf("Kubo to Kubo, 4 MiB on loopback: %.1f MB/s, first byte after %v", bps/1e6, ttfb)
}
