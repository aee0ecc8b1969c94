package ingest

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/metamesh/node/store"
)

// scan walks every available library and hands each file to the loop,
// then marks every stored path of an available library that the walk
// did not find (it will be deleted), and, with Config.ReleaseOutside,
// every stored path under no configured library. The worker decides per
// file: an unchanged path, size and mtime whose full pass is done is not
// hashed again.
//
// The stored paths are listed before the walk, so that a walked path is
// known to be new or not: on a store that knew files of the libraries,
// the new ones wait for the walk's end, when the paths that are gone are
// known too. A new path with the size and mtime of a gone one may be that
// file, moved while the node was stopped: the loop hands such pairs to
// one settle job (settle.go), which pairs them by device and inode, or
// midhash, as it pairs moves seen while watching. A moved file is then
// renamed in the store, neither hashed again nor deleted and added.
func (in *Ingester) scan(ctx context.Context) {
	if !in.startScan(ctx) {
		return
	}
	stored, outside, ok := in.storedPaths(ctx)
	if !ok {
		return
	}
	w := &scanWalk{stored: stored, pairing: len(stored) > 0, settleBefore: time.Now().Add(-in.cfg.Settle),
		found: map[string]int{}, walked: map[string]bool{}, kept: map[string]int{}}
	// A store that knew no file of the libraries is a first ingest:
	// every file is new, and none can have moved.
	in.firstIngest.Store(!w.pairing)
	out := &markBatches{ctx: ctx, marks: in.marks}
	if !in.walkLibraries(ctx, w, out) || !out.flush() {
		return
	}
	in.prog.update(func(p *Progress) { p.State = StateHashing })

	gone := in.gonePaths(w)
	gone = append(gone, outside.released...)
	slices.Sort(gone)
	if !in.sendGone(ctx, out, gone) {
		return
	}
	in.logLeft(outside, w.kept)
}

// startScan resets the progress and the paths in error, and appends the
// reset event that tells the store's followers a full scan begins. It
// returns false when the event could not be written before ctx ended.
func (in *Ingester) startScan(ctx context.Context) bool {
	in.prog.update(func(p *Progress) {
		*p = Progress{State: StateScanning, StartedAt: time.Now()}
	})
	in.errs.reset()
	return in.retry(ctx, "append reset event", func() error {
		return in.st.AppendEvent(ctx, store.Event{Type: store.EventReset})
	}) == nil
}

// scanWalk is what a scan's walk of the libraries reads and finds.
type scanWalk struct {
	// stored are the stored paths of the libraries; the walk takes out
	// those it finds, so what is left once it is over is gone.
	stored map[string]struct{}
	// pairing holds new paths back (markBatches.held) until the gone
	// ones are known: the store knew files of the libraries, so some may
	// have moved.
	pairing bool
	// settleBefore is the mtime before which a walked file is settled.
	settleBefore time.Time
	found        map[string]int  // files seen per library
	walked       map[string]bool // libraries available when the walk came to them
	// kept counts, per library, the stored paths the walk did not find
	// that are not gone (gonePaths).
	kept map[string]int
}

// walkLibraries walks every available library, in the configured order,
// and marks each file it finds (scanFile). It returns false when ctx
// ended during the walk.
func (in *Ingester) walkLibraries(ctx context.Context, w *scanWalk, out *markBatches) bool {
	for _, lib := range in.cfg.Libraries {
		if !in.libs.check(lib).Available {
			continue // its stored paths are kept (gonePaths)
		}
		w.walked[lib] = true
		if err := in.walkLibrary(ctx, lib, w, out); err != nil {
			return false
		}
	}
	return true
}

// walkLibrary walks one library: an unreadable entry is logged and
// counted as an error, skipped names (skip.go) are not descended, and
// every other file goes to scanFile. Its error is ctx's, when ctx ended.
func (in *Ingester) walkLibrary(ctx context.Context, lib string, w *scanWalk, out *markBatches) error {
	return filepath.WalkDir(lib, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			in.log.Warn("cannot read", "path", p, "err", err)
			in.errs.add(p)
			return nil
		}
		if p != lib && Skipped(p) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !in.scanFile(lib, p, d, w, out) {
			return ctx.Err()
		}
		return nil
	})
}

