package ingest

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/metamesh/node/store"
)

// scan walks every library and hands each file to the loop, then marks
// every stored path of a library that the walk did not find (it will be
// deleted). The worker decides per file: an unchanged path, size and
// mtime whose full pass is done is not hashed again.
func (in *Ingester) scan(ctx context.Context) {
	in.prog.update(func(p *Progress) {
		*p = Progress{State: StateScanning, StartedAt: time.Now()}
	})
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
			fi, ok := in.fileInfo(p, d)
			if !ok {
				return nil
			}
			seen[p] = true
			found[lib]++
			in.prog.update(func(pr *Progress) {
				pr.FilesTotal++
				pr.BytesTotal += fi.Size()
			})
			batch = append(batch, mark{path: p, settled: fi.ModTime().Before(settleBefore), scan: true, size: fi.Size()})
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
			case lib == "":
				outside++
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
	if outside > 0 {
		in.log.Info("stored paths outside the configured libraries are left alone", "count", outside)
	}
	for lib, n := range kept {
		in.log.Warn("library is empty but the store knows files in it; not deleting them (is the drive mounted?)",
			"library", lib, "storedFiles", n)
	}
}

// fileInfo returns the info of a regular file to ingest. A symlink counts
// only when it resolves to a regular file inside a library root: the node
// never follows a link out of its libraries.
func (in *Ingester) fileInfo(p string, d fs.DirEntry) (fs.FileInfo, bool) {
	if d != nil && d.Type()&fs.ModeSymlink == 0 && !d.Type().IsRegular() {
		return nil, false
	}
	lfi, err := os.Lstat(p)
	if err != nil {
		return nil, false
	}
	if lfi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(p)
		if err != nil || !in.inLibrary(target) {
			return nil, false
		}
		fi, err := os.Stat(target)
		if err != nil || !fi.Mode().IsRegular() {
			return nil, false
		}
		return fi, true
	}
	if !lfi.Mode().IsRegular() {
		return nil, false
	}
	return lfi, true
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
