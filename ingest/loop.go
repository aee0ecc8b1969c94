package ingest

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// pend is a path waiting to settle.
type pend struct {
	lastEvent  time.Time
	observed   bool // stat below was taken at least once
	exists     bool
	size       int64
	mtime      int64
	scan       bool
	scanSize   int64
	goneSince  time.Time // first look that found the path missing
	vanished   bool      // a remove or rename named it: maybe the old end of a move
	readySince time.Time // first flush that found it settled while a vanished path had not
	// heldKey is the size and mtime the path had when a job that held it
	// started, set when the job let go of it: a vanished path's other end
	// (a move) has that size and mtime, and waits until this one settles.
	heldKey *sizeKey
}

// loopState is owned by the loop goroutine alone.
type loopState struct {
	pending  map[string]*pend
	inflight map[string]bool
	// held is the size and mtime a file job's path had when the job
	// started: should the path vanish while the job holds it, a new path
	// with the same size and mtime may be its other end (a move).
	held map[string]sizeKey
	// relinkAfter are paths in flight that get a jobRelink once free.
	relinkAfter map[string]bool
	watched     map[string]bool // directories with a watch
	// down are the libraries the loop treats as unavailable: not
	// watched, their events ignored (available.go); gen is the
	// generation of each library's state the loop last watched.
	down     map[string]bool
	gen      map[string]int
	scanning bool
	rescanQ  bool // another rescan was asked for while one ran
	scanOpen int  // scan jobs not finished yet
	goneOpen int  // removed directories whose stored paths are being listed
	idleWait []chan error
}

func newLoopState() *loopState {
	return &loopState{pending: map[string]*pend{}, inflight: map[string]bool{}, held: map[string]sizeKey{}, relinkAfter: map[string]bool{}, watched: map[string]bool{},
		down: map[string]bool{}, gen: map[string]int{}}
}

// loop owns ls from here on; Start only filled its watch list before.
func (in *Ingester) loop(ctx context.Context, ls *loopState, watching bool) {
	defer in.wg.Done()
	tick := time.NewTicker(max(in.cfg.Settle/4, 10*time.Millisecond))
	defer tick.Stop()
	var pollC <-chan time.Time
	if !watching {
		if in.cfg.Watch { // watching was asked for but is incomplete
			poll := time.NewTicker(in.cfg.RescanInterval)
			defer poll.Stop()
			pollC = poll.C
		}
	}
	var events <-chan fsnotify.Event
	var errs <-chan error
	if in.watcher != nil {
		events, errs = in.watcher.Events, in.watcher.Errors
	}
	scanEnd := make(chan struct{}, 1)
	idleState := StateIdle
	switch {
	case watching:
		idleState = StateWatching
	case in.cfg.Watch:
		idleState = StatePolling
	}
	for {
		select {
		case <-ctx.Done():
			for _, ch := range ls.idleWait {
				ch <- ctx.Err()
			}
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				break
			}
			in.onEvent(ls, ev)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				break
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				in.log.Warn("filesystem event queue overflowed; rescanning the library")
				in.requestRescan()
			} else {
				in.log.Error("watcher error", "err", err)
			}
		case <-in.rescan:
			if ls.scanning {
				ls.rescanQ = true
				break
			}
			ls.scanning = true
			in.wg.Add(1)
			go func() {
				defer in.wg.Done()
				in.scan(ctx)
				scanEnd <- struct{}{}
			}()
		case <-pollC:
			in.requestRescan()
		case <-in.libs.changed:
			in.onLibraries(ls)
		case <-scanEnd:
			// The scan's last marks may still sit in the channel's buffer:
			// take them first, or the loop could report idle without them.
			for drained := false; !drained; {
				select {
				case ms := <-in.marks:
					in.onMarks(ls, ms)
				default:
					drained = true
				}
			}
			ls.scanning = false
			if ls.rescanQ {
				ls.rescanQ = false
				in.requestRescan()
			}
		case ms := <-in.marks:
			in.onMarks(ls, ms)
		case r := <-in.finished:
			in.finish(ls, r, time.Now())
		case <-tick.C:
			in.flush(ls, time.Now())
		case ch := <-in.idleReq:
			ls.idleWait = append(ls.idleWait, ch)
		}
		if !ls.scanning && ls.scanOpen == 0 {
			finished := false
			in.prog.update(func(p *Progress) {
				if p.State == StateScanning || p.State == StateHashing {
					p.State, p.FinishedAt = idleState, time.Now()
					finished = true
				}
			})
			if finished {
				p := in.Progress()
				in.log.Info("scan finished", "files", p.FilesDone, "bytes", p.BytesDone, "hashed", p.Hashed,
					"errors", p.Errors, "took", p.FinishedAt.Sub(p.StartedAt).Round(time.Millisecond), "state", p.State)
			}
		}
		if ls.scanning || len(ls.pending) > 0 || len(ls.inflight) > 0 || len(in.rescan) > 0 {
			continue
		}
		// Idle: the changes the workers applied are told (before WaitIdle
		// returns, so a caller reads them).
		in.logChanges()
		if len(ls.idleWait) > 0 {
			for _, ch := range ls.idleWait {
				ch <- nil
			}
			ls.idleWait = nil
		}
	}
}

