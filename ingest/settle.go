package ingest

import (
	"context"
	"errors"
	"os"

	"github.com/metamesh/node/store"
)

// settle pairs the vanished and arrived paths of one flush into moves, on
// a worker (it asks the store and may read a midhash per candidate). It
// returns the jobs that follow and the vanished paths to hold back: known
// paths whose partner (same size and mtime) is still settling, held for at
// most four Settle periods.
//
// A vanished known path and an arrived path are one move when the arrived
// path is the same file (device and inode, size and mtime), or, across
// file systems, an unknown path with the same size, mtime and midhash.
// When the arrived path is known too, the move replaced it ("mv new.tmp
// file"): the job renames onto it and its old root lets go.
//
// The other paths recorded with a replaced file's device and inode (hard
// links of the old file, symlinks that resolved to it) are returned in
// touch: they may now name other bytes.
func (in *Ingester) settle(ctx context.Context, b *settleBatch) (next []job, hold, touch []string, err error) {
	gone := map[string]store.PathState{}
	for _, g := range b.gone {
		st, err := retryGet(ctx, in, "read path", func() (store.PathState, error) { return in.st.Path(ctx, g) })
		switch {
		case err == nil:
			gone[g] = st
		case !errors.Is(err, store.ErrNotFound):
			return nil, nil, nil, err
		}
	}
	single := func(p string) job {
		pd := b.pends[p]
		return job{kind: jobFile, path: p, fromScan: pd.scan, size: pd.scanSize}
	}
	type cand struct {
		path string
		st   store.PathState
		used bool
	}
	bySize := map[sizeKey][]*cand{}
	var cands []*cand
	for _, g := range b.gone {
		st, known := gone[g]
		if !known {
			next = append(next, single(g))
			continue
		}
		if b.settling[sizeKey{st.Size, st.MtimeNs}] && b.now.Sub(b.pends[g].goneSince) < 4*in.cfg.Settle {
			hold = append(hold, g)
			continue
		}
		c := &cand{path: g, st: st}
		cands = append(cands, c)
		bySize[sizeKey{st.Size, st.MtimeNs}] = append(bySize[sizeKey{st.Size, st.MtimeNs}], c)
	}
	for _, a := range b.arrived {
		fi, err := os.Stat(a)
		if err != nil || len(bySize) == 0 {
			next = append(next, single(a))
			continue
		}
		cur := statOf(a, fi, false)
		list := bySize[sizeKey{cur.Size, cur.MtimeNs}]
		if len(list) == 0 {
			next = append(next, single(a))
			continue
		}
		target, err := retryGet(ctx, in, "read path", func() (store.PathState, error) { return in.st.Path(ctx, a) })
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, nil, nil, err
		}
		replace := err == nil
		var match *cand
		for _, c := range list {
			if !c.used && cur.Ino != 0 && c.st.Dev == cur.Dev && c.st.Ino == cur.Ino {
				match = c
				break
			}
		}
		if match == nil && !replace {
			// Another file system: the midhash decides.
			if mid, err := in.midhashOf(a, cur.Size); err == nil {
				for _, c := range list {
					if !c.used && c.st.Midhash == mid {
						match = c
						break
					}
				}
			}
		}
		if match == nil {
			next = append(next, single(a))
			continue
		}
		match.used = true
		next = append(next, job{kind: jobRename, oldPath: match.path, path: a})
		if replace && target.Ino != 0 {
			if others, err := in.st.PathsOfInode(ctx, target.Dev, target.Ino); err == nil {
				for _, o := range others {
					if o != a {
						touch = append(touch, o)
					}
				}
			}
		}
	}
	for _, c := range cands {
		if !c.used {
			next = append(next, single(c.path))
		}
	}
	return next, hold, touch, nil
}

// gone lists the stored paths under a directory that was removed or moved
// away, so each is looked at again.
func (in *Ingester) gone(ctx context.Context, dir string) ([]string, error) {
	return retryGet(ctx, in, "list paths under a removed directory", func() ([]string, error) { return in.st.PathsUnder(ctx, dir) })
}
