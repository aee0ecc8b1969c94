package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options configures Open.
type Options struct {
	// URL of a running Redis ("redis://host:port/db", or
	// "unix:///path/to/redis.sock?db=N" for a unix socket). When empty, Open
	// starts and supervises its own redis-server under DataDir/redis.
	URL string
	// DataDir is the node's data directory; needed when URL is empty.
	DataDir string
	// Logger; default slog.Default().
	Logger *slog.Logger
	// EventsMaxLen caps the meta:events stream (XADD MAXLEN ~). Default
	// 10000: the feed is for followers to catch up, not a history (a
	// follower the cap left behind sweeps the store instead); each entry
	// costs some 400 bytes of Redis.
	EventsMaxLen int64
	// PeerRootsMax caps the roots known only from peers (MergeRecord
	// evicts the least recently touched beyond it). Default 100000.
	PeerRootsMax int64
	// DocCache is how many documents DocumentByCID keeps in memory
	// (cache.go); 0 keeps none.
	DocCache int
	// Friends reports the peers (by peer ID) that are the household's
	// friends: of two values peers give a field of a local file with as
	// many households behind each, a friend's is shown (Document.Shown).
	// nil: none is.
	Friends func(peer string) bool

	// upgrade tunes the layout upgrade; only tests set it
	// (export_test.go: WithUpgradeStop).
	upgrade upgradeOptions
}

// Store is the node's only Redis user. It is safe for concurrent use.
type Store struct {
	rdb    *redis.Client
	server *Server // nil when connected to an external Redis
	log    *slog.Logger
	evMax  int64
	// peerMax is Options.PeerRootsMax.
	peerMax int64
	// friends is Options.Friends, handed to every document read.
	friends func(peer string) bool
	// cache is nil without Options.DocCache; stopCache ends its watch.
	cache     *docCache
	stopCache context.CancelFunc
	cacheDone chan struct{}
	// up is Options.upgrade, its batch size defaulted.
	up upgradeOptions
	// following is closed once Changes' first subscription is in place
	// (Following).
	following     chan struct{}
	followingOnce sync.Once
}

// Open connects to Redis, starting a managed redis-server first when
// opts.URL is empty. Every new connection makes sure keyspace
// notifications include notifyClasses, keeping any classes already set,
// so the setting survives a Redis restart.
//
// Every call honours its context's deadline down to the socket
// (go-redis ContextTimeoutEnabled), retries included: a caller that must
// answer fast, like an HTTP request, bounds its Redis calls with
// context.WithTimeout. Calls without a deadline use go-redis's read and
// write timeouts and up to 3 retries.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.EventsMaxLen <= 0 {
		opts.EventsMaxLen = 10_000
	}
	if opts.PeerRootsMax <= 0 {
		opts.PeerRootsMax = 100_000
	}
	if opts.upgrade.batch <= 0 {
		opts.upgrade.batch = defaultUpgradeBatch
	}
	s := &Store{log: opts.Logger.With("component", "store"), evMax: opts.EventsMaxLen, peerMax: opts.PeerRootsMax, up: opts.upgrade,
		following: make(chan struct{}), friends: opts.Friends}
	url := opts.URL
	if url == "" {
		if opts.DataDir == "" {
			return nil, errors.New("store: Options.DataDir is required without a Redis URL")
		}
		srv, err := StartServer(ctx, ServerConfig{Dir: filepath.Join(opts.DataDir, "redis"), Logger: opts.Logger})
		if err != nil {
			return nil, err
		}
		s.server, url = srv, srv.URL()
	}
	ro, err := redis.ParseURL(url)
	if err != nil {
		s.closeServer()
		return nil, fmt.Errorf("store: redis url %q: %w", url, err)
	}
	clientLogOnce.Do(func() { redis.SetLogger(clientLog{s.log}) })
	var warnOnce sync.Once
	ro.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
		// A Redis that forbids CONFIG (some hosted ones) still stores
		// fine; only keyspace notifications for other consumers are lost.
		if err := ensureNotify(ctx, cn); err != nil && !IsUnavailable(err) {
			warnOnce.Do(func() { s.log.Warn("cannot enable keyspace notifications", "err", err) })
		} else if err != nil {
			return err
		}
		return nil
	}
	ro.MaxRetries = 3
	ro.ContextTimeoutEnabled = true
	s.rdb = redis.NewClient(ro)
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		s.Close()
		return nil, fmt.Errorf("store: connect to %s: %w", ro.Addr, err)
	}
	if err := s.ensureLayout(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if opts.DocCache > 0 {
		s.cache = newDocCache(opts.DocCache)
		cctx, cancel := context.WithCancel(context.Background())
		s.stopCache, s.cacheDone = cancel, make(chan struct{})
		go func() {
			defer close(s.cacheDone)
			s.cache.watch(cctx, s.rdb)
		}()
	}
	return s, nil
}

