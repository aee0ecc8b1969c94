package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strconv"
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

// file brings the store in line with what is at path now. quiet puts its
// per-file log lines at Debug (a full scan logs progress instead).
func (in *Ingester) file(ctx context.Context, path string, quiet bool) error {
	cur, ok := in.fileStat(path, nil)
	if !ok || Skipped(path) || (in.cfg.ReleaseOutside && !in.inLibrary(path)) {
		return in.remove(ctx, path, quiet)
	}
	st, err := retryGet(ctx, in, "read path", func() (store.PathState, error) { return in.st.Path(ctx, path) })
	if errors.Is(err, store.ErrNotFound) {
		return in.arrive(ctx, cur, quiet)
	}
	if err != nil {
		return err
	}
	return in.known(ctx, cur, st, quiet)
}

// known handles a path the store knows, with its state at hand.
func (in *Ingester) known(ctx context.Context, cur store.FileStat, st store.PathState, quiet bool) error {
	same := st.Size == cur.Size && st.MtimeNs == cur.MtimeNs
	switch {
	case same && st.Hashed:
		// Unchanged since the last pass: no hashing, only make sure the
		// metadata was extracted by the current extractors (a restart may
		// have cut it short, or a newer parser reads names better).
		return in.extract(ctx, st, cur.Path, cur.Size)
	case same:
		// Arrived but the full pass never finished (restart): resume,
		// unless the bytes changed under an unchanged mtime.
		h, err := in.hash(ctx, cur.Path, cur)
		if err != nil {
			return in.fail(ctx, cur.Path, err, quiet)
		}
		if h.Midhash == st.Midhash {
			return in.ingest(ctx, cur, h, quiet, changeAdded)
		}
		return in.change(ctx, cur, h, quiet)
	}
	h, err := in.hash(ctx, cur.Path, cur)
	if err != nil {
		return in.fail(ctx, cur.Path, err, quiet)
	}
	return in.change(ctx, cur, h, quiet)
}

// change applies new bytes at a known path.
func (in *Ingester) change(ctx context.Context, cur store.FileStat, h FileHashes, quiet bool) error {
	o, err := retryGet(ctx, in, "change", func() (store.Outcome, error) { return in.st.Change(ctx, cur, h.Store()) })
	if err != nil {
		return err
	}
	in.note("changed", "path", cur.Path, "result", o.Kind, "cid", h.Canonical)
	if o.Kind == store.KindUnknown || o.Kind == store.KindStale {
		return in.ingest(ctx, cur, h, quiet, changeChanged)
	}
	if o.Kind != store.KindSame {
		in.applied(quiet, changeChanged, cur.Path, "")
	}
	st, err := retryGet(ctx, in, "read path", func() (store.PathState, error) { return in.st.Path(ctx, cur.Path) })
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return in.extract(ctx, st, cur.Path, cur.Size)
}

// arrive ingests a path the store does not know: the midhash makes it
// addressable at once; the full pass follows.
func (in *Ingester) arrive(ctx context.Context, cur store.FileStat, quiet bool) error {
	path := cur.Path
	f, err := in.open(path)
	if err != nil {
		return err
	}
	mid, err := MidhashFile(f, cur.Size)
	f.Close()
	if err != nil {
		return in.fail(ctx, path, err, quiet)
	}
	o, err := retryGet(ctx, in, "arrive", func() (store.Outcome, error) { return in.st.Arrive(ctx, cur, mid) })
	if err != nil {
		return err
	}
	if o.Kind == store.KindExists {
		return in.file(ctx, path, quiet) // raced with another job: look again
	}
	in.beforeFullPass(path)
	h, err := in.hash(ctx, path, cur)
	if err != nil {
		return in.fail(ctx, path, err, quiet)
	}
	if h.Midhash != mid {
		return in.fail(ctx, path, ErrChangedWhileHashing, quiet)
	}
	in.log.Debug("arrived", "path", path, "result", o.Kind, "midhash256", mid)
	return in.ingest(ctx, cur, h, quiet, changeAdded)
}

