package ingest

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/metamesh/node/store"
)

// scan walks every library and hands each file to the loop, then marks
// every stored path of a library that the walk did not find (it will be
// deleted), and, with Config.ReleaseOutside, every stored path under no
// configured library. The worker decides per file: an unchanged path, size and
// mtime whose full pass is done is not hashed again.
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
	seen := map[string]bool{}
	found := map[string]int{} // files seen per library
	var batch []mark
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
			seen[p] = true
			found[lib]++
			in.prog.update(func(pr *Progress) {
				pr.FilesTotal++
				pr.BytesTotal += fs.Size
			})
			batch = append(batch, mark{path: p, settled: fs.MtimeNs < settleBefore.UnixNano(), scan: true, size: fs.Size, stat: fs})
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
	// that came up completely empty: that is an unmounted drive far more
	// often than a deliberately emptied library, and deleting would throw
	// away every root of it.
	outside, after := 0, ""
	kept := map[string]int{}
	for {
		page, err := retryGet(ctx, in, "list stored paths", func() ([]string, error) { return in.st.PathsAfter(ctx, after, 1000) })
		if err != nil {
			return
		}
		if len(page) == 0 {
			break
		}
		after = page[len(page)-1]
		for _, p := range page {
			lib := in.libraryOf(p)
			switch {
			case seen[p]:
			case lib == "" && !in.cfg.ReleaseOutside:
				outside++
			case lib == "":
				outside++
				batch = append(batch, mark{path: p, settled: true})
			case found[lib] == 0:
				kept[lib]++
			default:
				batch = append(batch, mark{path: p, settled: true})
			}
		}
		if !send(true) {
			return
		}
	}
	switch {
	case outside > 0 && in.cfg.ReleaseOutside:
		in.log.Info("releasing stored paths under no configured library (a library was removed or changed)", "count", outside)
	case outside > 0:
		in.log.Info("stored paths outside the libraries of this scan are left alone", "count", outside)
	}
	for lib, n := range kept {
		in.log.Warn("library is empty but the store knows files in it; not deleting them (is the drive mounted?)",
			"library", lib, "storedFiles", n)
	}
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
