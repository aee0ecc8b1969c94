package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/metamesh/node/store"
)

// worker runs jobs until ctx ends.
func (in *Ingester) worker(ctx context.Context) {
	defer in.wg.Done()
	for {
		j, ok := in.queue.pop(ctx)
		if !ok {
			return
		}
		retry := in.run(ctx, j)
		if j.fromScan {
			in.prog.update(func(p *Progress) {
				p.FilesDone++
				p.BytesDone += j.size
			})
		}
		select {
		case in.finished <- result{job: j, retry: retry}:
		case <-ctx.Done():
			return
		}
	}
}

// run does one job and reports whether the path should be looked at again
// once it settles (it changed while being hashed).
func (in *Ingester) run(ctx context.Context, j job) bool {
	if j.fromScan {
		ctx = context.WithValue(ctx, quietKey{}, true)
	}
	var err error
	switch j.kind {
	case jobRename:
		err = in.rename(ctx, j.oldPath, j.path)
	default:
		err = in.file(ctx, j.path)
	}
	switch {
	case err == nil, ctx.Err() != nil:
		return false
	case errors.Is(err, ErrChangedWhileHashing):
		in.log.Debug("file changed while hashing; will retry once it settles", "path", j.path)
		return true
	default:
		in.prog.update(func(p *Progress) { p.Errors++ })
		in.log.Warn("skipped file", "path", j.path, "err", err)
		return false
	}
}

func (in *Ingester) rename(ctx context.Context, oldPath, newPath string) error {
	o, err := retryGet(ctx, in, "rename", func() (store.Outcome, error) { return in.st.Rename(ctx, oldPath, newPath) })
	if err == nil && o.Kind == store.KindRenamed {
		in.note(ctx, "renamed", "from", oldPath, "to", newPath)
		return nil
	}
	// The store moved on (target known, source gone): handle both ends
	// on their own.
	if err := in.file(ctx, oldPath); err != nil {
		return err
	}
	return in.file(ctx, newPath)
}

// file brings the store in line with what is at path now.
func (in *Ingester) file(ctx context.Context, path string) error {
	fi, ok := in.fileInfo(path, nil)
	if !ok || Skipped(path) {
		return in.remove(ctx, path)
	}
	cur := store.FileStat{Path: path, Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano()}
	st, err := retryGet(ctx, in, "read path", func() (store.PathState, error) { return in.st.Path(ctx, path) })
	known := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	switch {
	case known && st.Size == cur.Size && st.MtimeNs == cur.MtimeNs && st.Hashed:
		// Unchanged since the last pass: no hashing, only make sure the
		// metadata was extracted (a restart may have cut it short).
		return in.extract(ctx, st, path, cur.Size)
	case known && st.Size == cur.Size && st.MtimeNs == cur.MtimeNs:
		// Arrived but the full pass never finished (restart): resume,
		// unless the bytes changed under an unchanged mtime.
		h, err := in.hash(ctx, path, cur)
		if err != nil {
			return in.fail(ctx, path, err)
		}
		if h.Midhash == st.Midhash {
			return in.confirm(ctx, cur, h, false)
		}
		return in.change(ctx, cur, h)
	case known:
		h, err := in.hash(ctx, path, cur)
		if err != nil {
			return in.fail(ctx, path, err)
		}
		return in.change(ctx, cur, h)
	}
	return in.arrive(ctx, cur)
}

// change applies new bytes at a known path.
func (in *Ingester) change(ctx context.Context, cur store.FileStat, h FileHashes) error {
	o, err := retryGet(ctx, in, "change", func() (store.Outcome, error) { return in.st.Change(ctx, cur, h.Store()) })
	if err != nil {
		return err
	}
	in.note(ctx, "changed", "path", cur.Path, "result", o.Kind, "cid", h.Canonical)
	if o.Kind == store.KindUnknown || o.Kind == store.KindStale {
		return in.confirm(ctx, cur, h, false)
	}
	return in.extractIfMissing(ctx, cur.Path, cur.Size)
}

