package share

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/go-cid"

	"github.com/metamesh/node/dag"
)

// entry finds block c in the index. A miss is indexed first when it can
// be a local file's: a child of an internal node served lately (the
// index lost the block: its file is indexed again), or the root of a
// local file not indexed yet (a file ingested before the index existed,
// a small file); either reads the file once.
func (x *Exchange) entry(ctx context.Context, c cid.Cid) (entry, error) {
	e, err := x.ix.get(ctx, c)
	if err == nil {
		return e, nil
	}
	if !isMissing(err) {
		return entry{}, err
	}
	if root, ok := x.links.parent(c); ok {
		err := x.index(ctx, root, c, "a peer wanted a block of it the block index had lost")
		if err == nil {
			if e, err = x.ix.get(ctx, c); err == nil {
				return e, nil
			}
		}
		x.refusals.note(root, "", c, fmt.Sprintf("the block index lost it, and indexing the file again failed: %v", err))
		return entry{}, notFound(c)
	}
	if !x.missed(c) {
		if err := x.index(ctx, c, c, "a peer's first want of it"); err == nil {
			if e, err = x.ix.get(ctx, c); err == nil {
				return e, nil
			}
		}
	}
	return entry{}, notFound(c)
}

// missed reports a CID recently found to name no local file.
func (x *Exchange) missed(c cid.Cid) bool {
	x.missMu.Lock()
	defer x.missMu.Unlock()
	until, ok := x.misses[string(c.Hash())]
	return ok && time.Now().Before(until)
}

func (x *Exchange) miss(c cid.Cid) {
	x.missMu.Lock()
	defer x.missMu.Unlock()
	if len(x.misses) >= maxMisses {
		clear(x.misses)
	}
	x.misses[string(c.Hash())] = time.Now().Add(missTTL)
}

// index indexes the local file whose IPFS CID is root, reading it once,
// unless the index holds block want of it by then (another want indexed
// it meanwhile; an undefined want indexes it whatever the index holds).
// why says for the log what asked. A file that cannot be indexed (not
// local, or changed since it was hashed) is not tried again for missTTL.
func (x *Exchange) index(ctx context.Context, root, want cid.Cid, why string) error {
	if x.cfg.Open == nil || x.missed(root) {
		return notFound(root)
	}
	f, err := x.cfg.Open(ctx, root)
	if err != nil {
		if errors.Is(err, ErrNotLocal) {
			x.miss(root)
		}
		return err
	}
	defer f.File.Close()
	x.building.Lock()
	defer x.building.Unlock()
	if want.Defined() {
		if ok, _ := x.ix.heldBy(ctx, want, root); ok {
			return nil
		}
	}
	fi, err := f.File.Stat()
	if err != nil {
		return err
	}
	start := time.Now()
	ix, err := dag.Build(io.NewSectionReader(f.File, 0, fi.Size()))
	if err != nil {
		return err
	}
	if !ix.Root.Equals(root) {
		// The file changed since it was hashed.
		x.miss(root)
		x.changed(root)
		return fmt.Errorf("%w: %s", dag.ErrChanged, f.Name)
	}
	if err := x.ix.put(ctx, ix, fi.Size()); err != nil {
		return err
	}
	x.log.Info("share: indexed a file's blocks", "why", why, "file", f.Name, "cid", root.String(),
		"bytes", fi.Size(), "took", time.Since(start).Round(time.Millisecond).String())
	return nil
}

// block produces block c from e, from the first of its holders that
// still has it: an internal node from the index, a leaf read from its
// file and checked against its CID. A holder whose file left the
// library, or whose bytes changed, is passed over (a changed file's
// index is dropped and the node takes it in again). served blocks are
// charged to --share-rate.
func (x *Exchange) block(ctx context.Context, c cid.Cid, e entry, served bool) ([]byte, error) {
	for _, h := range e.holders {
		data, name, err := x.blockOf(ctx, c, e, h)
		if err != nil {
			continue
		}
		if served {
			if e.internal != nil {
				x.links.add(data, h.root)
			}
			x.track.served(c, h.root, name)
			if x.limit != nil {
				if err := x.limit.WaitN(ctx, len(data)); err != nil {
					return nil, err
				}
			}
		}
		return data, nil
	}
	return nil, notFound(c)
}

// blockOf is block c as h's file holds it, and the file's name.
func (x *Exchange) blockOf(ctx context.Context, c cid.Cid, e entry, h holder) ([]byte, string, error) {
	f, release, err := x.open(ctx, c, h.root)
	if err != nil {
		return nil, "", err
	}
	defer release()
	if e.internal != nil {
		return e.internal, f.Name, nil
	}
	data, err := dag.ReadLeaf(f.File, e.leaf(c, h))
	if err != nil {
		if errors.Is(err, dag.ErrChanged) {
			x.changed(h.root)
		} else {
			x.refusals.note(h.root, f.Name, c, fmt.Sprintf("reading it failed: %v", err))
		}
		return nil, "", err
	}
	return data, f.Name, nil
}

