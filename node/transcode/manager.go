package transcode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Defaults of Config.
const (
	DefaultMax        = 1
	DefaultCacheBytes = 2 << 30
	DefaultWait       = 10 * time.Second
)

// ErrBusy is Open's error when every one of Config.Max transcodes is
// running for other streams and none ended within Config.Wait.
var ErrBusy = errors.New("transcode: every transcode slot is busy")

// Config configures a Manager.
type Config struct {
	// Dir holds the streams made (DATA/transcode).
	Dir string
	// FFmpeg is the ffmpeg binary.
	FFmpeg string
	// Max is how many ffmpeg processes run at once (--transcodes);
	// default DefaultMax.
	Max int
	// CacheBytes caps the streams kept in Dir (--transcode-cache); the
	// least recently used go first. Default DefaultCacheBytes.
	CacheBytes int64
	// Wait is how long Open waits for a slot before ErrBusy; default
	// DefaultWait.
	Wait time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
}

// Opener opens the bytes of the file a stream is made of; ffmpeg reads
// them (and seeks in them) through a loopback HTTP address of the
// Manager's, each of its requests with a file of its own.
type Opener func(ctx context.Context) (io.ReadSeekCloser, error)

// Request is one stream asked for.
type Request struct {
	CID    string
	Source Source
	Plan   Plan
	// Start is where the stream starts, in seconds of the file.
	Start float64
	Open  Opener
}

// Manager runs the transcodes: at most Config.Max ffmpeg processes,
// niced; a stream several players ask for at once made once; a stream
// no player reads any more stopped; the streams made kept under a cap.
// Safe for concurrent use.
type Manager struct {
	cfg   Config
	log   *slog.Logger
	nice  string // the nice binary, "" when there is none
	slots chan struct{}
	in    *inputs
	cache *cache

	mu      sync.Mutex
	jobs    map[string]*job // running, by key
	last    map[string]*job // the latest of each CID, for Status
	running int             // ffmpeg processes alive
	closed  bool
	wg      sync.WaitGroup
}

// New makes a Manager over cfg.Dir (created; streams left half-made
// by an earlier run removed, whole ones kept in the cache). It starts
// nothing until a stream is asked for.
func New(cfg Config) (*Manager, error) {
	if cfg.Dir == "" || cfg.FFmpeg == "" {
		return nil, errors.New("transcode: Config.Dir and Config.FFmpeg are required")
	}
	if cfg.Max <= 0 {
		cfg.Max = DefaultMax
	}
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = DefaultCacheBytes
	}
	if cfg.Wait <= 0 {
		cfg.Wait = DefaultWait
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c, err := openCache(cfg.Dir, cfg.CacheBytes)
	if err != nil {
		return nil, err
	}
	nice, _ := exec.LookPath("nice")
	return &Manager{cfg: cfg, log: cfg.Logger.With("component", "transcode"), nice: nice,
		slots: make(chan struct{}, cfg.Max), in: &inputs{open: map[string]Opener{}}, cache: c,
		jobs: map[string]*job{}, last: map[string]*job{}}, nil
}

// Open returns the stream req asks for, from its start: a stream kept
// whole, one being made (shared with the players reading it), or a new
// one (waiting up to Config.Wait for a slot, else ErrBusy). The caller
// closes it; the last reader of a stream being made that closes it
// stops its ffmpeg.
func (m *Manager) Open(ctx context.Context, req Request) (*Stream, error) {
	key := keyOf(req)
	if s, ok := m.whole(ctx, key, req); ok {
		return s, nil
	}
	if s, ok, err := m.join(ctx, key); ok || err != nil {
		return s, err
	}
	if err := m.acquire(ctx); err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		m.release()
		return nil, errors.New("transcode: closed")
	}
	if j := m.jobs[key]; j != nil {
		// Another player started it while this one waited.
		m.mu.Unlock()
		m.release()
		s, _, err := m.join(ctx, key)
		return s, err
	}
	j, err := m.start(key, req)
	if err != nil {
		m.mu.Unlock()
		m.release()
		return nil, err
	}
	s, err := j.reader(ctx, m)
	m.mu.Unlock()
	return s, err
}

// whole is a stream over a stream kept whole, when there is one.
func (m *Manager) whole(ctx context.Context, key string, req Request) (*Stream, bool) {
	path, ok := m.cache.get(key)
	if !ok {
		return nil, false
	}
	f, err := os.Open(path)
	if err != nil {
		m.cache.drop(key)
		return nil, false
	}
	j := newJob(key, req, path)
	j.cached = true
	j.finish(nil)
	m.mu.Lock()
	m.last[req.CID] = j
	m.mu.Unlock()
	return &Stream{ctx: ctx, f: f, j: j}, true
}

// join is a stream over the stream of key being made, when it is.
func (m *Manager) join(ctx context.Context, key string) (*Stream, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j := m.jobs[key]
	if j == nil {
		return nil, false, nil
	}
	s, err := j.reader(ctx, m)
	return s, true, err
}

// acquire takes a slot, waiting up to Config.Wait.
func (m *Manager) acquire(ctx context.Context) error {
	t := time.NewTimer(m.cfg.Wait)
	defer t.Stop()
	select {
	case m.slots <- struct{}{}:
		return nil
	case <-t.C:
		return fmt.Errorf("%w: %d of %d running", ErrBusy, m.Running(), m.cfg.Max)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (m *Manager) release() { <-m.slots }

// Running is how many ffmpeg processes run now.
func (m *Manager) Running() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.running
}

// Max is Config.Max, as defaulted.
func (m *Manager) Max() int { return m.cfg.Max }

// Status is what the Manager knows of the latest stream of cid; ok is
// false before any.
func (m *Manager) Status(cid string) (st Status, ok bool) {
	m.mu.Lock()
	j := m.last[cid]
	m.mu.Unlock()
	if j == nil {
		return Status{}, false
	}
	return j.status(), true
}

// Close stops every ffmpeg and waits for them; it is idempotent.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	for _, j := range m.jobs {
		j.cancel()
	}
	m.mu.Unlock()
	m.wg.Wait()
	return m.in.close()
}

func keyOf(r Request) string {
	b := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	return fmt.Sprintf("%s.%s.v%d.a%d.%d", r.CID, r.Plan.Mode, b(r.Plan.CopyVideo), b(r.Plan.CopyAudio), int64(r.Start*1000))
}