// arrive ingests a path the store does not know: the midhash makes it
// addressable at once; the full pass follows.
func (in *Ingester) arrive(ctx context.Context, cur store.FileStat) error {
	path := cur.Path
	f, err := in.open(path)
	if err != nil {
		return err
	}
	mid, err := MidhashFile(f, cur.Size)
	f.Close()
	if err != nil {
		return in.fail(ctx, path, err)
	}
	o, err := retryGet(ctx, in, "arrive", func() (store.Outcome, error) { return in.st.Arrive(ctx, cur, mid) })
	if err != nil {
		return err
	}
	if o.Kind == store.KindExists {
		return in.file(ctx, path) // raced with another job: look again
	}
	in.beforeFullPass(path)
	h, err := in.hash(ctx, path, cur)
	if err != nil {
		return in.fail(ctx, path, err)
	}
	if h.Midhash != mid {
		return in.fail(ctx, path, ErrChangedWhileHashing)
	}
	in.log.Debug("arrived", "path", path, "result", o.Kind, "midhash256", mid)
	return in.confirm(ctx, cur, h, true)
}

// confirm applies the full pass. A duplicate whose root's primary has not
// been confirmed yet has the primary hashed first, so duplicates are
// always judged against a known sha2-256.
func (in *Ingester) confirm(ctx context.Context, cur store.FileStat, h FileHashes, fresh bool) error {
	for attempt := 0; attempt < 3; attempt++ {
		o, err := retryGet(ctx, in, "confirm", func() (store.Outcome, error) { return in.st.Confirm(ctx, cur, h.Store()) })
		if err != nil {
			return err
		}
		switch o.Kind {
		case store.KindGone:
			return nil
		case store.KindStale:
			return ErrChangedWhileHashing
		case store.KindUnknown:
			if err := in.confirmPrimary(ctx, o.Root); err != nil {
				return err
			}
			continue
		}
		if fresh {
			in.note(ctx, "ingested", "path", cur.Path, "result", o.Kind, "cid", h.Canonical)
		}
		return in.extractIfMissing(ctx, cur.Path, cur.Size)
	}
	return fmt.Errorf("confirm %s: the root's primary could not be confirmed", cur.Path)
}

// confirmPrimary runs the full pass of a root's primary path.
func (in *Ingester) confirmPrimary(ctx context.Context, root store.RootID) error {
	doc, err := retryGet(ctx, in, "read document", func() (store.Document, error) { return in.st.Document(ctx, root) })
	if err != nil {
		return err
	}
	p := doc.FilePath()
	fi, ok := in.fileInfo(p, nil)
	if !ok {
		return in.remove(ctx, p) // gone: a duplicate is promoted
	}
	cur := store.FileStat{Path: p, Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano()}
	st, err := in.st.Path(ctx, p)
	if err != nil {
		return err
	}
	if st.Size != cur.Size || st.MtimeNs != cur.MtimeNs {
		return in.file(ctx, p) // the primary changed: handle it as such
	}
	h, err := in.hash(ctx, p, cur)
	if err != nil {
		return in.fail(ctx, p, err)
	}
	_, err = in.st.Confirm(ctx, cur, h.Store())
	return err
}

// hash runs the full pass and makes sure the file did not change under
// it: same size and mtime before and after, and the path still names the
// same file. A mismatch is ErrChangedWhileHashing; nothing is stored.
func (in *Ingester) hash(ctx context.Context, path string, cur store.FileStat) (FileHashes, error) {
	before, err := os.Stat(path)
	if err != nil {
		return FileHashes{}, err
	}
	if before.Size() != cur.Size || before.ModTime().UnixNano() != cur.MtimeNs {
		return FileHashes{}, ErrChangedWhileHashing
	}
	h, err := HashFile(ctx, path)
	if err != nil {
		return FileHashes{}, err
	}
	in.prog.update(func(p *Progress) { p.Hashed++ })
	after, err := os.Stat(path)
	if err != nil {
		return FileHashes{}, err
	}
	if !os.SameFile(before, after) || after.Size() != cur.Size || after.ModTime().UnixNano() != cur.MtimeNs || h.Size != cur.Size {
		return FileHashes{}, ErrChangedWhileHashing
	}
	return h, nil
}

// fail handles a hash failure: a file that vanished leaves the store
// (no root or CID for bytes that are gone); one that changed is retried
// once it settles; an unreadable one is logged and retried when it changes.
func (in *Ingester) fail(ctx context.Context, path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return in.remove(ctx, path)
	}
	if errors.Is(err, ErrChangedWhileHashing) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ErrChangedWhileHashing
	}
	return err
}

