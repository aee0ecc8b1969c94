package share

import (
	"context"
	"errors"
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
	// Path is where the library holds the file, when known: before each
	// block is read from File, the path must still name the same file
	// (not deleted, moved out or replaced), and Gone(Path) closes it.
	Path string
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
	// what was hashed (ErrNotLocal wrapped when there is none), with the
	// path it was opened at (Local.Path) so that a file that leaves the
	// library is no longer read.
	Open func(ctx context.Context, root cid.Cid) (*Local, error)
	// IsLocal reports whether root is still a local file's IPFS CID,
	// without opening it (the start's sweep of the index; a file that
	// could not be opened, or that Gone closed, has its index dropped
	// only once IsLocal says it left).
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
	links    *links               // the children of internal nodes served lately, by file
	refusals *refusals            // the log of wants refused for a file's blocks

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
	x := &Exchange{cfg: cfg, log: log, ds: ds, ix: newIndex(ds),
		files: newOpenFiles(), misses: map[string]time.Time{}, links: newLinks(), refusals: newRefusals(log), cancel: cancel}
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
	x.wg.Add(3)
	go func() { defer x.wg.Done(); x.track.run(bg) }()
	go func() { defer x.wg.Done(); x.files.run(bg) }()
	go func() { defer x.wg.Done(); x.links.run(bg) }()
	version, err := x.ix.version(ctx)
	if err != nil {
		log.Warn("share: reading the block index's version failed; its files are checked", "err", err)
		version = 1
	}
	if version >= indexVersion {
		if err := x.ix.setVersion(ctx); err != nil {
			log.Warn("share: writing the block index's version failed", "err", err)
		}
	}
	if cfg.IsLocal != nil || version < indexVersion {
		x.wg.Add(1)
		go func() { defer x.wg.Done(); x.sweep(bg, version) }()
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

// ErrNotIndexed: the block index does not hold a file's DAG whole
// (Leaves).
var ErrNotIndexed = errors.New("share: the file is not in the block index")

// Leaves are the CIDs of the leaves of root's DAG, in the file's order:
// leaf i is the bytes [i×dag.ChunkSize, (i+1)×dag.ChunkSize) of the
// file (the last one shorter). ErrNotIndexed when the index does not
// hold root's DAG whole. A file of one chunk (a raw root) is its leaf.
func (x *Exchange) Leaves(ctx context.Context, root cid.Cid) ([]cid.Cid, error) {
	if ok, err := x.ix.has(ctx, root); err != nil || (!ok && root.Prefix().Codec != cid.Raw) {
		return nil, errors.Join(ErrNotIndexed, err)
	}
	ls, err := x.ix.leaves(ctx, root)
	if errors.Is(err, errIncomplete) {
		return nil, ErrNotIndexed
	}
	return ls, err
}

// Gone closes the files open at path (the library watcher saw it
// deleted, moved away or replaced): no block is read from them again,
// and the index of a file no longer local is dropped. It reports the
// files it closed.
func (x *Exchange) Gone(ctx context.Context, path string) int {
	x.closeMu.RLock()
	defer x.closeMu.RUnlock()
	if x.closed {
		return 0
	}
	closed := x.files.dropPath(path)
	for _, f := range closed {
		x.log.Info("share: closed a file that left the library (deleted, moved out or replaced); its blocks are no longer served from it", "file", f.Name, "path", path, "cid", f.root.String())
		if x.cfg.IsLocal != nil && !x.cfg.IsLocal(ctx, f.root) {
			if err := x.ix.forget(ctx, f.root); err != nil {
				x.log.Warn("share: dropping the block index of a file that left the library failed", "cid", f.root.String(), "err", err)
			}
		}
	}
	return len(closed)
}

// Reopen closes every file held open to serve its blocks: the next
// want of one opens it again through Config.Open, which decides anew
// whether it is served (what the household shares changed). It returns
// how many it closed.
func (x *Exchange) Reopen() int {
	x.closeMu.RLock()
	defer x.closeMu.RUnlock()
	if x.closed {
		return 0
	}
	return x.files.dropAll()
}

// admit is bitswap's filter: a want is answered only when the household
// shares (--share-files); otherwise DONT_HAVE. What the server reads is
// the block index only (blockstore), never a block a fetch of ours holds
// in memory.
func (x *Exchange) admit(_ peer.ID, c cid.Cid) bool {
	return x.cfg.Serve
}

// sweep looks, once at start, at every file in the index: the index of
// a file no longer local is dropped; in an index of version 1, which
// named a block several files hold by the file indexed last, a file
// whose blocks are not all its own is indexed again (its file read
// once), so that no other file's leaving takes them. Then the index is
// marked as of this version.
func (x *Exchange) sweep(ctx context.Context, version int) {
	roots, err := x.ix.roots(ctx)
	if err != nil {
		x.log.Warn("share: sweeping the block index failed", "err", err)
		return
	}
	dropped, again := 0, 0
	for _, r := range roots {
		if ctx.Err() != nil {
			return
		}
		if x.cfg.IsLocal != nil && !x.cfg.IsLocal(ctx, r) {
			if err := x.ix.forget(ctx, r); err == nil {
				dropped++
			}
			continue
		}
		if version >= indexVersion {
			continue
		}
		if ok, err := x.ix.complete(ctx, r); err != nil || ok {
			continue
		}
		if err := x.index(ctx, r, cid.Undef, "the block index of an older version named blocks it shares by another file"); err != nil {
			x.log.Warn("share: a file lost blocks it shares with another from the block index, and indexing it again failed; it is indexed again on a peer's next want", "cid", r.String(), "err", err)
			_ = x.ix.forget(ctx, r)
			continue
		}
		again++
	}
	if dropped > 0 {
		x.log.Info("share: dropped the block index of files no longer in the library", "files", dropped)
	}
	if again > 0 {
		x.log.Info("share: indexed again the files whose blocks the block index named by another file (an index of an older version)", "files", again)
	}
	if version < indexVersion && ctx.Err() == nil {
		if err := x.ix.setVersion(ctx); err != nil {
			x.log.Warn("share: writing the block index's version failed", "err", err)
		}
	}
}