// onMarks takes paths from a scan or a worker: settled scan paths go to
// the workers in batches, other settled paths one by one, the rest wait
// to settle. The ends of moves a scan found (pair) go to one settle job
// together, unless a path is in flight or waiting already.
func (in *Ingester) onMarks(ls *loopState, ms []mark) {
	now := time.Now()
	var batch []job
	var moves *settleBatch
	for _, m := range ms {
		if m.scan {
			ls.scanOpen++
		}
		switch {
		case m.pair && m.settled && !ls.inflight[m.path] && ls.pending[m.path] == nil:
			if moves == nil {
				moves = &settleBatch{pends: map[string]*pend{}, settling: map[sizeKey]bool{}, now: now}
			}
			if m.scan {
				moves.arrived = append(moves.arrived, m.path)
			} else {
				moves.gone = append(moves.gone, m.path)
			}
			moves.pends[m.path] = &pend{lastEvent: now, scan: m.scan, scanSize: m.size, goneSince: now}
		case m.settled && m.scan && !ls.inflight[m.path]:
			ls.inflight[m.path] = true // a batch may not hold a path twice
			batch = append(batch, job{kind: jobFile, path: m.path, fromScan: true, size: m.size, stat: m.stat})
			if len(batch) == batchSize {
				in.dispatch(ls, job{kind: jobBatch, items: batch})
				batch = nil
			}
		case m.settled && !ls.inflight[m.path]:
			in.dispatch(ls, job{kind: jobFile, path: m.path, fromScan: m.scan, size: m.size})
		default:
			in.touch(ls, m.path, now, m.scan, m.size)
		}
	}
	if len(batch) > 0 {
		in.dispatch(ls, job{kind: jobBatch, items: batch})
	}
	if moves != nil {
		in.dispatch(ls, job{kind: jobSettle, batch: moves})
	}
}

func (in *Ingester) touch(ls *loopState, p string, now time.Time, scan bool, size int64) {
	if pd, ok := ls.pending[p]; ok {
		pd.lastEvent = now
		if scan && !pd.scan {
			pd.scan, pd.scanSize = true, size
		} else if scan {
			ls.scanOpen-- // already counted once for this path
		}
		return
	}
	ls.pending[p] = &pend{lastEvent: now, scan: scan, scanSize: size}
}

