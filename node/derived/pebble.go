package derived

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"
	pebbleds "github.com/ipfs/go-ds-pebble"
)

// ErrClosed: a call on a Pebble after Close.
var ErrClosed = errors.New("closed")

// Pebble is a pebble go-datastore under one directory of the data
// directory that holds only what can be built again. It is opened
// anew, empty, after moving the old one aside (MoveAside), when it does
// not open (an error, a panic, a table whose size is not the one pebble
// recorded) and when pebble reports corruption while it runs (a checksum
// that does not match on a read, or a call that panics): the call that
// found it gets an error, the calls after it the new, empty database.
// Each such rebuild is logged at WARN and told to OnRebuild.
type Pebble struct {
	dir, name string
	log       *slog.Logger

	mu sync.RWMutex // held to read by every call, to write by a rebuild and Close
	db *pebbleds.Datastore

	bg         sync.Mutex // orders starting a rebuild with Close
	closed     bool
	rebuilding bool
	gen        int // the database's generation: one more at each rebuild
	wg         sync.WaitGroup

	// onRebuild is told after a rebuild at run time.
	onRebuild func()
}

var _ datastore.Batching = (*Pebble)(nil)

// OpenPebble opens (or creates) the pebble database in dir, which holds
// the part name ("block index", "provider store": the log's words),
// moving it aside and starting an empty one when it does not open.
func OpenPebble(dir, name string, log *slog.Logger) (*Pebble, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Pebble{dir: dir, name: name, log: log}
	db, err := p.open()
	if err != nil {
		moved, merr := MoveAside(dir)
		if merr != nil {
			return nil, fmt.Errorf("%s: %w (and %w)", name, err, merr)
		}
		p.log.Warn(name+": does not open; moved aside, built anew", "err", err, "dir", dir, "movedTo", moved)
		if db, err = p.open(); err != nil {
			return nil, fmt.Errorf("%s: open %s: %w", name, dir, err)
		}
	}
	p.db = db
	return p, nil
}

// OnRebuild sets f to be told (on the rebuild's goroutine) each time the
// database was found corrupt while it ran and was replaced by an empty one.
func (p *Pebble) OnRebuild(f func()) {
	p.bg.Lock()
	p.onRebuild = f
	p.bg.Unlock()
}

// open opens the database in dir, pebble's panics recovered, and checks
// that every table is there at the size pebble recorded.
func (p *Pebble) open() (db *pebbleds.Datastore, err error) {
	defer Recover(&err)
	p.bg.Lock()
	gen := p.gen
	p.bg.Unlock()
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return nil, err
	}
	opts := &pebble.Options{
		Logger: pebbleLogger{p.log},
		// A corrupt block read ends the call that read it with an error
		// (pebble's default listener ends the process).
		EventListener: &pebble.EventListener{DataCorruption: func(info pebble.DataCorruptionInfo) {
			msg := strings.ReplaceAll(fmt.Sprintf("on-disk corruption in %s: %v", info.Path, info.Details), "\n", " ")
			p.rebuildLater(errors.New(msg), gen)
		}},
		// Table statistics only tune compactions; their loader ends the
		// process on a table of the wrong size (checkTables finds it).
		DisableTableStats: true,
	}
	db, err = pebbleds.NewDatastore(p.dir, pebbleds.WithPebbleOpts(opts))
	if err != nil {
		return nil, err
	}
	if err := checkTables(db.DB, p.dir); err != nil {
		closeQuietly(db)
		return nil, err
	}
	return db, nil
}

// gone says that the directory the database was opened in was removed,
// nil while it is there. A call finds it before pebble does, whose next
// new file there (a write's log, or Close's) ends the process.
func (p *Pebble) gone() error {
	if _, err := os.Stat(p.dir); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("its directory %s was removed while the node ran", p.dir)
	}
	return nil
}

// closeRemoved closes db, whose directory was removed: in a directory
// made again for it to write its last files in, removed after (pebble
// holds its directory's lock until it is closed, and the new database
// opens there).
func (p *Pebble) closeRemoved(db *pebbleds.Datastore) {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return // left open: the process ends before it is opened again
	}
	closeQuietly(db)
	_ = os.RemoveAll(p.dir)
}

