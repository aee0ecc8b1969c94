package share

import (
	"context"
	"encoding/binary"

	"github.com/ipfs/go-cid"

	"github.com/metamesh/node/dag"
	"github.com/metamesh/node/node/derived"
)

// WriteIndexV1 writes ix, a file of size bytes, into the block index
// under dir as version 1 of the index kept it (one file a block, no
// version mark), leaving out the blocks in lost: what version 1 kept of
// a file once a partial copy of it, indexed after it, was forgotten.
func WriteIndexV1(dir string, ix *dag.Index, size int64, lost map[cid.Cid]bool) error {
	ctx := context.Background()
	ds, err := derived.OpenPebble(dir, "block index", nil)
	if err != nil {
		return err
	}
	defer ds.Close()
	put := func(c cid.Cid, e entry) error {
		if lost[c] {
			return nil
		}
		return ds.Put(ctx, blockKey(c), encodeEntry(e))
	}
	for c, nd := range ix.Internal {
		if err := put(c, entry{holders: []holder{{root: ix.Root}}, internal: nd}); err != nil {
			return err
		}
	}
	for _, l := range ix.Leaves {
		if err := put(l.CID, entry{holders: []holder{{root: ix.Root, offset: l.Offset}}, size: l.Size}); err != nil {
			return err
		}
	}
	mark := binary.AppendUvarint(nil, uint64(size))
	mark = binary.AppendUvarint(mark, uint64(len(ix.Leaves)))
	return ds.Put(ctx, rootKey(ix.Root), append(mark, ix.Root.Bytes()...))
}

// DropBlock deletes block c from x's index, as a damaged or older index
// may have lost it.
func DropBlock(x *Exchange, c cid.Cid) error {
	return x.ds.Delete(context.Background(), blockKey(c))
}