func (in *Ingester) dispatch(ls *loopState, j job) {
	for _, p := range j.paths() {
		ls.inflight[p] = true
	}
	switch j.kind {
	case jobFile:
		if exists, size, mtime := statPath(j.path); exists {
			ls.held[j.path] = sizeKey{size, mtime}
		}
	case jobBatch:
		for _, it := range j.items {
			if it.stat.Path != "" {
				ls.held[it.path] = sizeKey{it.stat.Size, it.stat.MtimeNs}
			}
		}
	}
	if j.kind == jobGone {
		ls.goneOpen++
	}
	in.queue.push(j)
}

// finish takes a worker's result back: the job's paths are free again,
// and whatever the job found to do next is queued or left to settle.
func (in *Ingester) finish(ls *loopState, r result, now time.Time) {
	for _, p := range r.job.paths() {
		delete(ls.inflight, p)
		if k, ok := ls.held[p]; ok {
			if pd := ls.pending[p]; pd != nil {
				pd.heldKey = &k
			}
			delete(ls.held, p)
		}
	}
	if r.job.kind == jobGone {
		ls.goneOpen--
	}
	if r.job.fromScan {
		ls.scanOpen--
	}
	ls.scanOpen -= len(r.job.items)
	if r.retry {
		in.touch(ls, r.job.path, now, false, 0)
	}
	for _, p := range r.touch {
		in.touch(ls, p, now, false, 0)
		if r.job.kind == jobGone {
			ls.pending[p].vanished = true
		}
	}
	if b := r.job.batch; b != nil {
		for _, p := range r.hold {
			pd := b.pends[p]
			if cur, ok := ls.pending[p]; ok { // touched again meanwhile
				if pd.scan && !cur.scan {
					cur.scan, cur.scanSize = true, pd.scanSize
				} else if pd.scan {
					ls.scanOpen--
				}
				continue
			}
			pd.lastEvent = now
			ls.pending[p] = pd
		}
		for _, j := range r.next {
			if j.kind == jobRename {
				// A paired move is no scan job: its scan marks are done,
				// and its file counts as done for the scan (a move is
				// not hashed).
				for _, p := range j.paths() {
					if pd := b.pends[p]; pd != nil && pd.scan {
						ls.scanOpen--
						in.prog.update(func(pr *Progress) {
							pr.FilesDone++
							pr.BytesDone += pd.scanSize
						})
					}
				}
			}
			in.dispatch(ls, j)
		}
	}
	if r.rescan {
		in.requestRescan()
	}
	// Relinks last, after every other job this result started: a video
	// held by a job is relinked once that job ends.
	relink := slices.Clone(r.relink)
	for _, p := range r.job.paths() {
		if ls.relinkAfter[p] && !ls.inflight[p] {
			delete(ls.relinkAfter, p)
			relink = append(relink, p)
		}
	}
	slices.Sort(relink)
	for _, p := range slices.Compact(relink) {
		if ls.inflight[p] {
			ls.relinkAfter[p] = true
			continue
		}
		in.dispatch(ls, job{kind: jobRelink, path: p})
	}
}