// open is root's file, open to read block c from: the file open already
// while its path still names it, else opened where the store says it is.
// A file no longer in the library has its index dropped once the store
// says so.
func (x *Exchange) open(ctx context.Context, c, root cid.Cid) (*Local, func(), error) {
	f, release, stale, err := x.files.acquire(ctx, root, x.cfg.Open)
	if err == nil {
		return f, release, nil
	}
	why := fmt.Sprintf("the file cannot be opened: %v", err)
	if errors.Is(err, ErrNotLocal) {
		why = "the file is no longer in the library"
		if stale {
			why = "the file left the library (deleted, moved out or replaced) while it was served"
		}
		if x.cfg.IsLocal == nil || !x.cfg.IsLocal(ctx, root) {
			_ = x.ix.forget(context.WithoutCancel(ctx), root)
		}
	}
	x.refusals.note(root, "", c, why)
	return nil, nil, err
}

// servable reports whether one of e's holders can be opened now (its
// file still in the library, its path still naming it): bitswap asks
// the size of a block before it says HAVE or queues it.
func (x *Exchange) servable(ctx context.Context, c cid.Cid, e entry) bool {
	for _, h := range e.holders {
		if _, release, err := x.open(ctx, c, h.root); err == nil {
			release()
			return true
		}
	}
	return false
}

// changed drops root's index and its open file, and has the node take
// the file in again.
func (x *Exchange) changed(root cid.Cid) {
	x.log.Warn("share: a file changed since it was hashed; its blocks are not served until it is hashed again", "cid", root.String())
	x.files.drop(root)
	_ = x.ix.forget(context.Background(), root)
	if x.cfg.Changed != nil {
		x.cfg.Changed(root)
	}
}

// links remembers, for linkTTL, the children of the internal nodes
// served to peers, by the file they were served from: a peer that got a
// node wants its children next, and a child the index lost is then
// known to be that file's (entry indexes the file again).
type links struct {
	mu sync.Mutex
	m  map[string]linkOf // child's multihash → its file
}

type linkOf struct {
	root cid.Cid
	at   time.Time
}

// linkTTL is how long a served node's children are remembered.
const linkTTL = 5 * time.Minute

// maxLinks bounds the children remembered (a node has at most 174: the
// nodes of 16 GiB of files).
const maxLinks = 1 << 16

func newLinks() *links { return &links{m: map[string]linkOf{}} }

// add remembers the children of node nd (dag-pb bytes) of root's file.
func (l *links) add(nd []byte, root cid.Cid) {
	n, err := merkledag.DecodeProtobuf(nd)
	if err != nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.m)+len(n.Links()) > maxLinks {
		l.expire(now)
		if len(l.m)+len(n.Links()) > maxLinks {
			clear(l.m)
		}
	}
	for _, k := range n.Links() {
		l.m[string(k.Cid.Hash())] = linkOf{root: root, at: now}
	}
}

// parent is the file a served node linked c from, lately.
func (l *links) parent(c cid.Cid) (cid.Cid, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.m[string(c.Hash())]
	if !ok || time.Since(p.at) > linkTTL {
		return cid.Undef, false
	}
	return p.root, true
}

// expire forgets the children remembered longer than linkTTL; l.mu is
// held.
func (l *links) expire(now time.Time) {
	for k, p := range l.m {
		if now.Sub(p.at) > linkTTL {
			delete(l.m, k)
		}
	}
}

// run forgets old children until ctx ends.
func (l *links) run(ctx context.Context) {
	t := time.NewTicker(linkTTL / 5)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			l.mu.Lock()
			l.expire(now)
			l.mu.Unlock()
		}
	}
}

// refusals logs the wants refused for the blocks of a file the index
// knows (a peer's fetch of it then stalls): once per file every
// refusalEvery, with how many were refused since. Wants of CIDs the
// index does not know are not logged (anyone can send those).
type refusals struct {
	log *slog.Logger
	mu  sync.Mutex
	m   map[string]*refused // root's multihash
}

type refused struct {
	last  time.Time
	count int
}

// refusalEvery is how often one file's refused wants are logged.
const refusalEvery = 30 * time.Second

// maxRefusals bounds the files remembered.
const maxRefusals = 10_000

func newRefusals(log *slog.Logger) *refusals {
	return &refusals{log: log, m: map[string]*refused{}}
}

// note counts a want of block c of root's file (name, when known)
// refused for why, and logs it unless one was logged lately.
func (r *refusals) note(root cid.Cid, name string, c cid.Cid, why string) {
	r.mu.Lock()
	k := string(root.Hash())
	f, ok := r.m[k]
	if !ok {
		if len(r.m) >= maxRefusals {
			clear(r.m)
		}
		f = &refused{}
		r.m[k] = f
	}
	f.count++
	now := time.Now()
	if !f.last.IsZero() && now.Sub(f.last) < refusalEvery {
		r.mu.Unlock()
		return
	}
	count := f.count
	f.last, f.count = now, 0
	r.mu.Unlock()
	args := []any{"cid", root.String(), "block", c.String(), "why", why, "refused", count}
	if name != "" {
		args = append([]any{"file", name}, args...)
	}
	r.log.Warn("share: a want for a block of a file was answered DONT_HAVE", args...)
}
