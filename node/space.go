package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

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
// directory's free space.
const spaceInterval = 2 * time.Second

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
	for d := dir; ; {
		var fs syscall.Statfs_t
		err := syscall.Statfs(d, &fs)
		if err == nil {
			return fs.Bavail * uint64(fs.Bsize), nil
		}
		parent := filepath.Dir(d)
		if !errors.Is(err, os.ErrNotExist) || parent == d {
			return 0, fmt.Errorf("free space of %s: %w", dir, err)
		}
		d = parent
	}
}

// checkSpace refuses a data directory with less than MinFree bytes free
// (a *DataDirFullError); a file system that cannot say passes.
func checkSpace(dir string) error {
	free, err := freeSpace(dir)
	if err != nil || free >= MinFree {
		return nil
	}
	return &DataDirFullError{Dir: dir, Free: free}
}

// spaceWatch looks at the data directory's free space while the node
// runs. Reads (state) look at the disk each time; the watch's goroutine
// only says, in the log, when the directory fills and when it has space
// again, and then has the libraries rescanned once Redis takes writes
// again, so every file skipped meanwhile is taken in.
type spaceWatch struct {
	dir string
	log *slog.Logger
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
// refuses them, PING included, until its next try succeeds); recovered is
// called once it does after the directory was full.
func (w *spaceWatch) run(ctx context.Context, writable func(context.Context) error, recovered func()) {
	t := time.NewTicker(spaceInterval)
	defer t.Stop()
	full := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		d := w.state()
		switch {
		case d.Error != "":
			continue
		case d.Full && !full:
			full = true
			w.log.Warn("data directory full: serving what the node has; files added meanwhile are taken in once space is freed",
				"dir", d.Path, "free", d.FreeBytes, "minFree", d.MinFreeBytes)
		case !d.Full && full:
			wctx, cancel := context.WithTimeout(ctx, spaceInterval)
			err := writable(wctx)
			cancel()
			if err != nil {
				continue // Redis retries its AOF every second: look again
			}
			full = false
			w.log.Info("data directory has space again; rescanning the libraries for the files skipped meanwhile", "dir", d.Path, "free", d.FreeBytes)
			recovered()
		}
	}
}
