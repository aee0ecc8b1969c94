package ingest

import (
	"context"
	"errors"
	"os"
	"slices"
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
	waits := moveWaits{vanishing: ls.goneOpen > 0, busyGone: map[sizeKey]bool{}, goneHeld: map[sizeKey]bool{}}
	gone, arrived := in.lookAtPending(ls, now, &waits)
	if (waits.vanishing || len(waits.busyGone) > 0 || len(waits.goneHeld) > 0) && len(arrived) > 0 {
		arrived = in.waitForGone(ls, now, &waits, arrived)
	}
	in.dispatchSettled(ls, now, gone, arrived)
}

// moveWaits is what one flush's look at the pending paths found that
// arrived paths may wait for: the old ends of moves.
type moveWaits struct {
	// vanishing: a path that may be the old end of a move has not settled
	// yet (or a removed directory's stored paths are still being listed).
	vanishing bool
	// busyGone: the size and mtime of paths gone from disk while a job
	// still held them (an arrival being hashed and stored when it moved
	// on), until they settle as gone. A new path of the same size and
	// mtime waits for that job, however long it runs, and then for the old
	// path to settle, so the two pair up as a move in one batch; nothing
	// else waits for it.
	busyGone map[sizeKey]bool
	// goneHeld: the same of such paths that settled as gone now: a new
	// path of that size and mtime goes with them at once.
	goneHeld map[sizeKey]bool
}

// heldGone notes that pd, a path not settled yet, is gone while a job
// held it, if one did: a new path of the size and mtime it had waits.
func (w *moveWaits) heldGone(pd *pend) {
	if pd.heldKey != nil {
		w.busyGone[*pd.heldKey] = true
	}
}

// lookAtPending looks at every pending path that no job holds and whose
// last event is Settle old: one that did not change since the last look
// settled, and is returned as gone or arrived; any other is looked at
// again after another Settle. Paths still settling, and paths in flight
// gone from disk, fill waits.
func (in *Ingester) lookAtPending(ls *loopState, now time.Time, waits *moveWaits) (gone, arrived []string) {
	for p, pd := range ls.pending {
		if ls.inflight[p] {
			if k, ok := ls.held[p]; ok {
				if exists, _, _ := statPath(p); !exists {
					waits.busyGone[k] = true
				}
			}
			continue
		}
		if now.Sub(pd.lastEvent) < in.cfg.Settle {
			if pd.observed && !pd.exists || !pd.observed && pd.vanished {
				waits.vanishing = true
				waits.heldGone(pd)
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
					waits.goneHeld[*pd.heldKey] = true
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
			waits.vanishing = true
			waits.heldGone(pd)
			if pd.goneSince.IsZero() {
				pd.goneSince = now
			}
		}
	}
	return gone, arrived
}

// waitForGone returns the arrived paths that go to the workers now. The
// new end of a move may settle a tick before its old end (their events
// came apart): an arrived path waits for vanished ones to settle too, at
// most four Settle periods, so the two pair up instead of becoming an
// add and a delete. A path with the size and mtime of one gone while a
// job held it waits for that one, however long, and goes at once when
// that one settled now.
func (in *Ingester) waitForGone(ls *loopState, now time.Time, waits *moveWaits, arrived []string) []string {
	kept := arrived[:0]
	for _, p := range arrived {
		pd := ls.pending[p]
		if k := (sizeKey{pd.size, pd.mtime}); waits.goneHeld[k] {
			kept = append(kept, p)
			continue
		} else if waits.busyGone[k] {
			pd.readySince = time.Time{}
			continue
		}
		if !waits.vanishing {
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
	return kept
}

// dispatchSettled hands the settled paths to the workers: one by one
// when nothing can pair (no gone path, or nothing arrived or settling),
// else all in one settle job, with the sizes and mtimes of the paths
// still settling, which a gone path may yet pair with.
func (in *Ingester) dispatchSettled(ls *loopState, now time.Time, gone, arrived []string) {
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
			in.dispatchPending(ls, p)
		}
		for _, p := range arrived {
			in.dispatchPending(ls, p)
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

// dispatchPending hands the settled pending path p to a worker alone.
func (in *Ingester) dispatchPending(ls *loopState, p string) {
	pd := ls.pending[p]
	delete(ls.pending, p)
	in.dispatch(ls, job{kind: jobFile, path: p, fromScan: pd.scan, size: pd.scanSize})
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
