package ingest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// The directory watches, as the loop keeps them: fsnotify events turned
// into pending paths, watches added on new directories and removed with
// gone ones, and libraries unwatched while unavailable and watched again
// when they come back.

// onEvent turns one fsnotify event into pending paths and watches.
func (in *Ingester) onEvent(ls *loopState, ev fsnotify.Event) {
	p := filepath.Clean(ev.Name)
	if Skipped(p) {
		in.marker(p)
		return
	}
	lib := in.libraryOf(p)
	if ls.down[lib] {
		return // an unavailable library's events name nothing that is there
	}
	if p == lib && (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) {
		// The library's root itself went (moved away, deleted): nothing
		// of it is deleted; it waits, unwatched, for a look at the root
		// to say whether it is there (available.go).
		in.libraryDown(ls, lib)
		select {
		case in.libs.poke <- struct{}{}:
		default:
		}
		return
	}
	now := time.Now()
	if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Chmod) {
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			// A new or moved-in directory, or one that may have become
			// readable: watch it and everything under it, then look at
			// every file it holds.
			in.errs.clear(p)
			in.watchTree(ls, p)
			_ = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
				if err != nil {
					in.errs.add(q)
					return nil
				}
				if q != p && Skipped(q) {
					if d.IsDir() {
						return filepath.SkipDir
					}
					// A marker the directory came with (or got before
					// its watch).
					in.marker(q)
					return nil
				}
				if !d.IsDir() {
					in.touch(ls, q, now, false, 0)
				}
				return nil
			})
			return
		}
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		// The path may have been a directory: everything the store knows
		// under it is looked at too, and its watches go (a moved directory
		// is watched again under its new name when it appears).
		if ls.watched[p] {
			in.unwatchTree(ls, p)
		}
		if !ls.inflight[p] {
			in.dispatch(ls, job{kind: jobGone, path: p})
		}
	}
	in.touch(ls, p, now, false, 0)
}

// marker tells Config.OnMarker of an event on one of Config.Markers in
// a library.
func (in *Ingester) marker(p string) {
	if in.cfg.OnMarker != nil && slices.Contains(in.cfg.Markers, filepath.Base(p)) && in.libraryOf(p) != "" {
		in.cfg.OnMarker(p)
	}
}

// watchAll adds a watch on every directory of every library. It returns
// false when the inotify watch limit stopped it: the node then falls back
// to periodic rescans and says which limit would be enough.
func (in *Ingester) watchAll(ls *loopState) bool {
	ok := true
	for _, lib := range in.cfg.Libraries {
		if ls.down[lib] {
			continue // watched once it is back
		}
		ok = in.watchTree(ls, lib) && ok
	}
	return ok
}

// watchTree adds a watch on root and on every directory under it that
// is neither skipped nor watched already. It returns false when the
// inotify watch limit stopped it, and then logs the limit that would be
// enough for the directories left unwatched.
func (in *Ingester) watchTree(ls *loopState, root string) bool {
	ok := true
	var limitHit bool
	dirs := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if p != root && Skipped(p) {
			return filepath.SkipDir
		}
		if limitHit {
			dirs++
			return nil
		}
		if ls.watched[p] {
			return nil
		}
		if err := in.fs.Watch(p); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				limitHit, ok = true, false
				dirs++
				return nil
			}
			in.log.Warn("cannot watch directory", "dir", p, "err", err)
			return nil
		}
		ls.watched[p] = true
		return nil
	})
	if limitHit {
		cur := readInt("/proc/sys/fs/inotify/max_user_watches")
		need := cur + int64(dirs)
		in.log.Error("inotify watch limit reached: some directories are not watched",
			"fs.inotify.max_user_watches", cur, "needed", need, "unwatchedDirs", dirs,
			"fix", "sudo sysctl fs.inotify.max_user_watches="+itoa(need)+" (persist it in /etc/sysctl.d/)",
			"fallback", "full rescan every "+in.cfg.RescanInterval.String())
	}
	return ok
}

// onLibraries follows the libraries' availability: a library that went
// is unwatched and its waiting paths dropped; one that came back (or
// whose empty root changed) is watched anew and everything rescanned.
func (in *Ingester) onLibraries(ls *loopState) {
	for _, lib := range in.cfg.Libraries {
		st, gen := in.libs.state(lib)
		switch {
		case !st.Available && !ls.down[lib]:
			in.libraryDown(ls, lib)
		case st.Available && (ls.down[lib] || gen != ls.gen[lib]):
			ls.down[lib], ls.gen[lib] = false, gen
			if in.watcher != nil {
				in.unwatchTree(ls, lib)
				in.watchTree(ls, lib)
			}
			in.requestRescan()
		}
	}
}

// libraryDown stops watching lib and drops its paths waiting to settle:
// whatever they were, the scan after its return looks at them again.
func (in *Ingester) libraryDown(ls *loopState, lib string) {
	ls.down[lib] = true
	in.unwatchTree(ls, lib)
	for p, pd := range ls.pending {
		if within(lib, p) {
			if pd.scan {
				ls.scanOpen--
			}
			delete(ls.pending, p)
		}
	}
}

// unwatchTree removes the watches of dir and of every directory under it.
func (in *Ingester) unwatchTree(ls *loopState, dir string) {
	for d := range ls.watched {
		if within(dir, d) {
			if in.watcher != nil {
				_ = in.watcher.Remove(d)
			}
			delete(ls.watched, d)
		}
	}
}