func (in *Ingester) remove(ctx context.Context, path string) error {
	o, err := retryGet(ctx, in, "remove", func() (store.Outcome, error) { return in.st.RemovePath(ctx, path) })
	if err != nil {
		return err
	}
	if o.Kind != store.KindGone {
		in.note(ctx, "removed", "path", path, "result", o.Kind)
	}
	return nil
}

// extractIfMissing runs the extractors when path is its root's primary
// and the root has no extracted metadata yet.
func (in *Ingester) extractIfMissing(ctx context.Context, path string, size int64) error {
	st, err := retryGet(ctx, in, "read path", func() (store.PathState, error) { return in.st.Path(ctx, path) })
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return in.extract(ctx, st, path, size)
}

// extract is extractIfMissing for a path whose state is at hand.
func (in *Ingester) extract(ctx context.Context, st store.PathState, path string, size int64) error {
	if !st.Primary {
		return nil
	}
	has, err := retryGet(ctx, in, "read field", func() (bool, error) { return in.st.HasField(ctx, st.Root, "mimeType") })
	if err != nil || has {
		return err
	}
	subj := &Subject{Path: path, Size: size}
	fields := map[string]string{}
	for _, ex := range in.cfg.Extractors {
		out, err := ex.Extract(ctx, subj)
		if err != nil {
			in.log.Warn("extractor failed", "extractor", ex.Name(), "path", path, "err", err)
			continue
		}
		for k, v := range out {
			if store.ValidField(k) == nil {
				fields[k] = v
			}
		}
	}
	return in.retry(ctx, "write metadata", func() error {
		_, err := in.st.SetFields(ctx, st.Root, fields)
		if errors.Is(err, store.ErrNotFound) {
			return nil // the root went away meanwhile
		}
		return err
	})
}

// retry runs fn until it succeeds, fails for good, or ctx ends. While
// Redis is unreachable ingest pauses with exponential backoff and resumes
// where it stopped; nothing is lost.
func (in *Ingester) retry(ctx context.Context, what string, fn func() error) error {
	backoff := 100 * time.Millisecond
	failing := false
	for {
		err := fn()
		if !store.IsUnavailable(err) {
			if failing {
				in.log.Info("redis is back; ingest resumed", "op", what)
			}
			return err
		}
		if !failing {
			in.log.Warn("redis unavailable; ingest paused", "op", what, "err", err)
			failing = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// retryGet is retry for a call that returns a value.
func retryGet[T any](ctx context.Context, in *Ingester, what string, fn func() (T, error)) (T, error) {
	var v T
	err := in.retry(ctx, what, func() (err error) {
		v, err = fn()
		return err
	})
	return v, err
}

// pairMoves finds renames among settled paths: a vanished stored path and
// a new unknown path with the same size and mtime (a move keeps both) and
// the same midhash.
func (in *Ingester) pairMoves(ctx context.Context, gone map[string]store.PathState, arrived []string) []job {
	if len(gone) == 0 || len(arrived) == 0 {
		return nil
	}
	type key struct{ size, mtime int64 }
	type cand struct {
		path string
		mid  string
		used bool
	}
	cands := map[key][]*cand{}
	for g, st := range gone {
		k := key{st.Size, st.MtimeNs}
		cands[k] = append(cands[k], &cand{path: g, mid: st.Midhash})
	}
	var jobs []job
	for _, a := range arrived {
		exists, size, mtime := statPath(a)
		list := cands[key{size, mtime}]
		if !exists || len(list) == 0 {
			continue
		}
		if _, err := in.st.Path(ctx, a); err == nil {
			continue // a known path: a change, not a move target
		}
		f, err := os.Open(a)
		if err != nil {
			continue
		}
		mid, err := MidhashFile(f, size)
		f.Close()
		if err != nil {
			continue
		}
		for _, c := range list {
			if !c.used && c.mid == mid {
				c.used = true
				jobs = append(jobs, job{kind: jobRename, oldPath: c.path, path: a})
				break
			}
		}
	}
	return jobs
}

// quietKey marks work of a full scan: its per-file lines go to Debug (the
// scan logs its progress instead); changes seen while watching are Info.
type quietKey struct{}

func (in *Ingester) note(ctx context.Context, msg string, args ...any) {
	lvl := slog.LevelInfo
	if q, _ := ctx.Value(quietKey{}).(bool); q {
		lvl = slog.LevelDebug
	}
	in.log.Log(ctx, lvl, msg, args...)
}
