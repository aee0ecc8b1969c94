package ingest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// The library boundary. Every file of a library the node reads (a video
// hashed, an NFO, a subtitle or poster it links, a file /api/file serves)
// is opened by OpenInLibrary: only a regular file, only inside its
// library (a symlink may point anywhere inside the library, never out of
// it), and without blocking on the open (a FIFO
// with no writer, a device). So nothing outside a library reaches a
// record or a peer, and no library file can hang a worker on its open.

// ErrOutsideLibrary is returned for a path, or a symlink's target, that
// is not inside the library it was asked in.
var ErrOutsideLibrary = errors.New("outside the library")

// ErrNotRegular is returned for a path that is not a regular file (a
// FIFO, a device, a socket, a directory).
var ErrNotRegular = errors.New("not a regular file")

// OpenInLibrary opens path, inside the library root lib, for reading,
// as the library boundary above says. Symlinks are resolved first (an
// absolute one pointing inside the library is fine); the file is then
// opened by its resolved path, without following a link it may have
// become since.
func OpenInLibrary(lib, path string) (*os.File, os.FileInfo, error) {
	if lib == "" || !within(lib, path) {
		return nil, nil, fmt.Errorf("%s: %w %s", path, ErrOutsideLibrary, lib)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, nil, err
	}
	if !within(lib, real) {
		return nil, nil, fmt.Errorf("%s: %w %s (it resolves to %s)", path, ErrOutsideLibrary, lib, real)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, nil, err
	}
	return checkOpened(f, path)
}

// openRegular opens path for reading only if it is a regular file, for a
// path outside any library (metamesh hash). Anything else is refused
// before it is opened: opening a FIFO that has no writer blocks in the
// kernel, out of reach of any context, and opening a device can have
// side effects. The open itself is non-blocking, in case path was
// swapped for a FIFO after the Stat, and what was opened is checked
// again.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	return checkOpened(f, path)
}

// checkOpened checks that what f opened is a regular file and clears
// O_NONBLOCK, which a regular file does not need.
func checkOpened(f *os.File, path string) (*os.File, os.FileInfo, error) {
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	if err == nil {
		err = setBlocking(f)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// setBlocking clears O_NONBLOCK, which a regular file does not need.
func setBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("%s: %w", f.Name(), serr)
	}
	return nil
}

// fileSystem is the ingester's way to its libraries: every read of a
// library file's bytes, every directory watch and every look at a
// library's root (available.go) go through it.
// libraryFS is the real one; a test wraps it to fail, block or change a
// file at one of the reads, an interleaving real timing gives only under
// load.
type fileSystem interface {
	// Open opens a library file for one of ingest's reads of it.
	Open(path string, r read) (*os.File, error)
	// Watch adds a watch on a library directory.
	Watch(dir string) error
	// Root looks at a library's root: its device and inode, its marker,
	// whether it holds anything. It may block (a hung mount); the caller
	// bounds its wait.
	Root(lib string) (rootLook, error)
}

// read says which of ingest's reads of a file an Open is for.
type read uint8

const (
	readSample read = iota // the midhash's samples: a large file's arrival, a move's pairing
	readFull               // the full hash pass
	readWhole              // a small file, read whole once
)

// libraryFS opens a file inside its library (OpenInLibrary) and watches
// with the ingester's fsnotify watcher.
type libraryFS struct{ in *Ingester }

func (l libraryFS) Open(path string, _ read) (*os.File, error) {
	f, _, err := OpenInLibrary(l.in.libraryOf(path), path)
	return f, err
}

func (l libraryFS) Watch(dir string) error { return l.in.watcher.Add(dir) }

func (libraryFS) Root(lib string) (rootLook, error) { return lookRoot(lib) }