// checkTables compares every local table's file with the size pebble
// recorded for it (a truncated or missing table).
func checkTables(db *pebble.DB, dir string) error {
	levels, err := db.SSTables()
	if err != nil {
		return err
	}
	for _, level := range levels {
		for _, t := range level {
			if t.Virtual || t.BackingType != pebble.BackingTypeLocal {
				continue
			}
			path := filepath.Join(dir, fmt.Sprintf("%06d.sst", uint64(t.BackingSSTNum)))
			fi, err := os.Stat(path)
			if err != nil {
				return fmt.Errorf("table %s: %w", path, err)
			}
			if uint64(fi.Size()) != t.Size {
				return fmt.Errorf("table %s: %d bytes, recorded %d", path, fi.Size(), t.Size)
			}
		}
	}
	return nil
}

// closeQuietly closes db, its panics and errors dropped (a database
// about to be moved aside).
func closeQuietly(db *pebbleds.Datastore) {
	var err error
	defer Recover(&err)
	_ = db.Close()
}

// Corrupt reports whether err, from a Pebble's call, says the database
// is damaged (it is being made anew: Settle waits for it).
func Corrupt(err error) bool {
	var pe *PanicError
	return err != nil && (pebble.IsCorruptionError(err) || errors.As(err, &pe))
}

// do runs f on the database, a panic recovered; an error that says the
// database is damaged starts a rebuild.
func (p *Pebble) do(f func(db *pebbleds.Datastore) error) (err error) {
	p.mu.RLock()
	if p.db == nil {
		p.mu.RUnlock()
		return fmt.Errorf("%s: %w", p.name, ErrClosed)
	}
	p.bg.Lock()
	gen := p.gen
	p.bg.Unlock()
	if gone := p.gone(); gone != nil {
		p.mu.RUnlock()
		p.rebuildLater(gone, gen)
		return fmt.Errorf("%s: %w", p.name, gone)
	}
	func() {
		defer Recover(&err)
		err = f(p.db)
	}()
	p.mu.RUnlock()
	if Corrupt(err) {
		err = oneLine{err}
		p.rebuildLater(err, gen)
	}
	return err
}

// oneLine is an error said on one line (pebble's corruption errors
// carry their details on the lines after).
type oneLine struct{ err error }

func (e oneLine) Error() string {
	first, _, _ := strings.Cut(e.err.Error(), "\n")
	return first
}

func (e oneLine) Unwrap() error { return e.err }

// Settle waits for a rebuild under way: a caller that got an error
// Corrupt says so may try again on the new database after it.
func (p *Pebble) Settle() { p.wg.Wait() }

// rebuildLater starts a rebuild of the database of generation gen,
// unless one is under way, it was rebuilt already or it is closed. It
// never blocks: pebble calls it on its read paths.
func (p *Pebble) rebuildLater(cause error, gen int) {
	p.bg.Lock()
	defer p.bg.Unlock()
	if p.closed || p.rebuilding || gen != p.gen {
		return
	}
	p.rebuilding = true
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.rebuild(cause)
	}()
}

// rebuild replaces the database with an empty one, the old one moved
// aside.
func (p *Pebble) rebuild(cause error) {
	p.mu.Lock()
	old := p.db
	p.db = nil
	p.bg.Lock()
	p.gen++ // what the old database reports now is of a generation gone
	p.bg.Unlock()
	removed := p.gone()
	switch {
	case old != nil && removed != nil:
		p.closeRemoved(old)
	case old != nil:
		closeQuietly(old)
	}
	moved, err := MoveAside(p.dir)
	if err == nil {
		p.db, err = p.open()
	}
	p.mu.Unlock()
	p.bg.Lock()
	p.rebuilding = false
	f := p.onRebuild
	p.bg.Unlock()
	if err != nil {
		p.log.Error(p.name+": on-disk corruption; it could not be built anew, and stays unavailable until the next start",
			"err", cause, "dir", p.dir, "movedTo", moved, "openErr", err)
		return
	}
	if removed != nil {
		p.log.Warn(p.name+": "+removed.Error()+"; built anew", "dir", p.dir)
	} else {
		p.log.Warn(p.name+": on-disk corruption; moved aside, built anew", "err", cause, "dir", p.dir, "movedTo", moved)
	}
	if f != nil {
		f()
	}
}

