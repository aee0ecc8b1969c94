package share

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/dag"
	"github.com/metamesh/node/node/derived"
	"github.com/metamesh/node/store/storetest"
)

func testCID(codec uint64, s string) cid.Cid {
	h, _ := multihash.Sum([]byte(s), multihash.SHA2_256, -1)
	return cid.NewCidV1(codec, h)
}

// v1Entry is an entry as version 1 of the index wrote it: kind, the
// root (length-prefixed), then a leaf's offset and size or an internal
// node's bytes.
func v1Entry(root cid.Cid, internal []byte, off, size uint64) []byte {
	b := []byte{kindLeaf}
	if internal != nil {
		b[0] = kindInternal
	}
	b = binary.AppendUvarint(b, uint64(len(root.Bytes())))
	b = append(b, root.Bytes()...)
	if internal != nil {
		return append(b, internal...)
	}
	b = binary.AppendUvarint(b, off)
	return binary.AppendUvarint(b, size)
}

// sameEntry reports whether two entries say the same.
func sameEntry(a, b entry) bool {
	return a.size == b.size && bytes.Equal(a.internal, b.internal) && (a.internal == nil) == (b.internal == nil) &&
		slices.EqualFunc(a.holders, b.holders, func(x, y holder) bool { return x.root.Equals(y.root) && x.offset == y.offset })
}

// An index entry reads back as written, entries of version 1 read as
// one holder, and no bytes on disk (a damaged database) make decoding
// panic, claim a leaf larger than a chunk or a block no file holds.
func FuzzDecodeEntry(f *testing.F) {
	root := testCID(cid.DagProtobuf, "root")
	other := testCID(cid.DagProtobuf, "other")
	leaf := testCID(cid.Raw, "leaf")
	f.Add(v1Entry(root, nil, 1<<30, dag.ChunkSize))
	f.Add(v1Entry(root, []byte{0x12, 0x34}, 0, 0))
	f.Add(encodeEntry(entry{holders: []holder{{root: root, offset: 1 << 30}, {root: other, offset: 7 << 18}}, size: dag.ChunkSize}))
	f.Add(encodeEntry(entry{holders: []holder{{root: root}, {root: other}}, internal: []byte{0x12, 0x34}}))
	f.Add([]byte{0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{kindLeaves, 0x80, 0x80, 0x10, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{kindInternals, 0x02, 0x01, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEntry(leaf, b)
		if err != nil {
			return
		}
		if len(e.holders) == 0 {
			t.Fatalf("decoded an entry no file holds: %x", b)
		}
		for _, h := range e.holders {
			if h.offset < 0 || !h.root.Defined() {
				t.Fatalf("decoded a holder %+v", h)
			}
		}
		if e.internal == nil && e.size > dag.ChunkSize {
			t.Fatalf("decoded a leaf of %d bytes", e.size)
		}
		again, err := decodeEntry(leaf, encodeEntry(e))
		if err != nil || !sameEntry(again, e) {
			t.Fatalf("%+v does not read back: %+v, %v", e, again, err)
		}
	})
}

// Entries of version 1 read as one holder each, and a block one file
// holds is still written as version 1 wrote it.
func TestDecodeEntry_Version1(t *testing.T) {
	root, leaf := testCID(cid.DagProtobuf, "root"), testCID(cid.Raw, "leaf")
	old := v1Entry(root, nil, 3<<18, 1234)
	e, err := decodeEntry(leaf, old)
	if err != nil || len(e.holders) != 1 || !e.holders[0].root.Equals(root) || e.holders[0].offset != 3<<18 || e.size != 1234 {
		t.Fatalf("a version 1 leaf: %+v, %v", e, err)
	}
	if got := encodeEntry(e); !bytes.Equal(got, old) {
		t.Errorf("a leaf one file holds is written %x, version 1 wrote %x", got, old)
	}
	oldNode := v1Entry(root, []byte{0x0a, 0x02, 0x08, 0x02}, 0, 0)
	if e, err := decodeEntry(root, oldNode); err != nil || len(e.holders) != 1 || !bytes.Equal(e.internal, []byte{0x0a, 0x02, 0x08, 0x02}) {
		t.Fatalf("a version 1 internal node: %+v, %v", e, err)
	}
}

// openIndex opens a block index in a fresh directory.
func openIndex(t *testing.T) index {
	t.Helper()
	ds, err := derived.OpenPebble(t.TempDir(), "block index", storetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	return newIndex(ds)
}

func build(t *testing.T, data []byte) *dag.Index {
	t.Helper()
	ix, err := dag.Build(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// Two files that share their first leaves (a partial copy) are both
// whole in the index, each shared leaf names both, and forgetting either
// leaves the other whole, whichever was indexed last.
func TestIndex_SharedBlocks(t *testing.T) {
	ctx := context.Background()
	data := bytes.Repeat([]byte("0123456789abcdef"), 12*dag.ChunkSize/16) // 12 leaves
	for i := range data {
		data[i] ^= byte(i / dag.ChunkSize) // each leaf its own bytes
	}
	big, part := build(t, data), build(t, data[:8*dag.ChunkSize])
	for _, tc := range []struct {
		name         string
		first, then  *dag.Index
		forget, kept *dag.Index
	}{
		{"the copy indexed last, then forgotten", big, part, part, big},
		{"the copy indexed last, the file forgotten", big, part, big, part},
		{"the file indexed last, the copy forgotten", part, big, part, big},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := openIndex(t)
			for _, ix := range []*dag.Index{tc.first, tc.then} {
				if err := x.put(ctx, ix, int64(ix.Leaves[len(ix.Leaves)-1].Offset)+int64(ix.Leaves[len(ix.Leaves)-1].Size)); err != nil {
					t.Fatal(err)
				}
			}
			for _, ix := range []*dag.Index{big, part} {
				if ok, err := x.complete(ctx, ix.Root); !ok || err != nil {
					t.Fatalf("%s is not whole in the index (%v)", ix.Root, err)
				}
			}
			e, err := x.get(ctx, big.Leaves[0].CID)
			if err != nil || len(e.holders) != 2 {
				t.Fatalf("a shared leaf: %+v, %v; want both files among its holders", e, err)
			}
			if err := x.forget(ctx, tc.forget.Root); err != nil {
				t.Fatal(err)
			}
			if ok, err := x.complete(ctx, tc.kept.Root); !ok || err != nil {
				t.Fatalf("forgetting %s took blocks of %s (%v)", tc.forget.Root, tc.kept.Root, err)
			}
			leaves, err := x.leaves(ctx, tc.kept.Root)
			if err != nil || len(leaves) != len(tc.kept.Leaves) {
				t.Fatalf("the kept file's leaves: %d, %v", len(leaves), err)
			}
			if has, _ := x.has(ctx, tc.forget.Root); has {
				t.Error("the forgotten file is still marked indexed")
			}
			if tc.forget == big {
				if _, err := x.get(ctx, big.Leaves[11].CID); !isMissing(err) {
					t.Errorf("a leaf only the forgotten file held is still indexed: %v", err)
				}
			}
			if err := x.forget(ctx, tc.kept.Root); err != nil {
				t.Fatal(err)
			}
			if _, err := x.get(ctx, big.Leaves[0].CID); !isMissing(err) {
				t.Errorf("a leaf no file holds any more is still indexed: %v", err)
			}
		})
	}
}
