package ingest

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/metamesh/node/model"
)

// A library is a place that can go away: a drive is unmounted, a NAS
// stops answering, a folder is moved elsewhere. Its files have not been
// deleted then, and the store must not forget them. So each library's
// root is looked at (every Config.LibraryCheck, when an event names the
// root, before a scan walks it and before any of its paths is deleted),
// and a library is unavailable when, since the last look that found it
// available:
//
//   - its root is gone, is no directory, or cannot be read;
//   - a look does not return within Config.LibraryTimeout (a hung mount);
//   - its marker file (MarkerName) is gone or names another library;
//   - with no marker (a library the node cannot write), its root is on
//     another device or is another directory (inode);
//   - a scan found it completely empty while the store knows files in
//     it, and no marker vouches that it was emptied on purpose.
//
// While a library is unavailable nothing of it is deleted, its watches
// are dropped and its events ignored, and the node answers its files'
// bytes with ErrLibraryUnavailable. It is available again once its
// marker, or its device and inode, are back (a library that was empty
// only has to hold something again); it is then watched anew and
// rescanned: new files are found, unchanged ones are not hashed again,
// and moves made meanwhile are paired as after a restart.
//
// A library that is empty at a look may change device and inode
// freely: nothing of it could be lost (a drive mounted after the node
// started).

// MarkerName is the file a running node writes in each library's root
// once the library holds something, when it can: its first line names
// the library ("metamesh-library <id>"). The ingester reads it; it is
// hidden, so never ingested.
const MarkerName = ".metamesh-library"

// markerTag begins a marker's first line.
const markerTag = "metamesh-library "

// ErrLibraryUnavailable: the library holding a path is unavailable; a
// *LibraryUnavailableError says which.
var ErrLibraryUnavailable = errors.New("library unavailable")

// LibraryUnavailableError is an ErrLibraryUnavailable naming the library
// ("library unavailable: /media/films"); Reason says why.
type LibraryUnavailableError struct {
	Dir    string
	Reason string
}

func (e *LibraryUnavailableError) Error() string { return "library unavailable: " + e.Dir }

// Unwrap makes errors.Is(err, ErrLibraryUnavailable) hold, and
// errors.Is(err, model.ErrUnavailable): the API answers it 503.
func (e *LibraryUnavailableError) Unwrap() []error {
	return []error{ErrLibraryUnavailable, model.ErrUnavailable}
}

// LibraryState is whether one library is available (Ingester.Libraries).
type LibraryState struct {
	Dir       string
	Available bool
	// Reason says why it is unavailable ("its directory is gone").
	Reason string
	// Since is when it became unavailable, or available again (zero
	// when it has been available since the start).
	Since time.Time
}

// rootLook is what one look at a library's root found.
type rootLook struct {
	dev, ino uint64
	marker   string // the library ID its marker holds; "" without one
	empty    bool   // no entry but the marker
}

// errNotAnswering: a look at a root did not return in time.
var errNotAnswering = errors.New("not answering")

// libState is one library's availability, under libraries.mu.
type libState struct {
	LibraryState
	// known: a look found it available once, so the fields below are
	// those of the last look that did.
	known    bool
	dev, ino uint64
	marker   string
	empty    bool
	// emptyKept is the number of stored files a scan kept because it
	// found the library empty (the reason it is unavailable).
	emptyKept int
	// gen grows each time the library becomes available again, or its
	// root changed while it was available and empty: the loop watches
	// it anew and rescans.
	gen  int
	look *lookCall // the look under way
}

// lookCall is one look at a root, which every check waits for rather
// than start another on a hung mount.
type lookCall struct {
	start time.Time
	done  chan struct{}
	l     rootLook
	err   error
}

// libraries tracks the availability of the ingester's libraries; it is
// safe for concurrent use (the poller, workers, scans and the node's
// readers of files look).
type libraries struct {
	in   *Ingester
	mu   sync.Mutex
	libs map[string]*libState // fixed at New
	// changed tells the loop that a library went or came back.
	changed chan struct{}
	// poke asks the poller for a look now (an event named a root).
	poke chan struct{}
}

func newLibraries(in *Ingester) *libraries {
	ls := &libraries{in: in, libs: map[string]*libState{}, changed: make(chan struct{}, 1), poke: make(chan struct{}, 1)}
	for _, d := range in.cfg.Libraries {
		ls.libs[d] = &libState{LibraryState: LibraryState{Dir: d, Available: true}}
	}
	return ls
}

