package share

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/ipfs/boxo/bitswap"
	bsnet "github.com/ipfs/boxo/bitswap/network/bsnet"
	"github.com/ipfs/boxo/blockservice"
	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/go-cid"
	"github.com/ipfs/go-datastore"
	ipld "github.com/ipfs/go-ipld-format"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"golang.org/x/time/rate"

	"github.com/metamesh/node/dag"
	"github.com/metamesh/node/node/derived"
)

// ErrNotLocal: the CID names no file of this household's libraries (Open).
var ErrNotLocal = errors.New("not a file of this household")

// Local is a library file opened to serve its blocks.
type Local struct {
	File *os.File
	// Name is the file's base name, for the log.
	Name string
}

// Config configures an Exchange.
type Config struct {
	Host host.Host
	// Dir holds the block index (a pebble database), created if missing,
	// moved aside and made anew when damaged (derived.Pebble).
	Dir string
	// Serve answers peers' wants for the local files' blocks
	// (--share-files); without it every want is answered DONT_HAVE.
	Serve bool
	// Rate caps the bytes served a second, all peers together
	// (--share-rate); 0 is unlimited.
	Rate int64
	// MaxOutstandingPerPeer caps the bytes queued for one peer at once
	// (bitswap's per-peer limit); 0 takes bitswap's default (1 MiB).
	MaxOutstandingPerPeer int
	// Stall ends a fetch that got no block for this long; default 30s.
	Stall time.Duration
	// CacheBytes bounds the blocks fetches hold in memory until read;
	// default 32 MiB.
	CacheBytes int
	// Open opens the local file whose IPFS CID is root, checked against
	// what was hashed (ErrNotLocal wrapped when there is none).
	Open func(ctx context.Context, root cid.Cid) (*Local, error)
	// IsLocal reports whether root is still a local file's IPFS CID,
	// without opening it (the start's sweep of the index).
	IsLocal func(ctx context.Context, root cid.Cid) bool
	// Changed is told that root's file no longer hashes as indexed: the
	// node takes it in again.
	Changed func(root cid.Cid)
	Logger  *slog.Logger
}

// Exchange serves the blocks of the household's files over bitswap and
// fetches peers' files the same way (bitswap's server and client on the
// node's host).
type Exchange struct {
	cfg   Config
	log   *slog.Logger
	ds    datastore.Batching
	ix    index
	bs    *bitswap.Bitswap
	bsvc  blockservice.BlockService
	dserv ipld.DAGService
	store *blockstore
	limit *rate.Limiter
	files *openFiles
	track *tracker

	building sync.Mutex // one file indexed on demand at a time
	missMu   sync.Mutex
	misses   map[string]time.Time // CIDs that name no local file, recently

	cancel context.CancelFunc
	wg     sync.WaitGroup
	// closeMu orders Add (ingest, which may still run) against Close.
	closeMu sync.RWMutex
	closed  bool
}

// missTTL is how long a CID found to name no local file is not looked
// up again (a want list of random CIDs costs one store read each, once).
const missTTL = 30 * time.Second

// maxMisses bounds the misses remembered.
const maxMisses = 100_000

