package stills

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ipfs/go-cid"

	"github.com/metamesh/node/store"
)

// DefaultTimeout bounds one still: ffmpeg is killed past it and the video
// counts as failed.
const DefaultTimeout = time.Minute

// MaxFailed bounds the videos remembered as giving no still (failed.txt).
const MaxFailed = 4096

// Config configures a Maker.
type Config struct {
	// Dir holds the stills, <cid>.jpg, and failed.txt (DATA/stills).
	Dir string
	// FFmpeg is the ffmpeg binary.
	FFmpeg string
	// Store is where the links are written (Store.SetStill).
	Store *store.Store
	// Ready reports whether the libraries' first scan is done: no still
	// is made before it is.
	Ready func() bool
	// Timeout bounds one still; 0 is DefaultTimeout.
	Timeout time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
}

// Maker makes the stills of the local videos that have no poster and
// keeps their links (store.StillField) and files in step with the store.
type Maker struct {
	cfg  Config
	log  *slog.Logger
	wake chan struct{}

	mu sync.Mutex // guards what follows
	// queue is the roots to do, in the order they came (order), each
	// once (jobs).
	order []store.RootID
	jobs  map[store.RootID]job
	// links are the roots' stills as last handed; count how many roots
	// link each still CID; seen the roots a sweep under way handed.
	links map[store.RootID]string
	count map[string]int
	seen  map[store.RootID]bool
	// fresh are stills linked by the worker that no batch showed yet:
	// never removed as unlinked.
	fresh map[string]bool
	// failed are the IPFS CIDs of the videos ffmpeg made no still of.
	failed map[string]bool
}

// job is a root's still to make, or its link to drop.
type job struct {
	path     string
	video    string // the video's IPFS CID
	duration float64
	drop     bool
}

// New makes the directory and reads the failures remembered there;
// Run makes the stills.
func New(cfg Config) (*Maker, error) {
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("stills: %w", err)
	}
	m := &Maker{cfg: cfg, log: cfg.Logger.With("component", "stills"), wake: make(chan struct{}, 1),
		jobs: map[store.RootID]job{}, links: map[store.RootID]string{}, count: map[string]int{},
		fresh: map[string]bool{}, failed: map[string]bool{}}
	m.loadFailed()
	return m, nil
}

// Consumer is the Maker as store.Changes takes it: a write to a field
// that decides whether a root has a still queues it.
func (m *Maker) Consumer() store.Consumer {
	return store.Consumer{Name: "the stills", Fields: func(f string) bool {
		return f == store.StillField || f == store.PosterField || f == "fileType" || f == "filePath" || f == "fileinfo/duration"
	}, Take: m.Take}
}

// Take queues what a batch of changed roots asks for: a still for a
// confirmed local video with neither a poster nor a still, the link
// dropped from a root that got a poster (or is no longer local). A
// sweep's last batch forgets the roots no batch of the sweep named and
// removes the stills no root links any more.
func (m *Maker) Take(_ context.Context, b store.ChangeBatch) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if b.Sweep && b.First {
		m.seen = map[store.RootID]bool{}
	}
	for _, c := range b.Roots {
		if !c.Exists {
			m.setLink(c.Root, "")
			m.dequeue(c.Root)
			continue
		}
		if m.seen != nil {
			m.seen[c.Root] = true
		}
		m.take(c)
	}
	if b.Sweep && b.Last && m.seen != nil {
		for r := range m.links {
			if !m.seen[r] {
				m.setLink(r, "")
			}
		}
		m.seen = nil
		m.removeUnlinked()
	}
	if len(m.order) > 0 {
		select {
		case m.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// take decides what root c needs. Called with mu held.
func (m *Maker) take(c store.Changed) {
	f := c.Document.Fields
	still := f[store.StillField]
	m.setLink(c.Root, still)
	if still != "" {
		delete(m.fresh, still)
	}
	local := c.Document.FilePath() != ""
	switch {
	case still != "" && (f[store.PosterField] != "" || !local):
		m.enqueue(c.Root, job{drop: true})
	case (still == "" || !m.held(still)) && local && f["fileType"] == "video" && f[store.PosterField] == "" && c.Own.IPFS != "" && !m.failed[c.Own.IPFS]:
		d, _ := strconv.ParseFloat(f["fileinfo/duration"], 64)
		m.enqueue(c.Root, job{path: c.Document.FilePath(), video: c.Own.IPFS, duration: d})
	default:
		m.dequeue(c.Root)
	}
}

func (m *Maker) enqueue(r store.RootID, j job) {
	if _, ok := m.jobs[r]; !ok {
		m.order = append(m.order, r)
	}
	m.jobs[r] = j
}

func (m *Maker) dequeue(r store.RootID) { delete(m.jobs, r) }

// setLink records root r's still (or none), removing the file of a still
// no root links any more. Called with mu held.
func (m *Maker) setLink(r store.RootID, still string) {
	old := m.links[r]
	if old == still {
		return
	}
	if still == "" {
		delete(m.links, r)
	} else {
		m.links[r] = still
		m.count[still]++
	}
	if old != "" {
		if m.count[old]--; m.count[old] <= 0 {
			delete(m.count, old)
			if !m.fresh[old] {
				m.remove(old)
			}
		}
	}
}

// removeUnlinked removes the stills on disk no root links (and the
// worker did not just link), with temporary files a crash left. Called
// with mu held, after a sweep.
func (m *Maker) removeUnlinked() {
	ents, err := os.ReadDir(m.cfg.Dir)
	if err != nil {
		m.log.Warn("stills: cannot list the directory", "dir", m.cfg.Dir, "err", err)
		return
	}
	for _, e := range ents {
		c, ok := strings.CutSuffix(e.Name(), ".jpg")
		if !ok || strings.HasPrefix(c, ".") || m.count[c] > 0 || m.fresh[c] {
			continue
		}
		m.remove(c)
	}
}

func (m *Maker) remove(c string) {
	if err := os.Remove(m.path(c)); err != nil && !errors.Is(err, os.ErrNotExist) {
		m.log.Warn("stills: cannot remove an unlinked still", "cid", c, "err", err)
	}
}

// held reports whether the still c is on disk (a link whose file was
// removed by hand is made again).
func (m *Maker) held(c string) bool {
	_, err := os.Stat(m.path(c))
	return err == nil
}

func (m *Maker) path(c string) string { return filepath.Join(m.cfg.Dir, c+".jpg") }

// Open opens the still whose CID is c: os.ErrNotExist when the node
// holds none (c not a CID included).
func (m *Maker) Open(c string) (*os.File, error) {
	if d, err := cid.Decode(c); err != nil || d.String() != c {
		return nil, fmt.Errorf("stills: %q: %w", c, os.ErrNotExist)
	}
	return os.Open(m.path(c))
}
