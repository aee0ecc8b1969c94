package share

import (
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/dag"
)

// An index entry reads back as written, and no bytes on disk (a damaged
// database) make decoding panic or claim a leaf larger than a chunk.
func FuzzDecodeEntry(f *testing.F) {
	h, _ := multihash.Sum([]byte("root"), multihash.SHA2_256, -1)
	root := cid.NewCidV1(cid.DagProtobuf, h)
	lh, _ := multihash.Sum([]byte("leaf"), multihash.SHA2_256, -1)
	leaf := cid.NewCidV1(cid.Raw, lh)
	f.Add(encodeEntry(entry{root: root, leaf: dag.Leaf{CID: leaf, Offset: 1 << 30, Size: dag.ChunkSize}}))
	f.Add(encodeEntry(entry{root: root, internal: []byte{0x12, 0x34}}))
	f.Add([]byte{0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEntry(leaf, b)
		if err != nil {
			return
		}
		if e.internal == nil && (e.leaf.Size > dag.ChunkSize || e.leaf.Offset < 0) {
			t.Fatalf("decoded a leaf %+v", e.leaf)
		}
		again, err := decodeEntry(leaf, encodeEntry(e))
		if err != nil || !again.root.Equals(e.root) || again.leaf != e.leaf || string(again.internal) != string(e.internal) {
			t.Fatalf("%+v does not read back: %+v, %v", e, again, err)
		}
	})
}
