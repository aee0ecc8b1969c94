package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/metamesh/node/store"
)

// Ingester keeps a store in sync with library directories: it scans them,
// watches them, hashes what is new or changed in a bounded worker pool and
// applies the file lifecycle through the store.
//
// One goroutine (loop) owns the event loop, the debounce state and the
// set of paths in flight; workers hash off the loop; the scan walks on its
// own goroutine and hands paths to the loop.
type Ingester struct {
	cfg   Config
	st    Store
	log   *slog.Logger
	queue *queue
	prog  progress
	errs  errSet
	// changes collects the changes applied, for the log.
	changes changeLog
	// firstIngest is set while a scan runs on a store that knew no file
	// of its libraries: its changes are not told one by one (applied).
	firstIngest atomic.Bool
	// relinks collects the videos to relink, from every worker, until a
	// job's result takes them to the loop.
	relinks pathSet
	// suspect are the paths Rehash named: hashed again when next looked
	// at, whatever their size and mtime say.
	suspect pathSet
	// busy are the jobs the workers run now (for Stuck and Close).
	busy busyJobs

	// libs are the libraries' availability (available.go).
	libs *libraries

	watcher *fsnotify.Watcher
	// fs reads library files and watches directories (libraryFS).
	fs fileSystem

	marks    chan []mark     // paths from scans and workers for the loop
	finished chan result     // workers report done paths
	rescan   chan struct{}   // ask for a full rescan
	idleReq  chan chan error // WaitIdle

	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// mark asks the loop to look at a path: settled paths go straight to a
// worker, others wait until their size and mtime stop moving.
type mark struct {
	path    string
	settled bool
	scan    bool
	size    int64
	stat    store.FileStat // as the scan found it (Path "" when not walked)
	// pair: one end of what may be a move made while the node was
	// stopped, which a scan found (a new path, scan set, or a stored path
	// gone): the loop hands the pair marks of one message to one settle
	// job.
	pair bool
}

type result struct {
	job    job
	retry  bool     // look at the path again once it settles
	next   []job    // jobs a settle batch paired
	hold   []string // vanished paths of a settle batch that wait for a partner
	touch  []string // paths to look at again
	rescan bool     // the store could not say what is under a removed directory
	// unchanged are a batch's paths the store already had as they are
	// (their metadata perhaps extracted again): a sidecar among them
	// relinks nothing.
	unchanged []string
	// relink are videos whose sidecars changed: each gets a jobRelink
	// once no other job holds it.
	relink []string
}

// New makes an Ingester; it starts nothing until Start.
func New(st Store, cfg Config) (*Ingester, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	in := &Ingester{
		cfg:      cfg,
		st:       st,
		log:      cfg.Logger.With("component", "ingest"),
		queue:    newQueue(),
		marks:    make(chan []mark, 64),
		finished: make(chan result, 64),
		rescan:   make(chan struct{}, 1),
		idleReq:  make(chan chan error),
	}
	in.prog.p.State = StateStarting
	in.fs = libraryFS{in}
	in.libs = newLibraries(in)
	return in, nil
}

// Start adds the watches (when cfg.Watch), then starts the event loop, the
// workers and the initial scan, which reconciles the store with the
// library: unchanged files are not re-hashed, missing files are deleted,
// new and changed files are ingested.
func (in *Ingester) Start(ctx context.Context) error {
	ctx, in.cancel = context.WithCancel(ctx)
	ls := newLoopState()
	// Each library's root as it is now: an unavailable one is neither
	// watched nor walked until it comes back.
	for _, lib := range in.cfg.Libraries {
		in.libs.check(lib)
		st, gen := in.libs.state(lib)
		ls.gen[lib], ls.down[lib] = gen, !st.Available
	}
	watching := false
	if in.cfg.Watch {
		w, err := fsnotify.NewBufferedWatcher(4096)
		if err != nil {
			return fmt.Errorf("ingest: start watcher: %w", err)
		}
		in.watcher = w
		watching = in.watchAll(ls)
	}
	for i := 0; i < in.cfg.Workers; i++ {
		in.wg.Add(1)
		go in.worker(ctx)
	}
	in.wg.Add(2)
	go in.loop(ctx, ls, watching)
	go in.reportProgress(ctx)
	if in.cfg.Watch {
		in.wg.Add(1)
		go in.watchLibraries(ctx.Done())
	}
	in.requestRescan()
	return nil
}

// Progress returns the progress of the current or last full scan; Errors
// counts the paths that failed and are not fixed yet.
func (in *Ingester) Progress() Progress {
	p := in.prog.get()
	p.Errors = in.errs.len()
	return p
}

// Libraries says which libraries are available, and why the others are
// not (available.go), as the last looks at their roots found them.
func (in *Ingester) Libraries() []LibraryState { return in.libs.states() }

// Unavailable is a *LibraryUnavailableError when the library lib was
// unavailable at its last look, else nil; it does not look again.
func (in *Ingester) Unavailable(lib string) error { return in.libs.err(lib) }

// CheckLibrary looks at the root of lib now (at most
// Config.LibraryTimeout) and returns a *LibraryUnavailableError when
// the library is unavailable: a reader whose open of a library file
// failed tells a library gone from a file gone.
func (in *Ingester) CheckLibrary(lib string) error {
	in.libs.check(lib)
	return in.libs.err(lib)
}

// QueueLen is the number of jobs waiting for a worker.
func (in *Ingester) QueueLen() int { return in.queue.len() }

// WaitIdle blocks until the last scan has finished and no path is pending,
// queued or being hashed.
func (in *Ingester) WaitIdle(ctx context.Context) error {
	ch := make(chan error, 1)
	select {
	case in.idleReq <- ch:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Rescan asks for a full rescan (as after an event-queue overflow).
func (in *Ingester) Rescan() { in.requestRescan() }

func (in *Ingester) requestRescan() {
	select {
	case in.rescan <- struct{}{}:
	default:
	}
}

// Close stops the loop, the scan and the workers and waits for them. It is
// idempotent.
func (in *Ingester) Close() error {
	var err error
	in.once.Do(func() {
		if in.cancel != nil {
			in.cancel()
		}
		done := make(chan struct{})
		go func() { in.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(in.cfg.StopWait):
			in.log.Warn("stopped without the workers still blocked on a file", "waited", in.cfg.StopWait, "paths", in.busy.paths())
		}
		if in.watcher != nil {
			err = in.watcher.Close()
		}
		in.prog.update(func(p *Progress) { p.State = StateStopped })
	})
	return err
}

// Scan ingests the libraries once (no watching) and returns when the
// store matches them. onProgress, when not nil, is called every interval
// while it runs and once at the end.
func Scan(ctx context.Context, st Store, cfg Config, interval time.Duration, onProgress func(Progress)) (Progress, error) {
	cfg.Watch = false
	in, err := New(st, cfg)
	if err != nil {
		return Progress{}, err
	}
	if err := in.Start(ctx); err != nil {
		return Progress{}, err
	}
	done := make(chan error, 1)
	go func() { done <- in.WaitIdle(ctx) }()
	t := time.NewTicker(max(interval, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case err := <-done:
			p := in.Progress()
			err = errors.Join(err, in.Close())
			if onProgress != nil {
				onProgress(p)
			}
			return p, err
		case <-t.C:
			if onProgress != nil {
				onProgress(in.Progress())
			}
		}
	}
}

// reportProgress logs scan progress every ProgressInterval while scanning
// or hashing, and the changes applied so far during a long burst
// (the loop writes them whenever it goes idle).
func (in *Ingester) reportProgress(ctx context.Context) {
	defer in.wg.Done()
	t := time.NewTicker(in.cfg.ProgressInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			in.logChanges()
			return
		case <-t.C:
			in.logChanges()
			p := in.Progress()
			if p.State != StateScanning && p.State != StateHashing {
				continue
			}
			in.log.Info("scan progress", "state", p.State, "files", fmt.Sprintf("%d/%d", p.FilesDone, p.FilesTotal),
				"bytes", fmt.Sprintf("%d/%d", p.BytesDone, p.BytesTotal), "MBps", fmt.Sprintf("%.1f", p.Rate/1e6),
				"filesPerSecond", fmt.Sprintf("%.1f", p.FilesRate))
		}
	}
}
