package share

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ipfs/boxo/datastore/dshelp"
	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/go-cid"
	"github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"

	"github.com/metamesh/node/dag"
)

// The block index, in a go-datastore (a pebble database under the data
// directory):
//
//	/b/<multihash>  the block: the files that hold it (each by its root,
//	                and a leaf's offset in it), with a leaf's size or an
//	                internal node's bytes
//	/r/<multihash>  a file's root: its size, leaf count and CID (the file
//	                is indexed)
//	/v              the index's version (2: every holder of a block kept)
//
// Blocks are keyed by multihash, as Kubo's blockstore keys them: a want
// for the same bytes under another codec finds them. A block that
// several files hold (a partial copy of a file, a run of zeros) names
// each of them, up to maxHolders: it is served from any one still in the
// library, and forgetting one file leaves it to the others. An index
// of version 1 named only the file indexed last; the start's sweep
// checks such an index once and indexes again the files it lost blocks
// of (sweep).
const (
	blockPrefix = "/b"
	rootPrefix  = "/r"
	versionKey  = "/v"
)

// indexVersion is the version this code writes.
const indexVersion = 2

// maxHolders bounds the files one block names: an entry is read for
// every want of its block and written again for every file added. A
// block held by more files is still found from the first maxHolders;
// the others are indexed again when a want misses (Exchange.entry).
const maxHolders = 32

// Entry kinds. 0 and 1 are one holder (the only kinds of version 1, and
// still written for a block one file holds); 2 and 3 several.
const (
	kindLeaf      = 0
	kindInternal  = 1
	kindLeaves    = 2
	kindInternals = 3
)

// holder is a file that holds a block: its root, and for a leaf where
// the block's bytes start in it.
type holder struct {
	root   cid.Cid
	offset int64
}

// entry is one block of the index.
type entry struct {
	holders  []holder // at least one
	size     int      // a leaf's size (its CID is the block's)
	internal []byte   // an internal node's bytes; nil for a leaf
}

// leaf is the block as a range of h's file.
func (e entry) leaf(c cid.Cid, h holder) dag.Leaf {
	return dag.Leaf{CID: c, Offset: h.offset, Size: e.size}
}

// holds reports whether root's file holds the block.
func (e entry) holds(root cid.Cid) bool {
	return slices.ContainsFunc(e.holders, func(h holder) bool { return h.root.Equals(root) })
}

// with is e with h among its holders (in place of root's earlier one),
// unless it names maxHolders files already.
func (e entry) with(h holder) entry {
	i := slices.IndexFunc(e.holders, func(o holder) bool { return o.root.Equals(h.root) })
	switch {
	case i >= 0:
		e.holders = slices.Clone(e.holders)
		e.holders[i] = h
	case len(e.holders) < maxHolders:
		e.holders = append(slices.Clone(e.holders), h)
	}
	return e
}

// without is e without root among its holders.
func (e entry) without(root cid.Cid) entry {
	e.holders = slices.DeleteFunc(slices.Clone(e.holders), func(h holder) bool { return h.root.Equals(root) })
	return e
}

func blockKey(c cid.Cid) datastore.Key {
	return datastore.NewKey(blockPrefix).Child(dshelp.MultihashToDsKey(c.Hash()))
}

func rootKey(c cid.Cid) datastore.Key {
	return datastore.NewKey(rootPrefix).Child(dshelp.MultihashToDsKey(c.Hash()))
}

