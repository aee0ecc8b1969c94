package share

import (
	"context"
	"sync"
	"time"

	"github.com/ipfs/go-cid"
)

// openFiles keeps the library files being served open between blocks: a
// 1 GiB file is 4,096 leaves, and each would otherwise cost a store read
// and an open. A file idle for fileIdle is closed.
type openFiles struct {
	mu    sync.Mutex
	files map[string]*openFile
}

type openFile struct {
	*Local
	refs int
	used time.Time
	gone bool // dropped while in use: closed by the last release
}

// fileIdle is how long an unused file stays open.
const fileIdle = 20 * time.Second

func newOpenFiles() *openFiles { return &openFiles{files: map[string]*openFile{}} }

// acquire returns root's file, opening it with open when it is not open;
// release gives it back.
func (o *openFiles) acquire(ctx context.Context, root cid.Cid, open func(context.Context, cid.Cid) (*Local, error)) (*Local, func(), error) {
	k := string(root.Hash())
	o.mu.Lock()
	f, ok := o.files[k]
	if !ok {
		o.mu.Unlock()
		if open == nil {
			return nil, nil, ErrNotLocal
		}
		l, err := open(ctx, root)
		if err != nil {
			return nil, nil, err
		}
		o.mu.Lock()
		if f, ok = o.files[k]; ok {
			// Opened meanwhile by another want.
			_ = l.File.Close()
		} else {
			f = &openFile{Local: l}
			o.files[k] = f
		}
	}
	f.refs++
	f.used = time.Now()
	o.mu.Unlock()
	return f.Local, func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		f.refs--
		f.used = time.Now()
		if f.gone && f.refs == 0 {
			_ = f.File.Close()
		}
	}, nil
}

// drop forgets root's open file (it changed): closed now, or by its last
// user.
func (o *openFiles) drop(root cid.Cid) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := string(root.Hash())
	if f, ok := o.files[k]; ok {
		delete(o.files, k)
		f.gone = true
		if f.refs == 0 {
			_ = f.File.Close()
		}
	}
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
				_ = f.File.Close()
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
		f.gone = true
		if f.refs == 0 {
			_ = f.File.Close()
		}
	}
}
