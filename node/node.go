package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"path/filepath"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/node/announce"
	"github.com/metamesh/node/node/catalog"
	"github.com/metamesh/node/node/dav"
	"github.com/metamesh/node/node/federation"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/node/privacy"
	"github.com/metamesh/node/node/share"
	"github.com/metamesh/node/node/stills"
	"github.com/metamesh/node/node/thumbs"
	"github.com/metamesh/node/node/transcode"
	"github.com/metamesh/node/store"
)

// Version is the node's version, set at build time with -ldflags.
var Version = "dev"

// Commit is the commit the node was built from, set at build time with
// -ldflags ("" when it was not: the go command's own stamp is used).
var Commit = ""

// Node is one running MetaMesh node.
type Node struct {
	cfg Config
	log *slog.Logger

	st  *store.Store
	ing *ingest.Ingester
	// scanning is ing once it started, for goroutines started before it
	// (the learner's busy).
	scanning atomic.Pointer[ingest.Ingester]
	http     *http.Server
	ln       net.Listener

	key crypto.PrivKey // the node's identity (DATA/identity.key)
	p2p *p2p.Net
	hh  *federation.Household // the federation side, on p2p's host and DHT
	met *nodeMetrics
	// hashDuration exists before ingest starts (it reports into it);
	// newMetrics registers it.
	hashDuration prometheus.Histogram
	cat          *catalog.Catalog   // the library's lists (GET /api/library)
	dav          *dav.Library       // the WebDAV share's items (/dav/, dav.go)
	friends      *friends           // the peers that may see the list under --library-visible=friends
	thumbs       *thumbs.Cache      // posters' thumbnails (GET /api/thumb), under DATA/thumbs
	stills       *stills.Maker      // videos' stills, under DATA/stills; nil when off (stills.go)
	tc           *transcode.Manager // streams for browsers, under DATA/transcode; nil without ffmpeg (transcode.go)
	pairs        *pairChecks        // pairings of CIDs peers' bytes held to (trust.go)
	shr          *share.Exchange    // files' bytes over bitswap, served and fetched; its index under DATA/blocks
	art          *peerArt           // peers' artwork fetched, under DATA/art (art.go)
	rules        *privacy.Rules     // which files peers may learn of and fetch, by folder (node/privacy)
	space        *spaceWatch        // the data directory's free space (space.go)
	stop         context.CancelFunc // ends ingest and the space watch
	// closing is closed when the API starts shutting down: event streams,
	// which never go idle, end on it.
	closing chan struct{}
	// apiAddr is the API's address as logged (shownAddr).
	apiAddr string

	wg       sync.WaitGroup
	once     sync.Once
	closeErr error
}

// New checks the configuration; it starts nothing.
func New(cfg Config) (*Node, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dropped, err := cfg.absolute()
	if err != nil {
		return nil, err
	}
	logDropped(cfg.Logger, dropped, cfg.Libraries)
	rules, err := privacy.New(privacy.Config{Libraries: cfg.Libraries, ShareAll: cfg.ShareFiles, Shared: cfg.ShareFolders})
	if err != nil {
		return nil, configError{fmt.Errorf("config: --share-files: %w", err)}
	}
	return &Node{cfg: cfg, log: cfg.Logger, hashDuration: newHashDuration(), pairs: newPairChecks(), rules: rules}, nil
}

