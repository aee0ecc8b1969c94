package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/metamesh/node/api"
)

// A data directory that runs out of space makes every write of the node
// fail: Redis refuses writes (MISCONF) once it cannot append to its AOF,
// and the search index, the block index and the provider store cannot
// write their files. The node then keeps serving what it has, says why
// it is not ready (/ready, /api/status, the page, metamesh_data_full),
// and once space is back takes in what it skipped meanwhile.

// MinFree is the free space under which the data directory counts as
// full: a node with less does not start, and a running one is degraded
// (not ready) until it has this much again. It leaves room for what a
// node writes between two looks (Redis' append-only file, an index
// segment, a pebble compaction).
const MinFree = 64 << 20

// spaceInterval is how often a running node looks at its data
// directory's free space (a statfs).
const spaceInterval = time.Second

// ErrDataDirFull: the data directory has less than MinFree bytes free.
var ErrDataDirFull = errors.New("data directory full")

// DataDirFullError is an ErrDataDirFull that says how much is free,
// where: "data directory full: 0 bytes free on /srv/metamesh".
type DataDirFullError struct {
	Dir  string
	Free uint64
}

func (e *DataDirFullError) Error() string {
	return fmt.Sprintf("%v: %d bytes free on %s", ErrDataDirFull, e.Free, e.Dir)
}

func (e *DataDirFullError) Unwrap() error { return ErrDataDirFull }

// freeSpace is the space an unprivileged writer may still use on the
// file system of dir (statfs' available blocks, as df says), or of its
// nearest existing parent when dir does not exist yet (a first start).
func freeSpace(dir string) (uint64, error) {
	fs, err := statfsNearest(dir)
	if err != nil {
		return 0, err
	}
	return fs.Bavail * uint64(fs.Bsize), nil
}

// statfsNearest is statfs of dir, or of its nearest existing parent.
func statfsNearest(dir string) (unix.Statfs_t, error) {
	for d := dir; ; {
		var fs unix.Statfs_t
		err := unix.Statfs(d, &fs)
		if err == nil {
			return fs, nil
		}
		parent := filepath.Dir(d)
		if !errors.Is(err, os.ErrNotExist) || parent == d {
			return fs, fmt.Errorf("free space of %s: %w", dir, err)
		}
		d = parent
	}
}

// checkSpace refuses a data directory with less than MinFree bytes free
// (a *DataDirFullError); a file system that cannot say passes, and so
// does a read-only one, which claimDataDir says is read-only (the fix a
// household needs there is not space).
func checkSpace(dir string) error {
	free, err := freeSpace(dir)
	if err != nil || free >= MinFree || readOnlyFS(dir) {
		return nil
	}
	return &DataDirFullError{Dir: dir, Free: free}
}

// readOnlyFS reports whether the file system of dir, or of its nearest
// existing parent, is mounted read-only.
func readOnlyFS(dir string) bool {
	fs, err := statfsNearest(dir)
	return err == nil && fs.Flags&unix.ST_RDONLY != 0
}

// spaceWatch looks at the data directory's free space while the node
// runs. Every read (state: /ready, /api/status, a scrape, and the watch's
// own look every spaceInterval) looks at the disk; the first that finds
// it full says so in the log and marks it, so a fill the watch's looks
// fall between is not missed when anything else saw it. Once the
// directory has space again and Redis takes writes, the watch has the
// libraries rescanned, so every file skipped meanwhile is taken in.
type spaceWatch struct {
	dir string
	log *slog.Logger
	// full is set by the read that first finds the directory full, and
	// cleared by the watch once it has space again and Redis takes
	// writes.
	full atomic.Bool
}

// state is the data directory's part of /api/status, as the disk is now.
func (w *spaceWatch) state() api.DataDir {
	d := api.DataDir{Path: w.dir, MinFreeBytes: MinFree}
	free, err := freeSpace(w.dir)
	if err != nil {
		d.Error = err.Error()
		return d
	}
	d.FreeBytes, d.Full = free, free < MinFree
	if d.Full && w.full.CompareAndSwap(false, true) {
		w.log.Warn("data directory full: serving what the node has; files added meanwhile are taken in once space is freed",
			"dir", d.Path, "free", d.FreeBytes, "minFree", d.MinFreeBytes)
	}
	return d
}

// problem is the data directory's reason not to be ready, "" when it has
// space.
func (w *spaceWatch) problem() string {
	d := w.state()
	if !d.Full {
		return ""
	}
	return (&DataDirFullError{Dir: d.Path, Free: d.FreeBytes}).Error()
}

// run looks every spaceInterval until ctx ends. writable reports whether
// the store takes writes again (a Redis that failed to append to its AOF
// refuses them, PING included, until its next try succeeds, a second
// later); recovered is called once it does after the directory was full.
func (w *spaceWatch) run(ctx context.Context, writable func(context.Context) error, recovered func()) {
	t := time.NewTicker(spaceInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		d := w.state()
		if d.Error != "" || d.Full || !w.full.Load() {
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, spaceInterval)
		err := writable(wctx)
		cancel()
		if err != nil {
			continue // Redis tries its AOF again every second: look again
		}
		w.full.Store(false)
		w.log.Info("data directory has space again; rescanning the libraries for the files skipped meanwhile", "dir", d.Path, "free", d.FreeBytes)
		recovered()
	}
}