// states are the libraries' states as the last looks found them, in
// the order of Config.Libraries.
func (ls *libraries) states() []LibraryState {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	out := make([]LibraryState, 0, len(ls.libs))
	for _, d := range ls.in.cfg.Libraries {
		out = append(out, ls.libs[d].LibraryState)
	}
	return out
}

// state is one library's state as last found, and its generation.
func (ls *libraries) state(dir string) (LibraryState, int) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	s := ls.libs[dir]
	if s == nil {
		return LibraryState{Dir: dir, Available: true}, 0
	}
	return s.LibraryState, s.gen
}

// vouched: the library's marker was there at its last look, so an
// empty library was emptied, not unmounted.
func (ls *libraries) vouched(dir string) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	s := ls.libs[dir]
	return s != nil && s.Available && s.known && s.marker != ""
}

// err is ErrLibraryUnavailable for an unavailable library as last
// found, else nil.
func (ls *libraries) err(dir string) error {
	st, _ := ls.state(dir)
	if st.Available {
		return nil
	}
	return &LibraryUnavailableError{Dir: dir, Reason: st.Reason}
}

// check looks at a library's root now and returns its state.
func (ls *libraries) check(dir string) LibraryState {
	ls.mu.Lock()
	s := ls.libs[dir]
	ls.mu.Unlock()
	if s == nil {
		return LibraryState{Dir: dir, Available: true}
	}
	l, err := ls.look(s)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	was, gen := s.Available, s.gen
	reason := ls.judge(s, l, err)
	s.Available, s.Reason = reason == "", reason
	switch {
	case was && !s.Available:
		s.Since = time.Now()
		ls.in.log.Warn("library unavailable: " + dir + ": " + reason)
	case !was && s.Available:
		s.Since, s.emptyKept = time.Now(), 0
		s.gen++
		ls.in.log.Info("library available again: " + dir)
	}
	if s.Available && ls.in.cfg.Watch && s.marker == "" && !s.empty {
		if id, err := writeMarker(dir); err == nil {
			s.marker = id
		} else {
			ls.in.log.Debug("cannot write the library's marker file", "library", dir, "err", err)
		}
	}
	if was != s.Available || gen != s.gen {
		select {
		case ls.changed <- struct{}{}:
		default:
		}
	}
	return s.LibraryState
}

// judge says why a library is unavailable after look l ("" when it is
// available), and records l as its identity when it is.
func (ls *libraries) judge(s *libState, l rootLook, err error) string {
	switch {
	case errors.Is(err, errNotAnswering):
		return fmt.Sprintf("its directory did not answer within %s (a hung mount?)", ls.in.cfg.LibraryTimeout)
	case errors.Is(err, fs.ErrNotExist):
		return "its directory is gone (moved, deleted or unmounted)"
	case err != nil:
		return "its directory cannot be read: " + err.Error()
	}
	same := l.dev == s.dev && l.ino == s.ino
	if !s.known {
		s.record(l)
		return ""
	}
	if !s.Available {
		back := false
		switch {
		case s.emptyKept > 0:
			back = !l.empty || !same || l.marker != ""
		case s.marker != "":
			back = l.marker == s.marker
		default:
			back = same
		}
		if !back {
			return s.Reason
		}
		s.record(l)
		return ""
	}
	switch {
	case s.empty:
		// Nothing of it could be lost: take the root as it is now (a
		// drive mounted on an empty directory), watched anew.
	case s.marker != "" && l.marker == "":
		return fmt.Sprintf("its marker file %s is gone (an unmounted drive?)", MarkerName)
	case s.marker != "" && l.marker != s.marker:
		return fmt.Sprintf("its marker file %s names another library (%s, was %s)", MarkerName, l.marker, s.marker)
	case s.marker == "" && l.dev != s.dev:
		return fmt.Sprintf("it is on another file system now (device %d, was %d: an unmounted drive?)", l.dev, s.dev)
	case s.marker == "" && l.ino != s.ino:
		return fmt.Sprintf("it is another directory now (inode %d, was %d)", l.ino, s.ino)
	}
	if !same {
		s.gen++
	}
	s.record(l)
	return ""
}

func (s *libState) record(l rootLook) {
	s.known, s.dev, s.ino, s.empty = true, l.dev, l.ino, l.empty
	if l.marker != "" {
		s.marker = l.marker
	}
}