// Start opens the store (starting the managed redis-server when no URL is
// set), starts the libp2p host and the DHT, ingest (watch, then scan),
// the announcer and the HTTP API. Once the API's address is bound, a step
// that fails has Close stop the ones before it; a first start that fails
// leaves no data directory half made (datadir.go).
func (n *Node) Start(ctx context.Context) (err error) {
	undo, err := n.claim(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			undo()
		}
	}()
	if err := n.listenAPI(ctx); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, n.Close())
		}
	}()
	n.friends = newFriends(n.cfg)
	if err := n.openStore(ctx); err != nil {
		return err
	}
	if err := n.addUsers(ctx); err != nil {
		return err
	}
	if err := n.startP2P(ctx); err != nil {
		return err
	}
	bg, cancel := context.WithCancel(context.Background())
	n.stop = cancel
	n.cat = catalog.New()
	n.newDAV()
	if n.thumbs, err = thumbs.Open(filepath.Join(n.cfg.DataDir, "thumbs")); err != nil {
		return err
	}
	if err := n.openArt(); err != nil {
		return err
	}
	if err := n.openStills(); err != nil {
		return err
	}
	if err := n.openTranscodes(); err != nil {
		return err
	}
	if err := n.startHousehold(ctx); err != nil {
		return err
	}
	n.awaitFollowing(ctx)
	if err := n.startShare(ctx); err != nil {
		return err
	}
	if err := n.startIngest(ctx, bg); err != nil {
		return err
	}
	n.runStills(bg)
	if err := n.serveAPI(); err != nil {
		return err
	}
	n.log.Info("node running", "api", "http://"+n.apiAddr, "name", n.cfg.Name, "peerId", n.p2p.Host().ID().String(), "addrs", n.p2p.Addrs(),
		"libraries", n.cfg.Libraries, "version", Version)
	return nil
}

// claim makes the data directory this node's: refused when a node runs
// on it or it is full, made (or checked) writable. undo removes what a
// first start that fails made there.
func (n *Node) claim(ctx context.Context) (undo func(), err error) {
	// A node already running on the data directory is said first, with
	// how to reach it (running.go); then the API is bound: a busy port is
	// the commonest start-up failure and costs nothing to find out.
	if err := n.checkDataDirFree(ctx); err != nil {
		return nil, err
	}
	// A full data directory is said before anything opens a file there.
	if err := checkSpace(n.cfg.DataDir); err != nil {
		return nil, err
	}
	n.space = &spaceWatch{dir: n.cfg.DataDir, log: n.log}
	// A data directory the node cannot write is said as such; a first
	// start that fails leaves none half made (datadir.go).
	return claimDataDir(n.cfg.DataDir)
}

// listenAPI binds the API's address; a taken one is said with who holds
// it (running.go).
func (n *Node) listenAPI(ctx context.Context) error {
	ln, err := net.Listen("tcp", n.cfg.APIAddr)
	if err != nil {
		return n.apiTaken(ctx, err)
	}
	n.ln = ln
	n.apiAddr = shownAddr(n.cfg.APIAddr, ln.Addr())
	return nil
}

// openStore opens the store, starting the managed redis-server when no
// URL is set.
func (n *Node) openStore(ctx context.Context) error {
	st, err := store.Open(ctx, store.Options{URL: n.cfg.RedisURL, DataDir: n.cfg.DataDir, Logger: n.log, PeerRootsMax: int64(n.cfg.PeerRootsMax),
		DocCache: max(n.cfg.MetaCache, 0), Friends: n.isFriend})
	if err != nil {
		return err
	}
	n.st = st
	return nil
}

// startP2P starts the libp2p host and the DHT (node/p2p) under the node's
// identity, libp2p's own log lines routed into the node's.
func (n *Node) startP2P(ctx context.Context) error {
	key, err := p2p.LoadIdentity(n.cfg.DataDir)
	if err != nil {
		return err
	}
	n.key = key
	p2p.RouteLogs(n.log, n.logLevel())
	p, err := p2p.Start(ctx, n.cfg.P2P, key, n.log)
	if err != nil {
		return err
	}
	n.p2p = p
	return nil
}

// awaitFollowing waits until the store's changes are followed (the
// household's store.Changes, which also indexes outside writers' fields:
// the open schema): what an outside writer writes once the node runs is
// seen. Its subscription is in place within milliseconds; a Redis too
// slow to confirm it is not waited for long, and the follower catches up
// with a repair when it subscribes.
func (n *Node) awaitFollowing(ctx context.Context) {
	select {
	case <-n.st.Following():
	case <-time.After(5 * time.Second):
		n.log.Warn("following outside writers: no subscription yet; writes made before it are indexed by the next fsck --repair")
	case <-ctx.Done():
	}
}

