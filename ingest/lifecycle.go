package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/metamesh/node/store"
)

// The lifecycle of one path (arrive, change, rename, remove), each in at
// most two round trips to the store for a new or changed file:
//
//   - a new small file (at most smallFile bytes) that is not a video:
//     Path, then Ingest with its hashes and metadata, read and computed
//     from one read of the whole file (a scan's batch does the same for
//     many files: one Paths for a batch, one IngestBatch for a chunk);
//   - a new large file or a video: Arrive with its midhash, so it is
//     addressable while the full pass runs (and a video's sidecars find
//     it while its metadata is read), then Ingest;
//   - a changed file: Path (or Arrive's answer for a large file, which
//     carries a known path's state), then Change with the metadata
//     (store.Change writes it when the path ends up its root's primary);
//   - an unchanged file whose metadata is older than the extractors:
//     Path, then SetExtracted.
//
// Rarer turns take a few more: a duplicate of a root whose primary is not
// confirmed yet has the primary confirmed first (confirmPrimary), and new
// bytes behind an unchanged midhash sample have their metadata written
// after the change.

// file brings the store in line with what is at path now. fromScan says
// a full scan asked (its change lines then follow applied's rule for a
// first ingest).
func (in *Ingester) file(ctx context.Context, path string, fromScan bool) error {
	cur, ok := in.fileStat(path, nil)
	if !ok || Skipped(path) || (in.cfg.ReleaseOutside && !in.inLibrary(path)) {
		return in.remove(ctx, path, fromScan)
	}
	if cur.Size > smallFile || videoName(path) {
		// A video is made known by its midhash before its metadata is
		// read, as a large file is: a sidecar that lands meanwhile finds
		// it and relinks it once it is stored.
		return in.arrive(ctx, cur, fromScan)
	}
	st, err := retryGet(ctx, in, "read path", func() (store.PathState, error) { return in.st.Path(ctx, path) })
	if errors.Is(err, store.ErrNotFound) {
		return in.arriveSmall(ctx, cur, fromScan)
	}
	if err != nil {
		return err
	}
	return in.known(ctx, cur, st, fromScan)
}

// known handles a path the store knows, with its state at hand.
func (in *Ingester) known(ctx context.Context, cur store.FileStat, st store.PathState, fromScan bool) error {
	same := st.Size == cur.Size && st.MtimeNs == cur.MtimeNs
	forced := in.suspect.remove(cur.Path)
	if same && st.Hashed && !forced {
		// Unchanged since the last pass: no hashing, only make sure the
		// metadata was extracted by the current extractors (a restart may
		// have cut it short, or a newer parser reads names better).
		return in.extract(ctx, st, cur.Path, cur.Size)
	}
	h, err := in.hash(ctx, cur.Path, cur)
	if err != nil {
		return in.fail(ctx, cur.Path, err, fromScan)
	}
	if same && h.Midhash == st.Midhash && !st.Hashed {
		// Arrived but the full pass never finished (restart): resume.
		return in.ingest(ctx, cur, h.Store(), in.meta(ctx, cur.Path, cur.Size, nil), fromScan, changeAdded)
	}
	// Changed, or the bytes changed under an unchanged mtime.
	return in.change(ctx, cur, st, h, fromScan)
}

// change applies new bytes at a known path whose state was st. The
// metadata goes along when the path may need it: its midhash sample
// changed (new content: a root of its own or another's), or its last
// extraction is older than the extractors.
func (in *Ingester) change(ctx context.Context, cur store.FileStat, st store.PathState, h FileHashes, fromScan bool) error {
	var meta store.Meta
	withMeta := h.Midhash != st.Midhash || st.Extracted < extractVersion
	if withMeta {
		meta = in.meta(ctx, cur.Path, cur.Size, nil)
	}
	o, err := retryGet(ctx, in, "change", func() (store.Outcome, error) { return in.st.Change(ctx, cur, h.Store(), meta) })
	if err != nil {
		return err
	}
	in.note("changed", "path", cur.Path, "result", o.Kind, "cid", h.Canonical)
	if o.Kind == store.KindUnknown || o.Kind == store.KindStale {
		if !withMeta {
			meta = in.meta(ctx, cur.Path, cur.Size, nil)
		}
		return in.ingest(ctx, cur, h.Store(), meta, fromScan, changeChanged)
	}
	if o.Kind != store.KindSame {
		in.applied(fromScan, changeChanged, cur.Path, "")
	}
	if withMeta || o.Kind == store.KindSame {
		return nil
	}
	// New bytes behind the same midhash sample moved the path to another
	// root: its metadata follows.
	now, err := retryGet(ctx, in, "read path", func() (store.PathState, error) { return in.st.Path(ctx, cur.Path) })
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return in.extract(ctx, now, cur.Path, cur.Size)
}

