package ingest

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/metamesh/node/dag"
)

// Config configures an Ingester. Zero values take the defaults listed.
type Config struct {
	// Libraries are the directories to ingest and watch. Required.
	Libraries []string
	// Workers bounds concurrent hashing. Default runtime.NumCPU().
	Workers int
	// Settle is how long a file's size and mtime must stay unchanged
	// before it is hashed, so a file still being copied is not ingested
	// half-way. Default 2s.
	Settle time.Duration
	// RescanInterval is the period of full rescans used when the library
	// cannot be watched completely (inotify watch limit). Default 10m.
	RescanInterval time.Duration
	// ProgressInterval is how often scan progress is logged. Default 5s.
	ProgressInterval time.Duration
	// Watch turns on fsnotify watching. Run sets it; Scan ignores it.
	Watch bool
	// ReleaseOutside makes every full scan release stored paths that lie
	// under no configured library (the node's library set changed), so the
	// store never serves files it no longer watches. A running node sets
	// it; a one-off scan of a subset of the libraries leaves it off. The
	// stored paths of a configured library that is completely empty are
	// kept either way (an unmounted drive).
	ReleaseOutside bool
	// OnHashed, when not nil, is told how long each full hash pass of a
	// file took, in seconds (for metrics). It may be called from several
	// goroutines at once.
	OnHashed func(seconds float64)
	// OnIndexed, when not nil, is given the index of the IPFS DAG of
	// each file the full hash pass read from disk (recorded while
	// hashing, so it costs no read), once the file is known unchanged by the
	// pass (before its hashes are stored): the
	// node keeps it to serve the file's blocks. Small files read whole
	// into memory are not indexed here. It may be called from several
	// goroutines at once.
	OnIndexed func(path string, ix *dag.Index)
	// OnApplied, when not nil, is told each change applied to the store
	// for a path, by the watcher or a scan: a file added, changed or
	// deleted there, or moved there from from (else ""). The file the
	// path held before is no longer there: the node stops serving what it
	// holds open at either path. It may be called from several
	// goroutines at once.
	OnApplied func(path, from string)
	// Markers are file names (dot-names, which are never ingested) the
	// watcher tells OnMarker of: each event on a file of one of these
	// names in a watched library (created, written, removed, renamed)
	// is told with its path, from the loop's goroutine, so OnMarker
	// must not block. The node's sharing markers (node/privacy).
	Markers  []string
	OnMarker func(path string)
	// StopWait bounds how long Close waits for workers blocked on a
	// file (a read of a hung network mount): past it Close returns and
	// logs the paths it left. Default 10s.
	StopWait time.Duration
	// StuckAfter is how long a job may run while no byte is hashed
	// before Stuck reports it. Default 2m.
	StuckAfter time.Duration
	// LibraryCheck is how often a watching ingester looks at each
	// library's root to tell whether it went away or came back
	// (available.go). Default 2s.
	LibraryCheck time.Duration
	// LibraryTimeout bounds a look at a library's root: a root that does
	// not answer for this long (a hung mount) makes its library
	// unavailable. Default 10s.
	LibraryTimeout time.Duration
	// Extractors; nil means DefaultExtractors.
	Extractors []Extractor
	// Logger; default slog.Default().
	Logger *slog.Logger
}

func (c *Config) setDefaults() {
	if c.Workers <= 0 {
		c.Workers = runtime.NumCPU()
	}
	if c.Settle <= 0 {
		c.Settle = 2 * time.Second
	}
	if c.RescanInterval <= 0 {
		c.RescanInterval = 10 * time.Minute
	}
	if c.ProgressInterval <= 0 {
		c.ProgressInterval = 5 * time.Second
	}
	if c.StuckAfter <= 0 {
		c.StuckAfter = 2 * time.Minute
	}
	if c.StopWait <= 0 {
		c.StopWait = 10 * time.Second
	}
	if c.LibraryCheck <= 0 {
		c.LibraryCheck = 2 * time.Second
	}
	if c.LibraryTimeout <= 0 {
		c.LibraryTimeout = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Extractors == nil {
		c.Extractors = DefaultExtractors(c.Logger)
	}
}

// Validate checks every library is an existing directory and makes the
// paths absolute, clean and free of symlinks (see Libraries).
func (c *Config) Validate() error {
	libs, err := Libraries(c.Libraries)
	if err != nil {
		return err
	}
	c.Libraries = libs
	return nil
}

// Libraries checks that every dir exists and is a directory, and returns
// them absolute with symlinks resolved (the form stored paths take),
// without repeats: a directory given twice, under two spellings
// ("lib", "lib/", a symlink to it), or inside another library is
// returned once, as part of the outermost one, so nothing is scanned or
// counted twice. The order is that of first appearance. The error names
// the bad entry.
func Libraries(dirs []string) ([]string, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("library: at least one library directory is required")
	}
	resolved := make([]string, len(dirs))
	for i, lib := range dirs {
		abs, err := filepath.Abs(lib)
		if err != nil {
			return nil, fmt.Errorf("library %q: %w", lib, err)
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		fi, err := os.Stat(abs)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("library %q does not exist", lib)
		}
		if err != nil {
			return nil, fmt.Errorf("library %q: %w", lib, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("library %q is not a directory", lib)
		}
		resolved[i] = abs
	}
	var out []string
	for i, lib := range resolved {
		covered := false
		for j, other := range resolved {
			if (other == lib && j < i) || (other != lib && within(other, lib)) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, lib)
		}
	}
	return out, nil
}