// startHousehold starts the federation side on the node's host and DHT
// (node/federation).
func (n *Node) startHousehold(ctx context.Context) error {
	hh, err := federation.StartHousehold(ctx, federation.HouseholdConfig{
		Net: n.p2p, Key: n.key, Store: n.st, ProviderDir: filepath.Join(n.cfg.DataDir, "provider"), SearchDir: filepath.Join(n.cfg.DataDir, "search"),
		ReprovideInterval: n.cfg.ReprovideInterval, ProviderRecordTTL: n.cfg.P2P.ProviderRecordTTL,
		LookupTimeout: n.cfg.LookupTimeout, PeerRecordTTL: n.cfg.PeerRecordTTL, Name: n.cfg.Name,
		NoSearchIndex: n.cfg.NoSearchIndex, Catalog: n.cat, Consumers: append(n.stillsConsumers(), n.dav.Consumer()), Private: n.rules.Private, Logger: n.log,
		LearnFromPeers: !n.cfg.NoLearning, LearnInterval: n.cfg.LearnInterval, LearnIdleInterval: n.cfg.LearnIdleInterval,
		Busy: n.busy, LibraryVisible: n.libraryVisible,
	})
	if err != nil {
		return err
	}
	n.hh = hh
	return nil
}

// busy reports a node that scans its libraries: the learner then asks
// peers at its slower pace.
func (n *Node) busy() bool {
	ing := n.scanning.Load()
	if ing == nil {
		return true
	}
	switch ing.Progress().State {
	case "watching", "polling", "idle":
		return false
	}
	return true
}

// startIngest starts ingest of the libraries (watch, then scan), and the
// watch of the data directory's space until bg ends (Close).
func (n *Node) startIngest(ctx, bg context.Context) error {
	ing, err := ingest.New(n.st, ingest.Config{
		Libraries: append([]string(nil), n.cfg.Libraries...),
		Workers:   n.cfg.Workers,
		Settle:    n.cfg.Settle,
		Watch:     true,
		// A running node serves its configured libraries only: paths
		// stored under a library it no longer has are released.
		ReleaseOutside: true,
		OnHashed:       n.hashDuration.Observe,
		OnIndexed:      n.indexed,
		OnApplied:      n.pathChanged,
		Markers:        []string{privacy.ShareMarker, privacy.PrivateMarker},
		OnMarker:       n.markerChanged,
		Logger:         n.log,
	})
	if err != nil {
		return err
	}
	n.ing = ing
	if err := ing.Start(ctx); err != nil {
		return err
	}
	n.scanning.Store(ing)
	// Files skipped while the data directory was full are taken in once
	// it has space again and Redis takes writes (space.go).
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.space.run(bg, n.st.Ping, ing.Rescan)
	}()
	return nil
}

// serveAPI serves the HTTP API on the bound address, and tells the
// client commands where (DATA/api.url).
func (n *Node) serveAPI() error {
	acc, err := n.access()
	if err != nil {
		return err
	}
	n.met = newMetrics(n)
	n.http = &http.Server{
		Handler: n.addon(acc, api.New(&backend{n: n}, n.log, api.Options{
			Access: acc, Addr: n.apiAddr, Metrics: n.met.handler(), Registerer: n.met.reg, DAV: n.davShare(),
			Strangers: api.StrangerLimits{Rate: n.cfg.StrangerRate, Burst: n.cfg.StrangerBurst},
		})),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	n.closing = make(chan struct{})
	n.http.RegisterOnShutdown(func() { close(n.closing) })
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		if err := n.http.Serve(n.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			n.log.Error("api server stopped", "err", err)
		}
	}()
	if err := WriteAPIURL(n.cfg.DataDir, ClientURL(n.apiAddr)); err != nil {
		n.log.Warn("the client commands will not find this node's API without --api", "err", err)
	}
	return nil
}

// shownAddr is a listen address as the user wrote it, with the port the
// system picked when the one written is 0: "0.0.0.0:4680" stays that,
// where the listener says "[::]:4680" (Go listens on both stacks).
func shownAddr(written string, bound net.Addr) string {
	host, port, err := net.SplitHostPort(written)
	if err != nil {
		return bound.String()
	}
	if tcp, ok := bound.(*net.TCPAddr); ok && (port == "0" || port == "") {
		port = strconv.Itoa(tcp.Port)
	}
	return net.JoinHostPort(host, port)
}