// encodeEntry is the kind, then:
//
//	kindLeaf       root (length-prefixed), offset, size
//	kindInternal   root (length-prefixed), the node's bytes
//	kindLeaves     size, the count of holders, each holder's root
//	               (length-prefixed) and offset
//	kindInternals  the count of holders, each holder's root
//	               (length-prefixed), the node's bytes
//
// every number a uvarint. A block one file holds is written as version 1
// wrote it.
func encodeEntry(e entry) []byte {
	n := 1 + 2*binary.MaxVarintLen64 + len(e.internal)
	for _, h := range e.holders {
		n += 2*binary.MaxVarintLen64 + h.root.ByteLen()
	}
	b := make([]byte, 0, n)
	appendRoot := func(b []byte, c cid.Cid) []byte {
		rb := c.Bytes()
		b = binary.AppendUvarint(b, uint64(len(rb)))
		return append(b, rb...)
	}
	switch {
	case len(e.holders) == 1 && e.internal != nil:
		b = append(b, kindInternal)
		b = appendRoot(b, e.holders[0].root)
		return append(b, e.internal...)
	case len(e.holders) == 1:
		b = append(b, kindLeaf)
		b = appendRoot(b, e.holders[0].root)
		b = binary.AppendUvarint(b, uint64(e.holders[0].offset))
		return binary.AppendUvarint(b, uint64(e.size))
	case e.internal != nil:
		b = append(b, kindInternals)
		b = binary.AppendUvarint(b, uint64(len(e.holders)))
		for _, h := range e.holders {
			b = appendRoot(b, h.root)
		}
		return append(b, e.internal...)
	default:
		b = append(b, kindLeaves)
		b = binary.AppendUvarint(b, uint64(e.size))
		b = binary.AppendUvarint(b, uint64(len(e.holders)))
		for _, h := range e.holders {
			b = appendRoot(b, h.root)
			b = binary.AppendUvarint(b, uint64(h.offset))
		}
		return b
	}
}

var errBadEntry = errors.New("share: malformed block index entry")

// maxOffset bounds a leaf's offset: no file is 4 EiB.
const maxOffset = 1 << 62

// entryReader reads an entry's fields in order; the first malformed one
// sets bad.
type entryReader struct {
	b   []byte
	bad bool
}

func (r *entryReader) uvarint() uint64 {
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *entryReader) root() cid.Cid {
	n := r.uvarint()
	if r.bad || n > uint64(len(r.b)) {
		r.bad = true
		return cid.Undef
	}
	k, c, err := cid.CidFromBytes(r.b[:n])
	if err != nil || k != int(n) {
		r.bad = true
		return cid.Undef
	}
	r.b = r.b[n:]
	return c
}

func (r *entryReader) offset() int64 {
	off := r.uvarint()
	if off > maxOffset {
		r.bad = true
	}
	return int64(off)
}

func (r *entryReader) size() int {
	size := r.uvarint()
	if size > dag.ChunkSize {
		r.bad = true
	}
	return int(size)
}

// count reads a count of holders: at least one, and no more than the
// bytes left could hold (two bytes each at least).
func (r *entryReader) count() int {
	n := r.uvarint()
	if n == 0 || n > uint64(len(r.b))/2 {
		r.bad = true
	}
	return int(n)
}

// decodeEntry reads the entry of block c; errBadEntry for bytes no
// version of the index wrote.
func decodeEntry(c cid.Cid, b []byte) (entry, error) {
	if len(b) < 2 {
		return entry{}, errBadEntry
	}
	r := &entryReader{b: b[1:]}
	var e entry
	switch b[0] {
	case kindLeaf:
		h := holder{root: r.root()}
		h.offset = r.offset()
		e = entry{holders: []holder{h}, size: r.size()}
		if len(r.b) != 0 {
			r.bad = true
		}
	case kindInternal:
		e = entry{holders: []holder{{root: r.root()}}}
		e.internal = r.b
	case kindLeaves:
		e.size = r.size()
		n := r.count()
		for i := 0; i < n && !r.bad; i++ {
			h := holder{root: r.root()}
			h.offset = r.offset()
			e.holders = append(e.holders, h)
		}
		if len(r.b) != 0 {
			r.bad = true
		}
	case kindInternals:
		n := r.count()
		for i := 0; i < n && !r.bad; i++ {
			e.holders = append(e.holders, holder{root: r.root()})
		}
		e.internal = r.b
	default:
		return entry{}, errBadEntry
	}
	if r.bad {
		return entry{}, errBadEntry
	}
	if e.internal != nil && len(e.internal) == 0 {
		return entry{}, errBadEntry
	}
	return e, nil
}

// index is the block index over ds. Writes (put, forget) read the
// entries they change first, and are serialized by mu.
type index struct {
	ds datastore.Batching
	mu *sync.Mutex
}

func newIndex(ds datastore.Batching) index { return index{ds: ds, mu: &sync.Mutex{}} }

// edits are the entries a write changes, read once each, then written
// in one batch (an entry with no holder left is deleted).
type edits struct {
	x       index
	entries map[datastore.Key]entry
	order   []datastore.Key
}