// Start opens the block index and starts bitswap on the host.
func Start(ctx context.Context, cfg Config) (*Exchange, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Stall <= 0 {
		cfg.Stall = 30 * time.Second
	}
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = 32 << 20
	}
	log := cfg.Logger.With("component", "share")
	// The block index is a cache of what the hasher recorded: damaged,
	// it is made anew and files are indexed again on a peer's first
	// want.
	ds, err := derived.OpenPebble(cfg.Dir, "block index", log)
	if err != nil {
		return nil, err
	}
	bg, cancel := context.WithCancel(context.Background())
	x := &Exchange{cfg: cfg, log: log, ds: ds, ix: index{ds: ds},
		files: newOpenFiles(), misses: map[string]time.Time{}, cancel: cancel}
	x.track = newTracker(x.log)
	if cfg.Rate > 0 {
		x.limit = rate.NewLimiter(rate.Limit(cfg.Rate), int(max(cfg.Rate, 2*dag.ChunkSize)))
	}
	x.store = &blockstore{x: x, cache: newBlockCache(cfg.CacheBytes)}
	opts := []bitswap.Option{
		bitswap.WithPeerBlockRequestFilter(x.admit),
		bitswap.WithTracer(x.track),
		bitswap.ProviderSearchDelay(200 * time.Millisecond),
		// A provider busy reading from disk answers late, not DONT_HAVE:
		// a want that times out is not taken as one (the session would
		// drop the provider and wait a minute for a rebroadcast, as a
		// fetch of 1 GiB under load did), and wants still open are sent
		// again every few seconds.
		bitswap.SetSimulateDontHavesOnTimeout(false),
		bitswap.RebroadcastDelay(5 * time.Second),
	}
	if cfg.MaxOutstandingPerPeer > 0 {
		opts = append(opts, bitswap.MaxOutstandingBytesPerPeer(cfg.MaxOutstandingPerPeer))
	}
	x.bs = bitswap.New(bg, bsnet.NewFromIpfsHost(cfg.Host), finder{x.track, cfg.Host}, x.store, opts...)
	x.bsvc = blockservice.New(x.store, x.bs)
	x.dserv = merkledag.NewDAGService(x.bsvc)
	x.wg.Add(2)
	go func() { defer x.wg.Done(); x.track.run(bg) }()
	go func() { defer x.wg.Done(); x.files.run(bg) }()
	if cfg.IsLocal != nil {
		x.wg.Add(1)
		go func() { defer x.wg.Done(); x.sweep(bg) }()
	}
	return x, nil
}

// Close stops bitswap and closes the index.
func (x *Exchange) Close() error {
	x.closeMu.Lock()
	x.closed = true
	x.closeMu.Unlock()
	x.cancel()
	err := x.bs.Close()
	x.wg.Wait()
	x.files.closeAll()
	return errors.Join(err, x.ds.Close())
}

// Stats are the blocks bitswap moved since Start.
type Stats struct {
	// ServedBytes and ServedBlocks went to peers.
	ServedBytes, ServedBlocks int64
	// FetchedBytes and FetchedBlocks came from peers, for the node's own
	// fetches.
	FetchedBytes, FetchedBlocks int64
}

// Stats are the exchange's counters.
func (x *Exchange) Stats() Stats {
	t := x.track
	return Stats{ServedBytes: t.servedBytes.Load(), ServedBlocks: t.servedBlocks.Load(),
		FetchedBytes: t.fetchedBytes.Load(), FetchedBlocks: t.fetchedBlocks.Load()}
}

// Serving reports --share-files.
func (x *Exchange) Serving() bool { return x.cfg.Serve }

// Add keeps ix, the index of a local file of size bytes (ingest's
// hasher records it).
func (x *Exchange) Add(ctx context.Context, ix *dag.Index, size int64) error {
	x.closeMu.RLock()
	defer x.closeMu.RUnlock()
	if x.closed {
		return errors.New("share: closed")
	}
	return x.ix.put(ctx, ix, size)
}

// Forget drops root's file from the block index: the next want of its
// root indexes it again (the benchmark's cold start).
func (x *Exchange) Forget(ctx context.Context, root cid.Cid) error {
	x.files.drop(root)
	return x.ix.forget(ctx, root)
}

// Indexed reports whether root's file is in the block index.
func (x *Exchange) Indexed(ctx context.Context, root cid.Cid) (bool, error) {
	return x.ix.has(ctx, root)
}

// admit is bitswap's filter: a want is answered only when the household
// shares (--share-files); otherwise DONT_HAVE. What the server reads is
// the block index only (blockstore), never a block a fetch of ours holds
// in memory.
func (x *Exchange) admit(_ peer.ID, c cid.Cid) bool {
	return x.cfg.Serve
}

// entry finds block c in the index; a CID that is the root of a local
// file not indexed yet (a file ingested before the index existed, a small
// file) is indexed first, reading the file once.
func (x *Exchange) entry(ctx context.Context, c cid.Cid) (entry, error) {
	e, err := x.ix.get(ctx, c)
	if err == nil {
		return e, nil
	}
	if !isMissing(err) {
		return entry{}, err
	}
	if !x.missed(c) {
		if err := x.indexOnDemand(ctx, c); err == nil {
			if e, err = x.ix.get(ctx, c); err == nil {
				return e, nil
			}
		}
	}
	return entry{}, notFound(c)
}