// logLevel is the lowest level the node's logger writes.
func (n *Node) logLevel() slog.Level {
	for _, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn} {
		if n.log.Enabled(context.Background(), l) {
			return l
		}
	}
	return slog.LevelError
}

// PeerID is the node's libp2p identity (after Start).
func (n *Node) PeerID() string { return n.p2p.Host().ID().String() }

// P2PAddrs are the node's libp2p addresses with /p2p/<id> (after Start).
func (n *Node) P2PAddrs() []string { return n.p2p.Addrs() }

// ProvideStats are the announcer's counters (after Start).
func (n *Node) ProvideStats() announce.Stats { return n.hh.ProvideStats() }

// LearnStats are the learner's counts (federation.LearnStats; zero with
// --learn-from-peers=false).
func (n *Node) LearnStats() federation.LearnStats { return n.hh.LearnStats() }

// APIAddr is the address the HTTP API listens on (after Start).
func (n *Node) APIAddr() string {
	if n.ln == nil {
		return ""
	}
	return n.ln.Addr().String()
}

// Share returns the node's exchange of files' bytes (after Start).
func (n *Node) Share() *share.Exchange { return n.shr }

// Store returns the node's store (after Start).
func (n *Node) Store() *store.Store { return n.st }

// Ingester returns the node's ingester (after Start).
func (n *Node) Ingester() *ingest.Ingester { return n.ing }

// Close stops the API, then the peers side (announcer, record protocol,
// DHT, host), then ingest, then the store. It is idempotent.
func (n *Node) Close() error {
	n.once.Do(func() {
		// Streams being made end first: their answers would hold the
		// API's shutdown.
		errs := []error{n.closeTranscodes()}
		if n.http != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			errs = append(errs, n.http.Shutdown(ctx))
			cancel()
		} else if n.ln != nil {
			errs = append(errs, n.ln.Close())
		}
		if n.stop != nil {
			n.stop()
		}
		n.wg.Wait()
		if n.shr != nil {
			errs = append(errs, n.shr.Close())
		}
		if n.hh != nil {
			errs = append(errs, n.hh.Close())
		}
		if n.p2p != nil {
			errs = append(errs, n.p2p.Close())
		}
		if n.ing != nil {
			errs = append(errs, n.ing.Close())
		}
		if n.st != nil {
			errs = append(errs, n.st.Close())
		}
		n.closeErr = errors.Join(errs...)
	})
	return n.closeErr
}

// Run starts a node and serves until ctx is cancelled, then closes it and
// logs, as its last line, that it stopped.
func Run(ctx context.Context, cfg Config) error {
	n, err := New(cfg)
	if err != nil {
		return err
	}
	if err := n.Start(ctx); err != nil {
		return err
	}
	sd := notifier{socket: cfg.NotifySocket}
	if err := sd.send("READY=1", fmt.Sprintf("STATUS=serving the API on %s, peer %s", n.APIAddr(), n.PeerID())); err != nil {
		n.log.Warn("could not tell the service manager the node is ready", "err", err)
	}
	<-ctx.Done()
	n.log.Info("shutting down")
	if err := sd.send("STOPPING=1", "STATUS=stopping"); err != nil {
		n.log.Warn("could not tell the service manager the node is stopping", "err", err)
	}
	if err := n.Close(); err != nil {
		return err
	}
	// The last line: everything, the managed redis-server included, is
	// stopped.
	n.log.Info("metamesh stopped")
	return nil
}

// Connect dials a peer (after Start).
// The peer becomes a friend: it may see the household's list under
// --library-visible=friends.
func (n *Node) Connect(ctx context.Context, ai peer.AddrInfo) error {
	n.friends.add(ai.ID)
	return n.p2p.Host().Connect(ctx, ai)
}

// Disconnect closes every connection to a peer (after Start).
func (n *Node) Disconnect(p peer.ID) { _ = n.p2p.Host().Network().ClosePeer(p) }
