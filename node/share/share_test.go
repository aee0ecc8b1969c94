package share_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	bsmsg "github.com/ipfs/boxo/bitswap/message"
	pb "github.com/ipfs/boxo/bitswap/message/pb"
	bsnet "github.com/ipfs/boxo/bitswap/network/bsnet"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/dag"
	"github.com/metamesh/node/node/share"
	"github.com/metamesh/node/store/storetest"
)

// household is an Exchange on a loopback host serving the files it is
// given.
type household struct {
	h       host.Host
	x       *share.Exchange
	mu      sync.Mutex
	files   map[string]string // root multihash → path
	changed []cid.Cid
}

func newHousehold(t *testing.T, serve bool, edit func(*share.Config)) *household {
	t.Helper()
	h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	hh := &household{h: h, files: map[string]string{}}
	cfg := share.Config{
		Host: h, Dir: t.TempDir(), Serve: serve,
		Open: func(_ context.Context, root cid.Cid) (*share.Local, error) {
			hh.mu.Lock()
			p, ok := hh.files[string(root.Hash())]
			hh.mu.Unlock()
			if !ok {
				return nil, share.ErrNotLocal
			}
			f, err := os.Open(p)
			if err != nil {
				return nil, err
			}
			return &share.Local{File: f, Name: filepath.Base(p), Path: p}, nil
		},
		Changed: func(root cid.Cid) {
			hh.mu.Lock()
			hh.changed = append(hh.changed, root)
			hh.mu.Unlock()
		},
	}
	if edit != nil {
		edit(&cfg)
	}
	if hh.x, err = share.Start(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hh.x.Close() })
	return hh
}

// add writes data as a library file and returns its IPFS CID; indexed
// says whether the index is kept now (as ingest does) or left to the
// first want.
func (hh *household) add(t *testing.T, data []byte, indexed bool) (cid.Cid, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "film.mkv")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := dag.Build(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	hh.mu.Lock()
	hh.files[string(ix.Root.Hash())] = p
	hh.mu.Unlock()
	if indexed {
		if err := hh.x.Add(context.Background(), ix, int64(len(data))); err != nil {
			t.Fatal(err)
		}
	}
	return ix.Root, p
}

// leave takes the file at p out of the household's library.
func (hh *household) leave(t *testing.T, p string) {
	t.Helper()
	hh.mu.Lock()
	for k, q := range hh.files {
		if q == p {
			delete(hh.files, k)
		}
	}
	hh.mu.Unlock()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, a, b *household) {
	t.Helper()
	if err := a.h.Connect(context.Background(), peer.AddrInfo{ID: b.h.ID(), Addrs: b.h.Addrs()}); err != nil {
		t.Fatal(err)
	}
}