// arrive takes in a large file: its midhash makes it addressable at once
// (Arrive), then the full pass confirms it with its metadata (Ingest). A
// path the store knows already is handled as known, from the state Arrive
// answered.
func (in *Ingester) arrive(ctx context.Context, cur store.FileStat, fromScan bool) error {
	path := cur.Path
	mid, err := in.midhashOf(path, cur.Size)
	if err != nil {
		return in.fail(ctx, path, err, fromScan)
	}
	o, err := retryGet(ctx, in, "arrive", func() (store.Outcome, error) { return in.st.Arrive(ctx, cur, mid) })
	if err != nil {
		return err
	}
	if o.Kind == store.KindExists {
		return in.known(ctx, cur, o.State, fromScan)
	}
	h, err := in.hash(ctx, path, cur)
	if err != nil {
		return in.fail(ctx, path, err, fromScan)
	}
	if h.Midhash != mid {
		return in.fail(ctx, path, ErrChangedWhileHashing, fromScan)
	}
	in.log.Debug("arrived", "path", path, "result", o.Kind, "midhash256", mid)
	return in.ingest(ctx, cur, h.Store(), in.meta(ctx, path, cur.Size, nil), fromScan, changeAdded)
}

// arriveSmall takes in a small file the store does not know in one round
// trip: read whole once, hashed and extracted from memory, then Ingest.
func (in *Ingester) arriveSmall(ctx context.Context, cur store.FileStat, fromScan bool) error {
	var buf []byte
	h, data, err := in.readSmall(ctx, cur, &buf)
	if err != nil {
		return in.fail(ctx, cur.Path, err, fromScan)
	}
	return in.ingest(ctx, cur, h, in.meta(ctx, cur.Path, cur.Size, data), fromScan, changeAdded)
}

// ingest applies the full pass together with the extracted metadata. A
// duplicate whose root's primary has not been confirmed yet has the
// primary hashed first, so duplicates are always judged against a known
// sha2-256. kind is what the change did to the path once it is applied
// (added, or changed).
func (in *Ingester) ingest(ctx context.Context, cur store.FileStat, h store.Hashes, meta store.Meta, fromScan bool, kind string) error {
	for attempt := 0; attempt < 3; attempt++ {
		o, err := retryGet(ctx, in, "confirm", func() (store.Outcome, error) {
			o, _, err := in.st.Ingest(ctx, cur, h, meta)
			return o, err
		})
		if err != nil {
			return err
		}
		switch o.Kind {
		case store.KindGone:
			return nil
		case store.KindStale:
			return ErrChangedWhileHashing
		case store.KindUnknown:
			if err := in.confirmPrimary(ctx, o.Root, fromScan); err != nil {
				return err
			}
			continue
		}
		in.note("ingested", "path", cur.Path, "result", o.Kind, "cid", h.Canonical())
		in.applied(fromScan, kind, cur.Path, "")
		return nil
	}
	return fmt.Errorf("confirm %s: the root's primary could not be confirmed", cur.Path)
}

