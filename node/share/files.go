package share

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/ipfs/go-cid"
)

// openFiles keeps the library files being served open between blocks: a
// 1 GiB file is 4,096 leaves, and each would otherwise cost a store read
// and an open. A file idle for fileIdle is closed; so is one whose path
// no longer names it (current: deleted, moved out or replaced), found
// before each block is read from it, or named by Gone (the library
// watcher saw its path change).
type openFiles struct {
	mu    sync.Mutex
	files map[string]*openFile
}

type openFile struct {
	*Local
	root cid.Cid
	// fi is the file as opened (its device and inode), when Local.Path
	// says where it is.
	fi   os.FileInfo
	refs int
	used time.Time
	gone bool // dropped while in use: closed by the last release
}

// fileIdle is how long an unused file stays open.
const fileIdle = 20 * time.Second

func newOpenFiles() *openFiles { return &openFiles{files: map[string]*openFile{}} }

// current reports whether f's path still names the file f has open: one
// stat, no store read. A file deleted, moved out of the library or
// replaced by another under its name is not current.
func (f *openFile) current() bool {
	if f.fi == nil {
		return true
	}
	fi, err := os.Stat(f.Path)
	return err == nil && os.SameFile(fi, f.fi)
}

// acquire returns root's file, opening it with open when it is not open
// or the one open is not current any more (then stale is true: the store
// says where the file is now, if anywhere); release gives it back.
func (o *openFiles) acquire(ctx context.Context, root cid.Cid, open func(context.Context, cid.Cid) (*Local, error)) (l *Local, release func(), stale bool, err error) {
	k := string(root.Hash())
	if f := o.take(k); f != nil {
		if f.current() {
			return f.Local, o.releaser(f), false, nil
		}
		o.releaser(f)()
		o.dropFile(k, f)
		stale = true
	}
	if open == nil {
		return nil, nil, stale, ErrNotLocal
	}
	nl, err := open(ctx, root)
	if err != nil {
		return nil, nil, stale, err
	}
	nf := &openFile{Local: nl, root: root}
	if nl.Path != "" {
		if nf.fi, err = nl.File.Stat(); err != nil {
			_ = nl.File.Close()
			return nil, nil, stale, err
		}
	}
	o.mu.Lock()
	f, ok := o.files[k]
	if ok {
		// Opened meanwhile by another want.
		_ = nl.File.Close()
	} else {
		f = nf
		o.files[k] = f
	}
	f.refs++
	f.used = time.Now()
	o.mu.Unlock()
	return f.Local, o.releaser(f), stale, nil
}

// take returns k's open file, in use, or nil.
func (o *openFiles) take(k string) *openFile {
	o.mu.Lock()
	defer o.mu.Unlock()
	f, ok := o.files[k]
	if !ok {
		return nil
	}
	f.refs++
	f.used = time.Now()
	return f
}

func (o *openFiles) releaser(f *openFile) func() {
	return func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		f.refs--
		f.used = time.Now()
		if f.gone && f.refs == 0 {
			_ = f.File.Close()
		}
	}
}

// dropFile forgets f, k's open file (unless another took its place):
// closed now, or by its last user.
func (o *openFiles) dropFile(k string, f *openFile) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.files[k] == f {
		delete(o.files, k)
	}
	o.closeLocked(f)
}

// closeLocked marks f gone and closes it unless in use; o.mu is held.
func (o *openFiles) closeLocked(f *openFile) {
	if f.gone {
		return
	}
	f.gone = true
	if f.refs == 0 {
		_ = f.File.Close()
	}
}

// drop forgets root's open file (it changed): closed now, or by its last
// user.
func (o *openFiles) drop(root cid.Cid) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := string(root.Hash())
	if f, ok := o.files[k]; ok {
		delete(o.files, k)
		o.closeLocked(f)
	}
}

// dropPath forgets the files open at path, and returns them.
func (o *openFiles) dropPath(path string) []*openFile {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*openFile
	for k, f := range o.files {
		if f.Path == path {
			delete(o.files, k)
			o.closeLocked(f)
			out = append(out, f)
		}
	}
	return out
}

// run closes idle files until ctx ends.
func (o *openFiles) run(ctx context.Context) {
	t := time.NewTicker(fileIdle / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		o.mu.Lock()
		for k, f := range o.files {
			if f.refs == 0 && time.Since(f.used) > fileIdle {
				delete(o.files, k)
				o.closeLocked(f)
			}
		}
		o.mu.Unlock()
	}
}

// closeAll closes every file not in use (after bitswap stopped, none is).
func (o *openFiles) closeAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k, f := range o.files {
		delete(o.files, k)
		o.closeLocked(f)
	}
}

// dropAll forgets every open file: closed now, or by its last user.
func (o *openFiles) dropAll() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(o.files)
	for k, f := range o.files {
		delete(o.files, k)
		o.closeLocked(f)
	}
	return n
}