// missed reports a CID recently found to name no local file.
func (x *Exchange) missed(c cid.Cid) bool {
	x.missMu.Lock()
	defer x.missMu.Unlock()
	until, ok := x.misses[string(c.Hash())]
	return ok && time.Now().Before(until)
}

func (x *Exchange) miss(c cid.Cid) {
	x.missMu.Lock()
	defer x.missMu.Unlock()
	if len(x.misses) >= maxMisses {
		clear(x.misses)
	}
	x.misses[string(c.Hash())] = time.Now().Add(missTTL)
}

// indexOnDemand indexes the local file whose IPFS CID is c.
func (x *Exchange) indexOnDemand(ctx context.Context, c cid.Cid) error {
	if x.cfg.Open == nil {
		return notFound(c)
	}
	f, err := x.cfg.Open(ctx, c)
	if err != nil {
		if errors.Is(err, ErrNotLocal) {
			x.miss(c)
		}
		return err
	}
	x.building.Lock()
	defer x.building.Unlock()
	if ok, _ := x.ix.has(ctx, c); ok {
		f.File.Close()
		return nil
	}
	defer f.File.Close()
	fi, err := f.File.Stat()
	if err != nil {
		return err
	}
	start := time.Now()
	ix, err := dag.Build(io.NewSectionReader(f.File, 0, fi.Size()))
	if err != nil {
		return err
	}
	if !ix.Root.Equals(c) {
		// The file changed since it was hashed.
		x.changed(c)
		return notFound(c)
	}
	if err := x.ix.put(ctx, ix, fi.Size()); err != nil {
		return err
	}
	x.log.Info("share: indexed a file's blocks on a peer's first want", "file", f.Name, "cid", c.String(),
		"bytes", fi.Size(), "took", time.Since(start).Round(time.Millisecond).String())
	return nil
}

// block produces block c from e: an internal node from the index, a leaf
// read from its file and checked against its CID. A leaf whose bytes
// changed is never produced: the file's index is dropped and the node
// takes the file in again. served blocks are charged to --share-rate.
func (x *Exchange) block(ctx context.Context, c cid.Cid, e entry, served bool) ([]byte, error) {
	f, release, err := x.files.acquire(ctx, e.root, x.cfg.Open)
	if err != nil {
		if errors.Is(err, ErrNotLocal) {
			// The file left the library: its blocks go with it.
			_ = x.ix.forget(context.WithoutCancel(ctx), e.root)
		}
		return nil, notFound(c)
	}
	defer release()
	data := e.internal
	if data == nil {
		if data, err = dag.ReadLeaf(f.File, e.leaf); err != nil {
			if errors.Is(err, dag.ErrChanged) {
				x.changed(e.root)
			} else {
				x.log.Warn("share: reading a block failed", "file", f.Name, "cid", c.String(), "err", err)
			}
			return nil, notFound(c)
		}
	}
	if served {
		x.track.served(c, e.root, f.Name)
		if x.limit != nil {
			if err := x.limit.WaitN(ctx, len(data)); err != nil {
				return nil, err
			}
		}
	}
	return data, nil
}

// changed drops root's index and its open file, and has the node take
// the file in again.
func (x *Exchange) changed(root cid.Cid) {
	x.log.Warn("share: a file changed since it was hashed; its blocks are not served until it is hashed again", "cid", root.String())
	x.files.drop(root)
	_ = x.ix.forget(context.Background(), root)
	if x.cfg.Changed != nil {
		x.cfg.Changed(root)
	}
}

// sweep drops, once at start, the index of files no longer local.
func (x *Exchange) sweep(ctx context.Context) {
	roots, err := x.ix.roots(ctx)
	if err != nil {
		x.log.Warn("share: sweeping the block index failed", "err", err)
		return
	}
	dropped := 0
	for _, r := range roots {
		if ctx.Err() != nil {
			return
		}
		if !x.cfg.IsLocal(ctx, r) {
			if err := x.ix.forget(ctx, r); err == nil {
				dropped++
			}
		}
	}
	if dropped > 0 {
		x.log.Info("share: dropped the block index of files no longer in the library", "files", dropped)
	}
}