// flush hands settled paths to the workers. A path is settled when no
// event touched it for Settle and its size and mtime did not move between
// two looks at least Settle apart. Vanished paths that may be one end of
// a move go to a worker together with the arrived paths (and the sizes of
// paths still settling) for pairing: the loop itself never asks the store
// or reads a file.
func (in *Ingester) flush(ls *loopState, now time.Time) {
	var gone, arrived []string
	// vanishing: a path that may be the old end of a move has not settled
	// yet (or a removed directory's stored paths are still being listed).
	vanishing := ls.goneOpen > 0
	// busyGone: the size and mtime of paths gone from disk while a job
	// still held them (an arrival being hashed and stored when it moved
	// on), until they settle as gone. A new path of the same size and
	// mtime waits for that job, however long it runs, and then for the old
	// path to settle, so the two pair up as a move in one batch; nothing
	// else waits for it.
	busyGone := map[sizeKey]bool{}
	// goneHeld: the same of such paths that settled as gone now: a new
	// path of that size and mtime goes with them at once.
	goneHeld := map[sizeKey]bool{}
	heldGone := func(pd *pend) {
		if pd.heldKey != nil {
			busyGone[*pd.heldKey] = true
		}
	}
	for p, pd := range ls.pending {
		if ls.inflight[p] {
			if k, ok := ls.held[p]; ok {
				if exists, _, _ := statPath(p); !exists {
					busyGone[k] = true
				}
			}
			continue
		}
		if now.Sub(pd.lastEvent) < in.cfg.Settle {
			if pd.observed && !pd.exists || !pd.observed && pd.vanished {
				vanishing = true
				heldGone(pd)
			}
			continue
		}
		exists, size, mtime := statPath(p)
		if pd.observed && exists == pd.exists && size == pd.size && mtime == pd.mtime {
			if exists {
				arrived = append(arrived, p)
			} else {
				gone = append(gone, p)
				if pd.heldKey != nil {
					goneHeld[*pd.heldKey] = true
				}
			}
			continue
		}
		// First look, or it moved: look again after another Settle. A
		// vanished path waits as long as a new one, so both ends of a move
		// settle in the same batch and pair up.
		pd.observed, pd.exists, pd.size, pd.mtime = true, exists, size, mtime
		pd.lastEvent = now
		if !exists {
			vanishing = true
			heldGone(pd)
			if pd.goneSince.IsZero() {
				pd.goneSince = now
			}
		}
	}
	if (vanishing || len(busyGone) > 0 || len(goneHeld) > 0) && len(arrived) > 0 {
		// The new end of a move may settle a tick before its old end
		// (their events came apart): an arrived path waits for vanished
		// ones to settle too, at most four Settle periods, so the two
		// pair up instead of becoming an add and a delete.
		kept := arrived[:0]
		for _, p := range arrived {
			pd := ls.pending[p]
			if k := (sizeKey{pd.size, pd.mtime}); goneHeld[k] {
				kept = append(kept, p)
				continue
			} else if busyGone[k] {
				pd.readySince = time.Time{}
				continue
			}
			if !vanishing {
				kept = append(kept, p)
				continue
			}
			if pd.readySince.IsZero() {
				pd.readySince = now
			}
			if now.Sub(pd.readySince) >= 4*in.cfg.Settle {
				kept = append(kept, p)
			}
		}
		arrived = kept
	}
	single := func(p string) {
		pd := ls.pending[p]
		delete(ls.pending, p)
		in.dispatch(ls, job{kind: jobFile, path: p, fromScan: pd.scan, size: pd.scanSize})
	}
	settling := map[sizeKey]bool{}
	if len(gone) > 0 {
		ready := map[string]bool{}
		for _, p := range append(append([]string(nil), gone...), arrived...) {
			ready[p] = true
		}
		for p, pd := range ls.pending {
			if pd.observed && pd.exists && !ready[p] && !ls.inflight[p] {
				settling[sizeKey{pd.size, pd.mtime}] = true
			}
		}
	}
	if len(gone) == 0 || (len(arrived) == 0 && len(settling) == 0) {
		for _, p := range gone {
			single(p)
		}
		for _, p := range arrived {
			single(p)
		}
		return
	}
	b := &settleBatch{gone: gone, arrived: arrived, pends: map[string]*pend{}, settling: settling, now: now}
	for _, p := range append(append([]string(nil), gone...), arrived...) {
		b.pends[p] = ls.pending[p]
		delete(ls.pending, p)
	}
	in.dispatch(ls, job{kind: jobSettle, batch: b})
}

// statPath returns whether p is a file (or a link to one) and its size and
// mtime.
func statPath(p string) (exists bool, size, mtime int64) {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false, 0, 0
	}
	return true, fi.Size(), fi.ModTime().UnixNano()
}

// onEvent turns one fsnotify event into pending paths and watches.
func (in *Ingester) onEvent(ls *loopState, ev fsnotify.Event) {
	p := filepath.Clean(ev.Name)
	if Skipped(p) {
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