func random(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// A file is fetched whole and from its middle, indexed at ingest or on
// the first want, and from a household that does not share not at all.
func TestFetch(t *testing.T) {
	t.Parallel()
	data := random(2<<20 + 777)
	for _, tc := range []struct {
		name           string
		serve, indexed bool
	}{
		{"indexed at ingest", true, true},
		{"indexed on the first want", true, false},
		{"not shared", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, b := newHousehold(t, tc.serve, nil), newHousehold(t, false, nil)
			link(t, b, a)
			root, _ := a.add(t, data, tc.indexed)
			f, err := b.x.Fetch(context.Background(), root, []peer.ID{a.h.ID()})
			if !tc.serve {
				var u *share.UnavailableError
				if !errors.As(err, &u) || len(u.Sources) != 1 || u.Sources[0].State != "does not share" {
					t.Fatalf("fetch from a household that does not share: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Size() != uint64(len(data)) {
				t.Errorf("size %d, want %d", f.Size(), len(data))
			}
			got, err := io.ReadAll(f)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read %d bytes (%v), want the file's %d", len(got), err, len(data))
			}
			if _, err := f.Seek(1<<20-5, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			part := make([]byte, 10)
			if _, err := io.ReadFull(f, part); err != nil || !bytes.Equal(part, data[1<<20-5:1<<20+5]) {
				t.Errorf("after a seek: %x (%v)", part, err)
			}
			if ok, _ := a.x.Indexed(context.Background(), root); !ok {
				t.Error("the served file is not in the block index")
			}
			if s := a.x.Stats(); s.ServedBytes < int64(len(data)) || s.ServedBlocks < int64(len(data)/dag.ChunkSize) {
				t.Errorf("the server counted %+v for a file of %d bytes", s, len(data))
			}
			if s := b.x.Stats(); s.FetchedBytes < int64(len(data)) || s.ServedBytes != 0 {
				t.Errorf("the fetching household counted %+v for a file of %d bytes", s, len(data))
			}
		})
	}
}

// A file that changed behind the node's back (same size, other bytes) is
// never served: its changed leaves are answered DONT_HAVE, the fetch
// stalls and ends, the household is told (it takes the file in again)
// and its index is dropped.
func TestFetch_ChangedFileIsNotServed(t *testing.T) {
	t.Parallel()
	a := newHousehold(t, true, nil)
	b := newHousehold(t, false, func(c *share.Config) { c.Stall = 2 * time.Second })
	link(t, b, a)
	data := random(1<<20 + 3)
	root, p := a.add(t, data, true)
	changed := bytes.Clone(data)
	changed[600<<10] ^= 0xff // the third leaf
	if err := os.WriteFile(p, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := b.x.Fetch(context.Background(), root, []peer.ID{a.h.ID()})
	if err != nil {
		t.Fatal(err) // the root is an internal node: still what its CID says
	}
	defer f.Close()
	got, err := io.ReadAll(f)
	if !errors.Is(err, share.ErrStalled) {
		t.Fatalf("reading a changed file: %v after %d bytes, want ErrStalled", err, len(got))
	}
	if !strings.Contains(err.Error(), "answered that it does not have block") {
		t.Errorf("the stall's error does not say why: %v", err)
	}
	if len(got) > 2*dag.ChunkSize || !bytes.Equal(got, data[:len(got)]) {
		t.Errorf("got %d bytes, want at most the two leaves before the change, as they were", len(got))
	}
	a.mu.Lock()
	told := len(a.changed) > 0 && a.changed[0].Equals(root)
	a.mu.Unlock()
	if !told {
		t.Error("the household was not told its file changed")
	}
	if ok, _ := a.x.Indexed(context.Background(), root); ok {
		t.Error("the changed file's index was kept")
	}
}

// Hostile wants cost bounded memory: a peer sends want lists of unknown
// CIDs, far longer than bitswap queues, over and over, and never reads
// an answer. The serving node's heap stays within a bound that does not
// grow with what was sent.
func TestServe_BadWantsCostBoundedMemory(t *testing.T) {
	a := newHousehold(t, true, nil)
	a.add(t, random(1<<20), true)
	evil, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
	if err != nil {
		t.Fatal(err)
	}
	defer evil.Close()
	// It answers every stream the server opens to it, and never reads.
	block := make(chan struct{})
	defer close(block)
	for _, proto := range []string{"/ipfs/bitswap/1.2.0", "/ipfs/bitswap/1.1.0", "/ipfs/bitswap/1.0.0", "/ipfs/bitswap"} {
		evil.SetStreamHandler(protocolID(proto), func(s network.Stream) { <-block; s.Reset() })
	}
	if err := evil.Connect(context.Background(), peer.AddrInfo{ID: a.h.ID(), Addrs: a.h.Addrs()}); err != nil {
		t.Fatal(err)
	}
	net := bsnet.NewFromIpfsHost(evil)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	send := func(rounds int) {
		for range rounds {
			msg := bsmsg.New(true)
			for range 5000 {
				h, _ := multihash.Sum(random(32), multihash.SHA2_256, -1)
				msg.AddEntry(cid.NewCidV1(cid.Raw, h), 1, pb.Message_Wantlist_Block, true)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := net.SendMessage(ctx, a.h.ID(), msg)
			cancel()
			if err != nil {
				t.Logf("send: %v", err)
			}
		}
	}
	send(4) // warm up: buffers, the misses
	before := heap()
	send(40) // 200,000 wants
	after := heap()
	t.Logf("heap %d KiB before, %d KiB after 200,000 hostile wants", before>>10, after>>10)
	if after > before+64<<20 {
		t.Errorf("the heap grew by %d MiB under hostile wants", (after-before)>>20)
	}
}

func protocolID(s string) protocol.ID { return protocol.ID(s) }

// A sharing household logs each peer's fetch of a file, its start and
// its end (who, which file, how many bytes), and serves no faster than
// --share-rate.
func TestServe_LogsAndRate(t *testing.T) {
	t.Parallel()
	var logs storetest.Buffer
	const rate = 512 << 10
	a := newHousehold(t, true, func(c *share.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		c.Rate = rate
	})
	b := newHousehold(t, false, nil)
	link(t, b, a)
	data := random(2<<20 + 5)
	root, _ := a.add(t, data, true)
	start := time.Now()
	f, err := b.x.Fetch(context.Background(), root, []peer.ID{a.h.ID()})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	took := time.Since(start)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes: %v", len(got), err)
	}
	// A lower bound only: the bucket holds one second's bytes, the rest
	// comes at the rate.
	if least := time.Duration(float64(len(data)-rate) / rate * float64(time.Second)); took < least*9/10 {
		t.Errorf("%d bytes at %d bytes/s came in %s, under the %s the rate allows", len(data), rate, took, least)
	}
	a.x.Close() // ends the sessions in the log
	out := logs.String()
	who := ` peer=` + b.h.ID().String() + ` file=film.mkv cid=` + root.String()
	if !strings.Contains(out, `msg="share: a peer started fetching a file" component=share`+who) {
		t.Errorf("no start of the fetch in the log:\n%s", out)
	}
	m := regexp.MustCompile(`msg="share: a peer finished fetching a file" component=share` + regexp.QuoteMeta(who) + ` bytes=(\d+)`).FindStringSubmatch(out)
	if n, _ := strconv.Atoi(append(m, "", "")[1]); n < len(data) {
		t.Errorf("no end of the fetch with its %d bytes (and the root's) in the log:\n%s", len(data), out)
	}
}
