package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
)

// worker runs jobs until ctx ends.
func (in *Ingester) worker(ctx context.Context) {
	defer in.wg.Done()
	for {
		j, ok := in.queue.pop(ctx)
		if !ok {
			return
		}
		done := in.busy.start(j.describe())
		r := in.run(ctx, j)
		done()
		for _, it := range append([]job{j}, j.items...) {
			if it.fromScan {
				in.prog.update(func(p *Progress) {
					p.FilesDone++
					p.BytesDone += it.size
				})
			}
		}
		select {
		case in.finished <- r:
		case <-ctx.Done():
			return
		}
	}
}

// run does one job. Its result says what the loop should look at again:
// the path itself once it settles (it changed while being hashed), the
// jobs a settle batch paired, paths under a removed directory, the other
// hard links of a changed file, the videos to relink.
func (in *Ingester) run(ctx context.Context, j job) result {
	res := in.runJob(ctx, j)
	// A sidecar (an NFO, a subtitle, artwork) added, changed, moved or
	// removed: its videos' fields follow (relink.go), in jobs of their own.
	if j.kind != jobSettle && j.kind != jobGone && j.kind != jobRelink {
		for _, p := range append([]string{j.path, j.oldPath}, jobPaths(j.items)...) {
			if p != "" && isSidecar(p) && !slices.Contains(res.unchanged, p) {
				in.relinks.add(in.relinkTargets(ctx, p)...)
			}
		}
	}
	res.relink = in.relinks.take()
	return res
}

// describe names a job's paths for a log line.
func (j job) describe() string {
	ps := j.paths()
	switch len(ps) {
	case 0:
		return ""
	case 1:
		return ps[0]
	}
	return fmt.Sprintf("%s and %d more", ps[0], len(ps)-1)
}

// jobPaths are the paths of a batch's items.
func jobPaths(items []job) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.path)
	}
	return out
}

func (in *Ingester) runJob(ctx context.Context, j job) result {
	res := result{job: j}
	var err error
	switch j.kind {
	case jobSettle:
		res.next, res.hold, res.touch, err = in.settle(ctx, j.batch)
		if err != nil && ctx.Err() == nil {
			// The store gave a final answer other than "not found":
			// look at every path on its own instead.
			in.log.Warn("cannot pair moves; handling each path on its own", "err", err)
			res.touch = append(res.touch, j.paths()...)
		}
		return res
	case jobGone:
		res.touch, err = in.gone(ctx, j.path)
		if err != nil && ctx.Err() == nil {
			in.log.Warn("cannot list the stored paths under a removed directory; rescanning", "dir", j.path, "err", err)
			res.rescan = true
		}
		return res
	case jobBatch:
		res.touch, res.unchanged = in.batch(ctx, j.items)
		return res
	case jobRelink:
		in.relinkOne(ctx, j.path)
		return res
	case jobRename:
		err = in.rename(ctx, j.oldPath, j.path)
	default:
		var linked []string
		if !j.fromScan {
			linked = in.sameInode(ctx, j.path)
			// Symlinks to the gone file dangle now: they go first, so
			// none is promoted to primary on the way out.
			linked = slices.DeleteFunc(linked, func(q string) bool {
				if _, err := os.Stat(q); err == nil || !errors.Is(err, fs.ErrNotExist) {
					return false
				}
				if err := in.file(ctx, q, false); err != nil {
					in.settleErr(q, err, ctx)
					return false // looked at again once it settles
				}
				return true
			})
		}
		err = in.file(ctx, j.path, j.fromScan)
		if err == nil && !j.fromScan {
			res.touch = append(in.hardLinks(ctx, j.path), linked...)
		}
	}
	res.retry = in.settleErr(j.path, err, ctx)
	return res
}

// settleErr records how the work on path ended and reports whether the
// path should be looked at again once it settles (it changed while being
// hashed). A failed path counts in scan.errors until it succeeds.
func (in *Ingester) settleErr(path string, err error, ctx context.Context) (retry bool) {
	switch {
	case err == nil:
		in.errs.clear(path)
	case ctx.Err() != nil:
	case errors.Is(err, ErrChangedWhileHashing):
		in.log.Debug("file changed while hashing; will retry once it settles", "path", path)
		return true
	default:
		in.errs.add(path)
		in.log.Warn("skipped file", "path", path, "err", err)
	}
	return false
}