// ingest applies the full pass together with the extracted metadata. A
// duplicate whose root's primary has not been confirmed yet has the
// primary hashed first, so duplicates are always judged against a known
// sha2-256. kind is what the change did to the path once it is applied
// (added, or changed).
func (in *Ingester) ingest(ctx context.Context, cur store.FileStat, h FileHashes, quiet bool, kind string) error {
	meta := in.meta(ctx, cur.Path, cur.Size, nil)
	for attempt := 0; attempt < 3; attempt++ {
		o, err := retryGet(ctx, in, "confirm", func() (store.Outcome, error) {
			o, _, err := in.st.Ingest(ctx, cur, h.Store(), meta)
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
			if err := in.confirmPrimary(ctx, o.Root, quiet); err != nil {
				return err
			}
			continue
		}
		in.note("ingested", "path", cur.Path, "result", o.Kind, "cid", h.Canonical)
		in.applied(quiet, kind, cur.Path, "")
		return nil
	}
	return fmt.Errorf("confirm %s: the root's primary could not be confirmed", cur.Path)
}

// confirmPrimary runs the full pass of a root's primary path.
func (in *Ingester) confirmPrimary(ctx context.Context, root store.RootID, quiet bool) error {
	doc, err := retryGet(ctx, in, "read document", func() (store.Document, error) { return in.st.Document(ctx, root) })
	if err != nil {
		return err
	}
	p := doc.FilePath()
	cur, ok := in.fileStat(p, nil)
	if !ok {
		return in.remove(ctx, p, quiet) // gone: a duplicate is promoted
	}
	st, err := retryGet(ctx, in, "read path", func() (store.PathState, error) { return in.st.Path(ctx, p) })
	if err != nil {
		return err
	}
	if st.Size != cur.Size || st.MtimeNs != cur.MtimeNs {
		return in.file(ctx, p, quiet) // the primary changed: handle it as such
	}
	h, err := in.hash(ctx, p, cur)
	if err != nil {
		return in.fail(ctx, p, err, quiet)
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
	var read int64
	start := time.Now()
	f, err := in.open(path)
	if err != nil {
		return FileHashes{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return FileHashes{}, err
	}
	h, err := hashOpen(ctx, path, f, fi, func(n int64) {
		read += n
		in.prog.update(func(p *Progress) { p.BytesHashed += n; p.BytesInFlight += n })
	})
	in.prog.update(func(p *Progress) {
		p.BytesInFlight -= read
		if err == nil {
			p.Hashed++
		}
	})
	if err != nil {
		return FileHashes{}, err
	}
	if in.cfg.OnHashed != nil {
		in.cfg.OnHashed(time.Since(start).Seconds())
	}
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
func (in *Ingester) fail(ctx context.Context, path string, err error, quiet bool) error {
	if errors.Is(err, fs.ErrNotExist) {
		return in.remove(ctx, path, quiet)
	}
	if errors.Is(err, ErrChangedWhileHashing) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ErrChangedWhileHashing
	}
	return err
}

func (in *Ingester) remove(ctx context.Context, path string, quiet bool) error {
	o, err := retryGet(ctx, in, "remove", func() (store.Outcome, error) { return in.st.RemovePath(ctx, path) })
	if err != nil {
		return err
	}
	if o.Kind != store.KindGone {
		in.note("removed", "path", path, "result", o.Kind)
		in.applied(quiet, changeDeleted, path, "")
	}
	return nil
}

// extract writes the metadata of a primary path whose last extraction is
// older than the current extractors.
func (in *Ingester) extract(ctx context.Context, st store.PathState, path string, size int64) error {
	if !st.Primary || st.Extracted >= extractVersion {
		return nil
	}
	meta := in.meta(ctx, path, size, nil)
	return in.retry(ctx, "write metadata", func() error {
		_, _, err := in.st.SetExtracted(ctx, path, meta)
		return err
	})
}

// extractVersion is the version of what the extractors write; a primary
// path extracted with an older one is extracted again on the next scan
// (no re-hashing). Bump it whenever an extractor changes its output.
const extractVersion = NameParserVersion + 2 // +1: a video file's name decides when its bytes are not recognised; +1: NFO files

// extractedFields are the field names and prefixes the default
// extractors write: a re-extraction drops what they no longer find, and
// leaves every other field alone.
var extractedFields = []string{"mimeType", "fileType", "titles/eng", "originalTitle", "movieYear", "season", "episode",
	"episodeTitle", "videoType", "release", "episodes", "releasedate", "fileinfo",
	"plot/" + NFOLanguage, "genre", "rating", "mpaa", "imdbid", "tmdbid", "tvdbid", "show", "subtitles", "subtitleflags", "art"}

// sidecarFields are what the name and NFO extractors and the sidecar links
// write: what a change of a sidecar re-extracts (relink), leaving the
// content's fields alone.
var sidecarFields = slices.DeleteFunc(slices.Clone(extractedFields), func(f string) bool {
	return f == "mimeType" || f == "fileType" || f == "fileinfo"
})

// meta runs the extractors on a local file; head, when not nil, is the
// file's content already in memory.
func (in *Ingester) meta(ctx context.Context, path string, size int64, head []byte) store.Meta {
	subj := &Subject{Path: path, Library: in.libraryOf(path), Size: size, Head: head}
	fields := map[string]string{}
	in.runExtractors(ctx, subj, in.cfg.Extractors, fields)
	if fields["videoType"] != "" { // Filename writes it for every video
		in.addLinks(ctx, path, fields)
	}
	return store.Meta{Version: extractVersion, Owned: extractedFields, Fields: fields}
}

// addLinks adds a video's sidecar links (sidecars.go) to its fields.
func (in *Ingester) addLinks(ctx context.Context, path string, fields map[string]string) {
	season := -1
	if n, err := strconv.Atoi(fields["season"]); err == nil {
		season = n
	}
	for k, v := range in.sidecarLinks(ctx, path, season) {
		fields[k] = v
	}
}

// runExtractors runs exs on subj in order into fields, a later one's
// value winning. An extractor's error is logged; what it returned beside
// the error is still used (an NFO that cannot be read next to one that
// can).
func (in *Ingester) runExtractors(ctx context.Context, subj *Subject, exs []Extractor, fields map[string]string) {
	for _, ex := range exs {
		out, err := ex.Extract(ctx, subj)
		if err != nil {
			in.log.Warn("extractor failed", "extractor", ex.Name(), "path", subj.Path, "err", err)
		}
		for k, v := range out {
			if store.ValidField(k) == nil {
				fields[k] = v
			}
		}
	}
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

// note logs a per-file line at Debug, with what the store did
// (result); applied records the change for the lines at Info.
func (in *Ingester) note(msg string, args ...any) {
	in.log.Log(context.Background(), slog.LevelDebug, msg, args...)
}