// Close closes the database. An error closing it (its directory removed
// while the node ran, say) is logged, not returned: the database is
// checked, and built anew if need be, at the next open.
func (p *Pebble) Close() error {
	p.bg.Lock()
	p.closed = true
	p.bg.Unlock()
	p.wg.Wait()
	p.mu.Lock()
	db := p.db
	p.db = nil
	p.mu.Unlock()
	if db == nil {
		return nil
	}
	if gone := p.gone(); gone != nil {
		p.closeRemoved(db)
		p.log.Warn(p.name+": "+gone.Error()+"; it is built anew at the next start", "dir", p.dir)
		return nil
	}
	var err error
	func() {
		defer Recover(&err)
		err = db.Close()
	}()
	if err != nil {
		p.log.Warn(p.name+": not closed cleanly; it is checked at the next start", "err", err, "dir", p.dir)
	}
	return nil
}

// Get implements datastore.Read.
func (p *Pebble) Get(ctx context.Context, k datastore.Key) (v []byte, err error) {
	err = p.do(func(db *pebbleds.Datastore) (err error) { v, err = db.Get(ctx, k); return err })
	return v, err
}

// Has implements datastore.Read.
func (p *Pebble) Has(ctx context.Context, k datastore.Key) (ok bool, err error) {
	err = p.do(func(db *pebbleds.Datastore) (err error) { ok, err = db.Has(ctx, k); return err })
	return ok, err
}

// GetSize implements datastore.Read.
func (p *Pebble) GetSize(ctx context.Context, k datastore.Key) (n int, err error) {
	err = p.do(func(db *pebbleds.Datastore) (err error) { n, err = db.GetSize(ctx, k); return err })
	return n, err
}

// Query implements datastore.Read. A rebuild while its results are read
// ends them with an error.
func (p *Pebble) Query(ctx context.Context, q query.Query) (r query.Results, err error) {
	err = p.do(func(db *pebbleds.Datastore) (err error) { r, err = db.Query(ctx, q); return err })
	return r, err
}

// Put implements datastore.Write.
func (p *Pebble) Put(ctx context.Context, k datastore.Key, v []byte) error {
	return p.do(func(db *pebbleds.Datastore) error { return db.Put(ctx, k, v) })
}

// Delete implements datastore.Write.
func (p *Pebble) Delete(ctx context.Context, k datastore.Key) error {
	return p.do(func(db *pebbleds.Datastore) error { return db.Delete(ctx, k) })
}

// Sync implements datastore.Datastore.
func (p *Pebble) Sync(ctx context.Context, prefix datastore.Key) error {
	return p.do(func(db *pebbleds.Datastore) error { return db.Sync(ctx, prefix) })
}

// Batch implements datastore.Batching: the writes are gathered and
// applied at Commit to the database of that moment.
func (p *Pebble) Batch(ctx context.Context) (datastore.Batch, error) {
	return &batch{p: p}, nil
}

type batchOp struct {
	key   datastore.Key
	value []byte
	del   bool
}

type batch struct {
	p   *Pebble
	ops []batchOp
}

func (b *batch) Put(ctx context.Context, k datastore.Key, v []byte) error {
	b.ops = append(b.ops, batchOp{key: k, value: append([]byte(nil), v...)})
	return nil
}

func (b *batch) Delete(ctx context.Context, k datastore.Key) error {
	b.ops = append(b.ops, batchOp{key: k, del: true})
	return nil
}

func (b *batch) Commit(ctx context.Context) error {
	ops := b.ops
	b.ops = nil
	return b.p.do(func(db *pebbleds.Datastore) error {
		pb, err := db.Batch(ctx)
		if err != nil {
			return err
		}
		for _, o := range ops {
			if o.del {
				err = pb.Delete(ctx, o.key)
			} else {
				err = pb.Put(ctx, o.key, o.value)
			}
			if err != nil {
				return err
			}
		}
		return pb.Commit(ctx)
	})
}

// pebbleLogger routes pebble's log into the node's: its chatter at
// DEBUG, its errors at WARN; its fatal errors panic (recovered by the
// Pebble's calls) where pebble's own logger would end the process.
type pebbleLogger struct{ log *slog.Logger }

func (l pebbleLogger) Infof(format string, args ...any) {
	l.log.Debug(fmt.Sprintf(format, args...))
}

func (l pebbleLogger) Errorf(format string, args ...any) {
	l.log.Warn(fmt.Sprintf(format, args...))
}

func (l pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.log.Error(msg)
	panic(errors.New(msg))
}
