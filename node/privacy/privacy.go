package privacy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// The marker files' names: in a library folder, each applies to the
// folder and everything under it. Neither is a library file (ingest
// skips dot-names).
const (
	// ShareMarker shares the folder's files' bytes over bitswap.
	ShareMarker = ".metamesh-share"
	// PrivateMarker makes the folder private: its files are not
	// announced, answered, found or fetched by peers.
	PrivateMarker = ".metamesh-private"
)

// IsMarker reports whether name (a path or a base name) is one of the
// marker files.
func IsMarker(name string) bool {
	b := filepath.Base(name)
	return b == ShareMarker || b == PrivateMarker
}

// Config is what the household chose on its command line.
type Config struct {
	// Libraries are the library directories, in the form stored paths
	// take (absolute, symlinks resolved: ingest.Libraries).
	Libraries []string
	// ShareAll shares every library file's bytes (--share-files alone).
	ShareAll bool
	// Shared are folders whose files' bytes are shared (--share-files=DIR),
	// each inside a library.
	Shared []string
}

// ErrNotInLibrary: a shared folder named on the command line is inside
// no library.
var ErrNotInLibrary = errors.New("not inside a library")

// Rules answer, for a local path, whether peers may learn of the file and
// whether they may fetch its bytes. They read the marker files at every
// question (a stat per folder up to the library's root), so a marker
// added or removed counts at once; what they found is kept only to tell
// which folders are private or shared (Folders). A nil *Rules keeps
// nothing private and shares nothing. Safe for concurrent use.
type Rules struct {
	libs     []string
	shareAll bool
	shared   []string

	mu   sync.Mutex
	seen map[string]string // folder → the marker found there last
}

// New checks cfg's shared folders (each must be an existing directory
// inside a library; ErrNotInLibrary otherwise) and returns the rules,
// with those folders in the form stored paths take.
func New(cfg Config) (*Rules, error) {
	r := &Rules{libs: slices.Clone(cfg.Libraries), shareAll: cfg.ShareAll, seen: map[string]string{}}
	for _, d := range cfg.Shared {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("shared folder %q: %w", d, err)
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, fmt.Errorf("shared folder %q: %w", d, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("shared folder %q: not a directory", d)
		}
		if r.library(abs) == "" {
			return nil, fmt.Errorf("shared folder %q: %w (libraries: %s)", d, ErrNotInLibrary, strings.Join(r.libs, ", "))
		}
		if !slices.Contains(r.shared, abs) {
			r.shared = append(r.shared, abs)
		}
	}
	return r, nil
}

// Verdict is what the rules say of one path.
type Verdict struct {
	// Private: peers learn nothing of the file (a .metamesh-private at
	// its folder or above, or a path in no library).
	Private bool
	// Shared: peers may fetch its bytes over bitswap (never when
	// Private).
	Shared bool
}

// Of says what peers may have of the library file at path (absolute, as
// stored). The nearest marker wins, but a private folder stays private
// whatever lies below it: a .metamesh-share under a .metamesh-private
// shares nothing. A marker that cannot be looked at (an error other than
// its absence) counts as .metamesh-private.
func (r *Rules) Of(path string) Verdict {
	if r == nil {
		return Verdict{}
	}
	lib := r.library(path)
	if lib == "" {
		return Verdict{Private: true}
	}
	v := Verdict{Shared: r.shareAll}
	for _, d := range r.shared {
		if within(d, path) {
			v.Shared = true
		}
	}
	for dir := filepath.Dir(path); within(lib, dir); dir = filepath.Dir(dir) {
		switch r.marker(dir) {
		case PrivateMarker:
			return Verdict{Private: true}
		case ShareMarker:
			v.Shared = true
		}
		if dir == lib {
			break
		}
	}
	return v
}

// Private reports whether peers may learn nothing of the file at path:
// no provider record, no search words, no record or search answer, no
// listing, no bytes.
func (r *Rules) Private(path string) bool { return r != nil && r.Of(path).Private }

// Shared reports whether peers may fetch the bytes of the file at path.
func (r *Rules) Shared(path string) bool { return r != nil && r.Of(path).Shared }

// marker looks at dir's markers: PrivateMarker (which wins when both are
// there, or when one cannot be looked at), ShareMarker or "".
func (r *Rules) marker(dir string) string {
	found := ""
	for _, m := range []string{PrivateMarker, ShareMarker} {
		_, err := os.Lstat(filepath.Join(dir, m))
		if err == nil || !(errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
			found = m
			break
		}
	}
	r.mu.Lock()
	if found == "" {
		delete(r.seen, dir)
	} else {
		r.seen[dir] = found
	}
	r.mu.Unlock()
	return found
}

// Look looks again at the markers of the folder a marker file's path
// names (the watcher saw it created or removed), so that Folders says
// what is there now.
func (r *Rules) Look(markerPath string) {
	if r != nil && r.library(markerPath) != "" {
		r.marker(filepath.Dir(markerPath))
	}
}

// Folders are the folders the rules know of, sorted.
type Folders struct {
	// ShareAll: every library file's bytes are shared (but private
	// folders').
	ShareAll bool
	// Shared are the folders whose files' bytes are shared: those named
	// on the command line and those a .metamesh-share was found in, but
	// for those inside a private folder.
	Shared []string
	// Private are the folders a .metamesh-private was found in.
	Private []string
}

// Folders says which folders are shared and which private: the command
// line's, and those whose marker a question or the watcher found
// (every folder holding a library file is looked at when the node
// announces its files at start).
func (r *Rules) Folders() Folders {
	if r == nil {
		return Folders{}
	}
	f := Folders{ShareAll: r.shareAll, Shared: slices.Clone(r.shared)}
	r.mu.Lock()
	for d, m := range r.seen {
		if m == PrivateMarker {
			f.Private = append(f.Private, d)
		} else if !slices.Contains(f.Shared, d) {
			f.Shared = append(f.Shared, d)
		}
	}
	r.mu.Unlock()
	// A shared folder inside a private one shares nothing.
	f.Shared = slices.DeleteFunc(f.Shared, func(s string) bool {
		return slices.ContainsFunc(f.Private, func(p string) bool { return within(p, s) })
	})
	slices.Sort(f.Shared)
	slices.Sort(f.Private)
	return f
}

// library is the library path lies in, "" for none.
func (r *Rules) library(path string) string {
	for _, l := range r.libs {
		if within(l, path) {
			return l
		}
	}
	return ""
}

// within reports whether path is dir or inside it.
func within(dir, path string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}