// scanFile takes one walked file of lib: it is not gone, it counts in the
// progress's totals, and its mark goes to the loop, or is held back
// when it is new and settled on a store that may have seen it under
// another path. It returns false when ctx ended before the mark was sent.
func (in *Ingester) scanFile(lib, p string, d fs.DirEntry, w *scanWalk, out *markBatches) bool {
	stat, ok := in.fileStat(p, d)
	if !ok {
		return true
	}
	_, known := w.stored[p]
	delete(w.stored, p)
	w.found[lib]++
	in.prog.update(func(pr *Progress) {
		pr.FilesTotal++
		pr.BytesTotal += stat.Size
	})
	m := mark{path: p, settled: stat.MtimeNs < w.settleBefore.UnixNano(), scan: true, size: stat.Size, stat: stat}
	if w.pairing && !known && m.settled {
		out.held = append(out.held, m)
		return true
	}
	return out.add(m)
}

// gonePaths returns the stored paths the walk did not find, and counts
// in w.kept those it keeps although it did not find them.
//
// Stored paths the walk did not find are gone, except under a library
// that was unavailable when the walk came to it or is now (looked at
// again: it may have gone during the walk), or that came up completely
// empty with no marker to vouch for it: that is an unmounted drive far
// more often than a deliberately emptied library, and deleting would
// throw away every root of it (available.go).
func (in *Ingester) gonePaths(w *scanWalk) (gone []string) {
	up := map[string]bool{}
	for _, lib := range in.cfg.Libraries {
		up[lib] = w.walked[lib] && in.libs.check(lib).Available
	}
	for p := range w.stored {
		lib := in.libraryOf(p)
		if !up[lib] {
			continue
		}
		if w.found[lib] == 0 && !in.libs.vouched(lib) {
			w.kept[lib]++
			continue
		}
		gone = append(gone, p)
	}
	return gone
}

// sendGone hands the loop the new paths the walk held back (out.held)
// and the gone ones (sorted): the new paths that are no move are added,
// in one message; the ends of possible moves follow in one message, so
// the loop pairs them in one settle job; the other gone paths are
// deleted, in batches. It returns false when ctx ended first.
func (in *Ingester) sendGone(ctx context.Context, out *markBatches, gone []string) bool {
	moves, added, deleted, ok := in.movesOf(ctx, out.held, gone)
	if !ok {
		return false
	}
	if len(added) > 0 && !out.send(added) {
		return false
	}
	if len(moves) > 0 && !out.send(moves) {
		return false
	}
	for _, p := range deleted {
		if !out.add(mark{path: p, settled: true}) {
			return false
		}
	}
	return out.flush()
}

// logLeft tells what the scan did with the stored paths under no
// configured library, and, per library, with those it kept although the
// walk did not find them (available.go).
func (in *Ingester) logLeft(outside outsidePaths, kept map[string]int) {
	switch {
	case len(outside.released) > 0:
		in.log.Info("releasing stored paths under no configured library (a library was removed or changed)", "count", len(outside.released))
	case outside.left > 0:
		in.log.Info("stored paths outside the libraries of this scan are left alone", "count", outside.left)
	}
	for lib, n := range kept {
		in.libs.keptEmpty(lib, n)
	}
}

// scanBatch is how many of a scan's marks go to the loop in one message.
const scanBatch = 256

// markBatches hands a scan's marks to the loop in messages of scanBatch
// marks, not one send per file.
type markBatches struct {
	ctx   context.Context
	marks chan<- []mark
	batch []mark
	// held are the new paths the walk held back for pairing
	// (scanWalk.pairing), sent once the gone paths are known (sendGone).
	held []mark
}

// add queues m, and sends the batch once it is full. It returns false
// when ctx ended before the batch was taken.
func (b *markBatches) add(m mark) bool {
	b.batch = append(b.batch, m)
	if len(b.batch) < scanBatch {
		return true
	}
	return b.flush()
}

// flush sends the queued marks, if any. It returns false when ctx ended
// before they were taken.
func (b *markBatches) flush() bool {
	if len(b.batch) == 0 {
		return true
	}
	if !b.send(b.batch) {
		return false
	}
	b.batch = nil
	return true
}

// send hands ms to the loop in one message. It returns false when ctx
// ended before the loop took it.
func (b *markBatches) send(ms []mark) bool {
	select {
	case b.marks <- ms:
		return true
	case <-b.ctx.Done():
		return false
	}
}

// outsidePaths are the stored paths under no configured library a scan
// found: released (to be deleted, with Config.ReleaseOutside), or only
// counted, left alone.
type outsidePaths struct {
	released []string
	left     int
}

