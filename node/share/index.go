package share

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

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
//	/b/<multihash>  the block: its file's root, and the leaf's byte range
//	                or the internal node's bytes
//	/r/<multihash>  a file's root: its size, leaf count and CID (the file
//	                is indexed)
//
// Blocks are keyed by multihash, as Kubo's blockstore keys them: a want
// for the same bytes under another codec finds them. A block that two
// files hold (a run of zeros) names the file indexed last.
const (
	blockPrefix = "/b"
	rootPrefix  = "/r"
)

// Entry kinds.
const (
	kindLeaf     = 0
	kindInternal = 1
)

// entry is one block of the index.
type entry struct {
	root     cid.Cid
	leaf     dag.Leaf // kindLeaf: the range (its CID is the block's)
	internal []byte   // kindInternal: the node
}

func blockKey(c cid.Cid) datastore.Key {
	return datastore.NewKey(blockPrefix).Child(dshelp.MultihashToDsKey(c.Hash()))
}

func rootKey(c cid.Cid) datastore.Key {
	return datastore.NewKey(rootPrefix).Child(dshelp.MultihashToDsKey(c.Hash()))
}

// encodeEntry is kind, the root's CID (length-prefixed), then a leaf's
// offset and size or an internal node's bytes.
func encodeEntry(e entry) []byte {
	rb := e.root.Bytes()
	b := make([]byte, 0, 1+binary.MaxVarintLen64*3+len(rb)+len(e.internal))
	if e.internal != nil {
		b = append(b, kindInternal)
	} else {
		b = append(b, kindLeaf)
	}
	b = binary.AppendUvarint(b, uint64(len(rb)))
	b = append(b, rb...)
	if e.internal != nil {
		return append(b, e.internal...)
	}
	b = binary.AppendUvarint(b, uint64(e.leaf.Offset))
	return binary.AppendUvarint(b, uint64(e.leaf.Size))
}

var errBadEntry = errors.New("share: malformed block index entry")

func decodeEntry(c cid.Cid, b []byte) (entry, error) {
	if len(b) < 2 {
		return entry{}, errBadEntry
	}
	kind := b[0]
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || n > uint64(len(b)) || 1+k+int(n) > len(b) {
		return entry{}, errBadEntry
	}
	rest := b[1+k:]
	_, root, err := cid.CidFromBytes(rest[:n])
	if err != nil {
		return entry{}, errBadEntry
	}
	rest = rest[n:]
	e := entry{root: root}
	switch kind {
	case kindInternal:
		e.internal = rest
	case kindLeaf:
		off, k1 := binary.Uvarint(rest)
		if k1 <= 0 {
			return entry{}, errBadEntry
		}
		size, k2 := binary.Uvarint(rest[k1:])
		if k2 <= 0 || size > dag.ChunkSize || off > 1<<62 {
			return entry{}, errBadEntry
		}
		e.leaf = dag.Leaf{CID: c, Offset: int64(off), Size: int(size)}
	default:
		return entry{}, errBadEntry
	}
	return e, nil
}

// index is the block index over ds.
type index struct {
	ds datastore.Batching
}

// put writes ix: every block, then the root's mark, in one batch.
func (x index) put(ctx context.Context, ix *dag.Index, size int64) error {
	b, err := x.ds.Batch(ctx)
	if err != nil {
		return err
	}
	for c, nd := range ix.Internal {
		if err := b.Put(ctx, blockKey(c), encodeEntry(entry{root: ix.Root, internal: nd})); err != nil {
			return err
		}
	}
	for _, l := range ix.Leaves {
		if err := b.Put(ctx, blockKey(l.CID), encodeEntry(entry{root: ix.Root, leaf: l})); err != nil {
			return err
		}
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

// forget deletes root's blocks: its internal nodes name every block of
// the DAG. A block another file holds too stays when the entry names that
// file.
func (x index) forget(ctx context.Context, root cid.Cid) error {
	b, err := x.ds.Batch(ctx)
	if err != nil {
		return err
	}
	var walk func(c cid.Cid, depth int) error
	walk = func(c cid.Cid, depth int) error {
		e, err := x.get(ctx, c)
		if errors.Is(err, datastore.ErrNotFound) || errors.Is(err, errBadEntry) {
			return nil
		}
		if err != nil {
			return err
		}
		if !e.root.Equals(root) {
			return nil
		}
		if err := b.Delete(ctx, blockKey(c)); err != nil {
			return err
		}
		if e.internal == nil || depth > 64 {
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
	if err := b.Delete(ctx, rootKey(root)); err != nil {
		return err
	}
	return b.Commit(ctx)
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