// notifyClasses are the keyspace notification classes the node needs:
// K (keyspace channel), $ (strings), g (generic: DEL, RENAME, …) and x
// (expiries), so outside writers' SETs, DELs and expiries are seen.
const notifyClasses = "K$gx"

// ensureNotify adds every class of notifyClasses to
// notify-keyspace-events, never removing a class that is already set.
func ensureNotify(ctx context.Context, cn *redis.Conn) error {
	cur, err := cn.ConfigGet(ctx, "notify-keyspace-events").Result()
	if err != nil {
		return fmt.Errorf("store: read notify-keyspace-events: %w", err)
	}
	flags := cur["notify-keyspace-events"]
	want := withNotifyClasses(flags)
	if want == flags {
		return nil
	}
	if err := cn.ConfigSet(ctx, "notify-keyspace-events", want).Err(); err != nil {
		return fmt.Errorf("store: set notify-keyspace-events %q: %w", want, err)
	}
	return nil
}

// withNotifyClasses returns flags plus the classes of notifyClasses it
// lacks. "A" stands for every type class (g$lshzxetd), so with it only K
// can be missing.
func withNotifyClasses(flags string) string {
	for _, c := range notifyClasses {
		if strings.ContainsRune(flags, c) || (c != 'K' && strings.ContainsRune(flags, 'A')) {
			continue
		}
		flags += string(c)
	}
	return flags
}

// Close closes the connection pool and stops a managed redis-server.
func (s *Store) Close() error {
	var errs []error
	if s.stopCache != nil {
		s.stopCache()
		<-s.cacheDone
	}
	if s.rdb != nil {
		errs = append(errs, s.rdb.Close())
	}
	errs = append(errs, s.closeServer())
	return errors.Join(errs...)
}

func (s *Store) closeServer() error {
	if s.server == nil {
		return nil
	}
	return s.server.Close()
}

// Server returns the managed redis-server, or nil for an external Redis.
func (s *Store) Server() *Server { return s.server }

// Ping checks the connection.
func (s *Store) Ping(ctx context.Context) error { return s.rdb.Ping(ctx).Err() }

// Roots counts the roots in file:__index__.
func (s *Store) Roots(ctx context.Context) (int64, error) {
	return s.rdb.SCard(ctx, keyIndex).Result()
}

// LocalPaths counts the local paths in the path index (one member
// each): every file of the libraries the store knows, duplicates and
// sidecars included, however it came in (a scan or the watcher).
func (s *Store) LocalPaths(ctx context.Context) (int64, error) {
	return s.rdb.ZCard(ctx, keyPaths).Result()
}

// evArgs are the two trailing script arguments that append an event.
func (s *Store) evArgs() []any {
	return []any{s.evMax, time.Now().UnixMilli()}
}

// Schema keys. See doc.go.
const (
	keyIndex  = "file:__index__"
	keyPaths  = "path:__index__"
	keyEvents = "meta:events"
)

func fieldKey(r RootID, f string) string { return "file:" + string(r) + "/" + f }
func fieldsKey(r RootID) string          { return "fields:" + string(r) }
func cidKey(c string) string             { return "cid:" + c }
func cidAltKey(c string) string          { return "cidalt:" + c }

// clientLog routes go-redis's own log lines (dial failures while Redis is
// down, which the store reports as errors itself) to the store's logger at
// debug, instead of raw lines on stderr. go-redis has one logger per
// process: the first store's logger gets them.
type clientLog struct{ log *slog.Logger }

func (l clientLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.Log(ctx, slog.LevelDebug, "redis client: "+fmt.Sprintf(format, v...))
}

var clientLogOnce sync.Once
