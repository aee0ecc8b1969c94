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
	in.prog.update(func(p *Progress) {
		*p = Progress{State: StateScanning, StartedAt: time.Now()}
	})
	in.errs.reset()
	if err := in.retry(ctx, "append reset event", func() error {
		return in.st.AppendEvent(ctx, store.Event{Type: store.EventReset})
	}); err != nil {
		return
	}
	stored, outside, ok := in.storedPaths(ctx)
	if !ok {
		return
	}
	// A store that knew no file of the libraries is a first ingest:
	// every file is new, and none can have moved.
	pairing := len(stored) > 0
	in.firstIngest.Store(!pairing)
	found := map[string]int{} // files seen per library
	walked := map[string]bool{}
	var batch, fresh []mark
	send := func(force bool) bool {
		if len(batch) == 0 || (!force && len(batch) < 256) {
			return true
		}
		select {
		case in.marks <- batch:
			batch = nil
			return true
		case <-ctx.Done():
			return false
		}
	}
	settleBefore := time.Now().Add(-in.cfg.Settle)
	for _, lib := range in.cfg.Libraries {
		if !in.libs.check(lib).Available {
			continue // its stored paths are kept (below)
		}
		walked[lib] = true
		err := filepath.WalkDir(lib, func(p string, d fs.DirEntry, err error) error {
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
			fs, ok := in.fileStat(p, d)
			if !ok {
				return nil
			}
			_, known := stored[p]
			delete(stored, p) // what is left once the walk is over is gone
			found[lib]++
			in.prog.update(func(pr *Progress) {
				pr.FilesTotal++
				pr.BytesTotal += fs.Size
			})
			m := mark{path: p, settled: fs.MtimeNs < settleBefore.UnixNano(), scan: true, size: fs.Size, stat: fs}
			if pairing && !known && m.settled {
				fresh = append(fresh, m)
				return nil
			}
			batch = append(batch, m)
			if !send(false) {
				return ctx.Err()
			}
			return nil
		})
		if err != nil {
			return
		}
	}
	if !send(true) {
		return
	}
	in.prog.update(func(p *Progress) { p.State = StateHashing })

	// Stored paths the walk did not find are gone, except under a library
	// that was unavailable when the walk came to it or is now (looked at
	// again: it may have gone during the walk), or that came up
	// completely empty with no marker to vouch for it: that is an unmounted drive far more often than a
	// deliberately emptied library, and deleting would throw away every
	// root of it (available.go).
	var gone []string
	kept := map[string]int{}
	up := map[string]bool{}
	for _, lib := range in.cfg.Libraries {
		up[lib] = walked[lib] && in.libs.check(lib).Available
	}
	for p := range stored {
		lib := in.libraryOf(p)
		if !up[lib] {
			continue
		}
		if found[lib] == 0 && !in.libs.vouched(lib) {
			kept[lib]++
			continue
		}
		gone = append(gone, p)
	}
	gone = append(gone, outside.released...)
	slices.Sort(gone)
	moves, added, deleted, ok := in.movesOf(ctx, fresh, gone)
	if !ok {
		return
	}
	batch = added
	if !send(true) {
		return
	}
	if len(moves) > 0 {
		select { // in one message: the loop pairs them in one settle job
		case in.marks <- moves:
		case <-ctx.Done():
			return
		}
	}
	for _, p := range deleted {
		batch = append(batch, mark{path: p, settled: true})
		if !send(false) {
			return
		}
	}
	if !send(true) {
		return
	}
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