// confirmPrimary runs the full pass of a root's primary path.
func (in *Ingester) confirmPrimary(ctx context.Context, root store.RootID, fromScan bool) error {
	doc, err := retryGet(ctx, in, "read document", func() (store.Document, error) { return in.st.Document(ctx, root) })
	if err != nil {
		return err
	}
	p := doc.FilePath()
	cur, ok := in.fileStat(p, nil)
	if !ok {
		return in.remove(ctx, p, fromScan) // gone: a duplicate is promoted
	}
	st, err := retryGet(ctx, in, "read path", func() (store.PathState, error) { return in.st.Path(ctx, p) })
	if err != nil {
		return err
	}
	if st.Size != cur.Size || st.MtimeNs != cur.MtimeNs {
		return in.file(ctx, p, fromScan) // the primary changed: handle it as such
	}
	h, err := in.hash(ctx, p, cur)
	if err != nil {
		return in.fail(ctx, p, err, fromScan)
	}
	meta := in.meta(ctx, p, cur.Size, nil)
	err = in.retry(ctx, "confirm", func() error {
		_, _, err := in.st.Ingest(ctx, cur, h.Store(), meta)
		return err
	})
	if err == nil && meta.Fields["videoType"] != "" {
		// p is not this job's path: a relink of it may have run
		// meanwhile, and its links are read again once p is free.
		in.relinks.add(p)
	}
	return err
}

// rename applies a paired move; onto a known path it is an atomic
// replace, and the path's old root lets go of it.
func (in *Ingester) rename(ctx context.Context, oldPath, newPath string) error {
	o, err := retryGet(ctx, in, "rename", func() (store.Outcome, error) { return in.st.Replace(ctx, oldPath, newPath) })
	if err == nil && o.Kind == store.KindRenamed {
		in.note("renamed", "path", newPath, "from", oldPath)
		in.applied(false, changeRenamed, newPath, oldPath)
		// The new name may carry different metadata (a release name).
		return in.file(ctx, newPath, false)
	}
	// The store moved on (source gone): handle both ends on their own.
	if err := in.file(ctx, oldPath, false); err != nil {
		return err
	}
	return in.file(ctx, newPath, false)
}

// remove deletes a path that is gone, unless its library is (a look at
// its root now says so): only files that vanish from an available
// library are deleted (available.go).
func (in *Ingester) remove(ctx context.Context, path string, fromScan bool) error {
	if lib := in.libraryOf(path); lib != "" && !in.libs.check(lib).Available {
		in.log.Debug("not deleting: its library is unavailable", "path", path)
		return nil
	}
	o, err := retryGet(ctx, in, "remove", func() (store.Outcome, error) { return in.st.RemovePath(ctx, path) })
	if err != nil {
		return err
	}
	if o.Kind != store.KindGone {
		in.note("removed", "path", path, "result", o.Kind)
		in.applied(fromScan, changeDeleted, path, "")
	}
	return nil
}

// hardLinks returns the other stored paths of the file at p when it has
// several hard links and their records no longer match it: a change seen
// through one name is a change of all.
func (in *Ingester) hardLinks(ctx context.Context, p string) []string {
	fi, err := os.Stat(p)
	if err != nil || nlink(fi) < 2 {
		return nil
	}
	f := statOf(p, fi, false)
	paths, err := retryGet(ctx, in, "list hard links", func() ([]string, error) { return in.st.PathsOfInode(ctx, f.Dev, f.Ino) })
	if err != nil || len(paths) < 2 {
		return nil
	}
	states, err := retryGet(ctx, in, "read paths", func() (map[string]store.PathState, error) { return in.st.Paths(ctx, paths) })
	if err != nil {
		return nil
	}
	var out []string
	for q, st := range states {
		if q != p && (st.Size != f.Size || st.MtimeNs != f.MtimeNs) {
			out = append(out, q)
		}
	}
	return out
}

// sameInode returns, when p is gone from disk, the other stored paths of
// the device and inode the store recorded for it: symlinks that resolved
// to it now dangle, other hard links are unchanged; either way they are
// looked at again. Nil while p exists (hardLinks covers a change).
func (in *Ingester) sameInode(ctx context.Context, p string) []string {
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	st, err := retryGet(ctx, in, "read path", func() (store.PathState, error) { return in.st.Path(ctx, p) })
	if err != nil || st.Ino == 0 {
		return nil
	}
	paths, err := retryGet(ctx, in, "list paths of an inode", func() ([]string, error) { return in.st.PathsOfInode(ctx, st.Dev, st.Ino) })
	if err != nil {
		return nil
	}
	return slices.DeleteFunc(paths, func(q string) bool { return q == p })
}