// storedPaths lists the stored paths, in pages: those of the configured
// libraries as a set, the others apart. ok is false when the store could
// not be read before ctx ended.
func (in *Ingester) storedPaths(ctx context.Context) (inLibraries map[string]struct{}, outside outsidePaths, ok bool) {
	inLibraries = map[string]struct{}{}
	after := ""
	for {
		page, err := retryGet(ctx, in, "list stored paths", func() ([]string, error) { return in.st.PathsAfter(ctx, after, 1000) })
		if err != nil {
			return nil, outsidePaths{}, false
		}
		if len(page) == 0 {
			return inLibraries, outside, true
		}
		after = page[len(page)-1]
		for _, p := range page {
			switch {
			case in.inLibrary(p):
				inLibraries[p] = struct{}{}
			case in.cfg.ReleaseOutside:
				outside.released = append(outside.released, p)
			default:
				outside.left++
			}
		}
	}
}

// movesOf splits the new paths a scan held back (fresh) and the stored
// paths it did not find (gone): a new path with the size and mtime of a
// gone one, and the gone ones such a path may be, go to the loop to pair
// (moves, marked pair); the other new paths are added, the other gone
// ones deleted. ok is false when the store could not be read before ctx
// ended.
func (in *Ingester) movesOf(ctx context.Context, fresh []mark, gone []string) (moves, added []mark, deleted []string, ok bool) {
	if len(fresh) == 0 || len(gone) == 0 {
		return nil, fresh, gone, true
	}
	bySize := map[sizeKey][]string{}
	for i := 0; i < len(gone); i += 1000 {
		chunk := gone[i:min(i+1000, len(gone))]
		states, err := retryGet(ctx, in, "read paths", func() (map[string]store.PathState, error) { return in.st.Paths(ctx, chunk) })
		if err != nil {
			return nil, nil, nil, false
		}
		for p, st := range states {
			k := sizeKey{st.Size, st.MtimeNs}
			bySize[k] = append(bySize[k], p)
		}
	}
	partner := map[string]bool{}
	for _, m := range fresh {
		ps := bySize[sizeKey{m.stat.Size, m.stat.MtimeNs}]
		if len(ps) == 0 {
			added = append(added, m)
			continue
		}
		m.pair = true
		moves = append(moves, m)
		for _, p := range ps {
			partner[p] = true
		}
	}
	for _, p := range gone {
		if partner[p] {
			moves = append(moves, mark{path: p, settled: true, pair: true})
			continue
		}
		deleted = append(deleted, p)
	}
	return moves, added, deleted, true
}

// fileStat returns what the store records of a file to ingest: a regular
// file with at least one byte (an empty file carries no content to
// address), or a symlink that resolves to one inside its own library
// (the node never follows a link out of a library: the library boundary,
// OpenInLibrary).
func (in *Ingester) fileStat(p string, d fs.DirEntry) (store.FileStat, bool) {
	if d != nil && d.Type()&fs.ModeSymlink == 0 && !d.Type().IsRegular() {
		return store.FileStat{}, false
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return store.FileStat{}, false
	}
	link := fi.Mode()&fs.ModeSymlink != 0
	if link {
		target, err := filepath.EvalSymlinks(p)
		if err != nil || !within(in.libraryOf(p), target) {
			return store.FileStat{}, false
		}
		if fi, err = os.Stat(target); err != nil {
			return store.FileStat{}, false
		}
	}
	if !fi.Mode().IsRegular() || fi.Size() == 0 {
		return store.FileStat{}, false
	}
	return statOf(p, fi, link), true
}

// statOf is the store's view of fi, found at path p.
func statOf(p string, fi fs.FileInfo, link bool) store.FileStat {
	f := store.FileStat{Path: p, Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano(), Link: link}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		f.Dev, f.Ino, f.Nlink = uint64(sys.Dev), sys.Ino, uint64(sys.Nlink)
	}
	return f
}

// nlink is the number of hard links of fi's file (1 when unknown).
func nlink(fi fs.FileInfo) uint64 {
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Nlink)
	}
	return 1
}

func (in *Ingester) inLibrary(p string) bool { return in.libraryOf(p) != "" }

// libraryOf returns the library root that holds p, or "".
func (in *Ingester) libraryOf(p string) string {
	for _, lib := range in.cfg.Libraries {
		if within(lib, p) {
			return lib
		}
	}
	return ""
}