// keptEmpty makes a library unavailable because a scan found it empty
// while the store knows n files in it.
func (ls *libraries) keptEmpty(dir string, n int) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	s := ls.libs[dir]
	if s == nil || !s.Available {
		return
	}
	s.Available, s.emptyKept, s.Since = false, n, time.Now()
	s.Reason = fmt.Sprintf("it is empty, and the store knows %d files in it (an unmounted drive?)", n)
	ls.in.log.Warn("library unavailable: " + dir + ": " + s.Reason)
	select {
	case ls.changed <- struct{}{}:
	default:
	}
}

// look looks at s's root through the file system, waiting at most
// Config.LibraryTimeout since the look under way began: a root that
// does not answer leaves one goroutine blocked, never more.
func (ls *libraries) look(s *libState) (rootLook, error) {
	ls.mu.Lock()
	c := s.look
	if c == nil {
		c = &lookCall{start: time.Now(), done: make(chan struct{})}
		s.look = c
		fsys := ls.in.fs
		go func() {
			l, err := fsys.Root(s.Dir)
			ls.mu.Lock()
			c.l, c.err = l, err
			if s.look == c {
				s.look = nil
			}
			ls.mu.Unlock()
			close(c.done)
		}()
	}
	ls.mu.Unlock()
	select {
	case <-c.done:
		return c.l, c.err
	default:
	}
	t := time.NewTimer(max(ls.in.cfg.LibraryTimeout-time.Since(c.start), 0))
	defer t.Stop()
	select {
	case <-c.done:
		return c.l, c.err
	case <-t.C:
		return rootLook{}, errNotAnswering
	}
}

// watchLibraries looks at every library every Config.LibraryCheck, and
// at once when poked (an event named a root), until the ingester stops.
func (in *Ingester) watchLibraries(done <-chan struct{}) {
	defer in.wg.Done()
	t := time.NewTicker(in.cfg.LibraryCheck)
	defer t.Stop()
	for {
		poked := false
		select {
		case <-done:
			return
		case <-t.C:
		case <-in.libs.poke:
			poked = true
		}
		for _, d := range in.cfg.Libraries {
			in.libs.check(d)
		}
		if poked {
			// The loop stopped watching a root an event named: it
			// watches it again when the look found it still there.
			select {
			case in.libs.changed <- struct{}{}:
			default:
			}
		}
	}
}

// lookRoot is libraryFS's look at a library's root.
func lookRoot(dir string) (rootLook, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return rootLook{}, err
	}
	if !fi.IsDir() {
		return rootLook{}, fmt.Errorf("%s is not a directory: %w", dir, fs.ErrNotExist)
	}
	var l rootLook
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		l.dev, l.ino = uint64(sys.Dev), sys.Ino
	}
	f, err := os.Open(dir)
	if err != nil {
		return rootLook{}, err
	}
	defer f.Close()
	names, err := f.Readdirnames(2)
	if err != nil && err != io.EOF {
		return rootLook{}, err
	}
	l.empty = true
	for _, n := range names {
		if n != MarkerName {
			l.empty = false
		}
	}
	l.marker = readMarker(dir)
	return l, nil
}

// readMarker is the library ID the marker in dir names, "" when there
// is no marker (or not one of the node's: a link, a FIFO, other text).
func readMarker(dir string) string {
	p := filepath.Join(dir, MarkerName)
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(io.LimitReader(f, 256)).ReadString('\n')
	id, ok := strings.CutPrefix(strings.TrimSpace(line), markerTag)
	if !ok {
		return ""
	}
	return strings.TrimSpace(id)
}

// writeMarker writes a new marker in dir, unless one is there already
// (written by another node sharing the library), and returns the ID it
// names. The marker appears whole or not at all (a link of a file
// written first), and an existing one is never replaced.
func writeMarker(dir string) (string, error) {
	if id := readMarker(dir); id != "" {
		return id, nil
	}
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	id := hex.EncodeToString(b)
	tmp, err := os.CreateTemp(dir, MarkerName+".tmp-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	_, err = fmt.Fprintf(tmp, "%s%s\n%s", markerTag, id, markerText)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	if err := os.Link(tmp.Name(), filepath.Join(dir, MarkerName)); err != nil {
		if id := readMarker(dir); id != "" {
			return id, nil
		}
		return "", err
	}
	return id, nil
}

const markerText = `This directory is a MetaMesh library. The MetaMesh node keeps this file
here to tell the library from an empty directory left behind when its
drive is unmounted or the folder is moved: while this file is missing,
the node deletes nothing of the library and waits for it to come back.
Leave it in place; deleting it makes the library unavailable until the
node restarts.
`