func (x index) edits() *edits { return &edits{x: x, entries: map[datastore.Key]entry{}} }

// get is block c's entry as edited so far; ok false when there is none.
func (ed *edits) get(ctx context.Context, c cid.Cid) (entry, bool, error) {
	k := blockKey(c)
	if e, ok := ed.entries[k]; ok {
		return e, len(e.holders) > 0, nil
	}
	e, err := ed.x.get(ctx, c)
	if errors.Is(err, datastore.ErrNotFound) || errors.Is(err, errBadEntry) {
		return entry{}, false, nil
	}
	return e, err == nil, err
}

func (ed *edits) set(c cid.Cid, e entry) {
	k := blockKey(c)
	if _, ok := ed.entries[k]; !ok {
		ed.order = append(ed.order, k)
	}
	ed.entries[k] = e
}

func (ed *edits) write(b datastore.Batch, ctx context.Context) error {
	for _, k := range ed.order {
		e := ed.entries[k]
		var err error
		if len(e.holders) == 0 {
			err = b.Delete(ctx, k)
		} else {
			err = b.Put(ctx, k, encodeEntry(e))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// put writes ix: root's file among the holders of every block, then the
// root's mark, in one batch.
func (x index) put(ctx context.Context, ix *dag.Index, size int64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	ed := x.edits()
	for c, nd := range ix.Internal {
		e, ok, err := ed.get(ctx, c)
		if err != nil {
			return err
		}
		if !ok || e.internal == nil {
			e = entry{internal: nd}
		}
		ed.set(c, e.with(holder{root: ix.Root}))
	}
	for _, l := range ix.Leaves {
		e, ok, err := ed.get(ctx, l.CID)
		if err != nil {
			return err
		}
		if !ok || e.internal != nil {
			e = entry{size: l.Size}
		} else if e.holds(ix.Root) {
			continue // a chunk the file repeats: its first range
		}
		ed.set(l.CID, e.with(holder{root: ix.Root, offset: l.Offset}))
	}
	b, err := x.ds.Batch(ctx)
	if err != nil {
		return err
	}
	if err := ed.write(b, ctx); err != nil {
		return err
	}
	mark := binary.AppendUvarint(nil, uint64(size))
	mark = binary.AppendUvarint(mark, uint64(len(ix.Leaves)))
	mark = append(mark, ix.Root.Bytes()...)
	if err := b.Put(ctx, rootKey(ix.Root), mark); err != nil {
		return err
	}
	return b.Commit(ctx)
}

// has reports whether root is indexed.
func (x index) has(ctx context.Context, root cid.Cid) (bool, error) {
	return x.ds.Has(ctx, rootKey(root))
}

// get returns block c's entry; datastore.ErrNotFound when the index has
// none.
func (x index) get(ctx context.Context, c cid.Cid) (entry, error) {
	b, err := x.ds.Get(ctx, blockKey(c))
	if err != nil {
		return entry{}, err
	}
	return decodeEntry(c, b)
}

// maxDepth bounds a walk down a DAG: Kubo's balanced layout of 174 links
// a node is 4 levels deep at 200 TiB.
const maxDepth = 64

// forget takes root's file out of the holders of its blocks (its
// internal nodes name every block of the DAG), deleting the blocks no
// other file holds, and its mark. It reads every internal node of the
// DAG once.
func (x index) forget(ctx context.Context, root cid.Cid) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	ed := x.edits()
	seen := map[string]bool{}
	var walk func(c cid.Cid, depth int) error
	walk = func(c cid.Cid, depth int) error {
		if seen[string(c.Hash())] {
			return nil
		}
		seen[string(c.Hash())] = true
		e, ok, err := ed.get(ctx, c)
		if err != nil || !ok {
			return err
		}
		if e.holds(root) {
			ed.set(c, e.without(root))
		}
		// A node that does not name root (one past maxHolders) may still
		// link blocks that do.
		if e.internal == nil || depth > maxDepth {
			return nil
		}
		nd, err := merkledag.DecodeProtobuf(e.internal)
		if err != nil {
			return nil
		}
		for _, l := range nd.Links() {
			if err := walk(l.Cid, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return fmt.Errorf("share: forget %s: %w", root, err)
	}
	b, err := x.ds.Batch(ctx)
	if err != nil {
		return err
	}
	if err := ed.write(b, ctx); err != nil {
		return err
	}
	if err := b.Delete(ctx, rootKey(root)); err != nil {
		return err
	}
	return b.Commit(ctx)
}

// errIncomplete: a file's DAG is not whole in the index.
var errIncomplete = errors.New("share: the file's blocks are not all in the block index")

// walk visits root's DAG in the file's order, its internal nodes from
// the index: node for each internal node's entry, leaf for each leaf's
// CID. errIncomplete when an internal node is missing.
func (x index) walk(ctx context.Context, root cid.Cid, node func(cid.Cid, entry) error, leaf func(cid.Cid) error) error {
	var walk func(c cid.Cid, depth int) error
	walk = func(c cid.Cid, depth int) error {
		if c.Prefix().Codec == cid.Raw {
			return leaf(c)
		}
		e, err := x.get(ctx, c)
		if isMissing(err) || (err == nil && e.internal == nil) || depth > maxDepth {
			return errIncomplete
		}
		if err != nil {
			return err
		}
		if err := node(c, e); err != nil {
			return err
		}
		nd, err := merkledag.DecodeProtobuf(e.internal)
		if err != nil {
			return errIncomplete
		}
		for _, l := range nd.Links() {
			if err := walk(l.Cid, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root, 0)
}

// leaves lists root's leaves in the file's order (errIncomplete when an
// internal node is missing). A file of one chunk is its leaf.
func (x index) leaves(ctx context.Context, root cid.Cid) ([]cid.Cid, error) {
	var out []cid.Cid
	err := x.walk(ctx, root, func(cid.Cid, entry) error { return nil }, func(c cid.Cid) error {
		out = append(out, c)
		return nil
	})
	return out, err
}

// heldBy reports whether block c's entry names root among its holders.
func (x index) heldBy(ctx context.Context, c, root cid.Cid) (bool, error) {
	e, err := x.get(ctx, c)
	if isMissing(err) {
		return false, nil
	}
	return err == nil && e.holds(root), err
}

// complete reports whether every block of root's DAG is in the index
// and names root among its holders (version 1 named only the file
// indexed last).
func (x index) complete(ctx context.Context, root cid.Cid) (bool, error) {
	err := x.walk(ctx, root, func(_ cid.Cid, e entry) error {
		if !e.holds(root) {
			return errIncomplete
		}
		return nil
	}, func(c cid.Cid) error {
		e, err := x.get(ctx, c)
		if isMissing(err) || (err == nil && !e.holds(root)) {
			return errIncomplete
		}
		return err
	})
	if errors.Is(err, errIncomplete) {
		return false, nil
	}
	return err == nil, err
}

// version is the index's version: 1 when it has files but no version
// (written before it kept every holder), indexVersion when it is empty.
func (x index) version(ctx context.Context) (int, error) {
	b, err := x.ds.Get(ctx, datastore.NewKey(versionKey))
	if err == nil {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return 1, nil
		}
		return int(v), nil
	}
	if !errors.Is(err, datastore.ErrNotFound) {
		return 0, err
	}
	res, err := x.ds.Query(ctx, query.Query{Prefix: rootPrefix, KeysOnly: true, Limit: 1})
	if err != nil {
		return 0, err
	}
	defer res.Close()
	for r := range res.Next() {
		if r.Error != nil {
			return 0, r.Error
		}
		return 1, nil
	}
	return indexVersion, nil
}

// setVersion marks the index as of this code's version.
func (x index) setVersion(ctx context.Context) error {
	return x.ds.Put(ctx, datastore.NewKey(versionKey), binary.AppendUvarint(nil, indexVersion))
}

// roots lists the indexed files' roots (from their marks).
func (x index) roots(ctx context.Context) ([]cid.Cid, error) {
	res, err := x.ds.Query(ctx, query.Query{Prefix: rootPrefix})
	if err != nil {
		return nil, err
	}
	defer res.Close()
	var out []cid.Cid
	for r := range res.Next() {
		if r.Error != nil {
			return out, r.Error
		}
		b := r.Value
		for range 2 { // size, leaves
			if _, k := binary.Uvarint(b); k > 0 {
				b = b[k:]
			}
		}
		if _, c, err := cid.CidFromBytes(b); err == nil {
			out = append(out, c)
		}
	}
	return out, nil
}
