package dag

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"

	chunk "github.com/ipfs/boxo/chunker"
	"github.com/ipfs/boxo/ipld/unixfs/importer/balanced"
	"github.com/ipfs/boxo/ipld/unixfs/importer/helpers"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
	"github.com/multiformats/go-multihash"
)

// ChunkSize is the fixed chunk size of `ipfs add --cid-version=1` with
// Kubo's defaults (256 KiB).
const ChunkSize = 256 << 10

// Params are Kubo's defaults for `ipfs add --cid-version=1`, building into
// ds: raw leaves, a balanced DAG of helpers.DefaultLinksPerBlock (174)
// links per node, CIDv1 dag-pb over sha2-256. The node's IPFS CID of a
// file is the root of this DAG over its ChunkSize chunks.
func Params(ds ipld.DAGService) helpers.DagBuilderParams {
	return helpers.DagBuilderParams{
		Dagserv:    ds,
		Maxlinks:   helpers.DefaultLinksPerBlock,
		RawLeaves:  true,
		CidBuilder: cid.V1Builder{Codec: cid.DagProtobuf, MhType: multihash.SHA2_256},
	}
}

// Leaf is one leaf of a file's DAG: a raw block, the bytes [Offset,
// Offset+Size) of the file.
type Leaf struct {
	CID    cid.Cid
	Offset int64
	Size   int
}

// Index is what serving a file's blocks in place needs, without copying
// the file: its root, its leaves as byte ranges of the file, in order, and
// its internal dag-pb nodes, which are small (at most 174 links each).
type Index struct {
	Root     cid.Cid
	Leaves   []Leaf
	Internal map[cid.Cid][]byte
	leaf     map[cid.Cid]int // CID → position in Leaves (the first, for repeated chunks)
}

// ErrNotInDAG: the CID names no block of the file's DAG.
var ErrNotInDAG = errors.New("no block of this file's DAG")

// ErrChanged: a leaf's bytes in the file no longer hash to its CID (the
// file changed since it was indexed).
var ErrChanged = errors.New("the file's bytes no longer match the block's CID")

// Build reads r to its end in ChunkSize chunks and returns the index of
// the DAG Kubo builds of it (Params): its root is the file's IPFS CID.
func Build(r io.Reader) (*Index, error) {
	rec := NewRecorder()
	params := Params(rec)
	db, err := params.New(chunk.NewSizeSplitter(r, ChunkSize))
	if err != nil {
		return nil, err
	}
	nd, err := balanced.Layout(db)
	if err != nil {
		return nil, fmt.Errorf("dag: %w", err)
	}
	return rec.Index(nd.Cid()), nil
}

// NewIndex is the index of a DAG whose root, leaves (in the file's order)
// and internal nodes are known: what the block index keeps on disk.
func NewIndex(root cid.Cid, leaves []Leaf, internal map[cid.Cid][]byte) *Index {
	ix := &Index{Root: root, Leaves: leaves, Internal: internal, leaf: make(map[cid.Cid]int, len(leaves))}
	for i, l := range leaves {
		if _, seen := ix.leaf[l.CID]; !seen {
			ix.leaf[l.CID] = i
		}
	}
	return ix
}

// Bytes is the size of the index's contents: the leaves' CIDs and ranges
// and the internal nodes.
func (ix *Index) Bytes() int {
	n := 0
	for _, l := range ix.Leaves {
		n += l.CID.ByteLen() + 8 + 4
	}
	for c, b := range ix.Internal {
		n += c.ByteLen() + len(b)
	}
	return n
}

// Block returns the bytes of block c of the file: an internal node from
// the index, a leaf read from file and checked against its CID.
func (ix *Index) Block(c cid.Cid, file io.ReaderAt) ([]byte, error) {
	if b, ok := ix.Internal[c]; ok {
		return b, nil
	}
	i, ok := ix.leaf[c]
	if !ok {
		return nil, ErrNotInDAG
	}
	return ReadLeaf(file, ix.Leaves[i])
}

// ReadLeaf reads leaf l from file and returns its bytes only when they
// still hash to its CID (ErrChanged otherwise).
func ReadLeaf(file io.ReaderAt, l Leaf) ([]byte, error) {
	b := make([]byte, l.Size)
	if _, err := file.ReadAt(b, l.Offset); err != nil && !(errors.Is(err, io.EOF) && l.Size == 0) {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: the file is shorter than block %s's range", ErrChanged, l.CID)
		}
		return nil, err
	}
	sum := sha256.Sum256(b)
	if dec, err := multihash.Decode(l.CID.Hash()); err != nil || dec.Code != multihash.SHA2_256 || !bytes.Equal(dec.Digest, sum[:]) {
		return nil, fmt.Errorf("%w: block %s", ErrChanged, l.CID)
	}
	return b, nil
}

// Recorder is a DAGService for the importer (Params) that keeps the
// index of what it builds: leaves as ranges (they come in the file's
// order), internal nodes whole. It reads nothing back (Discard's). The
// hasher builds one at ingest, so indexing costs no read of its own.
type Recorder struct {
	Discard
	ix  *Index
	off int64
}

// NewRecorder is an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{ix: &Index{Internal: map[cid.Cid][]byte{}, leaf: map[cid.Cid]int{}}}
}

// Index is what was recorded, as the DAG of root.
func (r *Recorder) Index(root cid.Cid) *Index {
	r.ix.Root = root
	return r.ix
}

// Add records a node.
func (r *Recorder) Add(_ context.Context, nd ipld.Node) error {
	c := nd.Cid()
	if c.Prefix().Codec == cid.Raw {
		size := len(nd.RawData())
		if _, seen := r.ix.leaf[c]; !seen {
			r.ix.leaf[c] = len(r.ix.Leaves)
		}
		r.ix.Leaves = append(r.ix.Leaves, Leaf{CID: c, Offset: r.off, Size: size})
		r.off += int64(size)
		return nil
	}
	r.ix.Internal[c] = append([]byte(nil), nd.RawData()...)
	return nil
}

// AddMany records nodes.
func (r *Recorder) AddMany(ctx context.Context, nds []ipld.Node) error {
	for _, nd := range nds {
		if err := r.Add(ctx, nd); err != nil {
			return err
		}
	}
	return nil
}

// Discard is an ipld.DAGService that keeps nothing, for a DAG whose root
// CID alone is wanted (the hasher's).
type Discard struct{}

func (Discard) Get(context.Context, cid.Cid) (ipld.Node, error) { return nil, ipld.ErrNotFound{} }

func (Discard) GetMany(context.Context, []cid.Cid) <-chan *ipld.NodeOption {
	ch := make(chan *ipld.NodeOption)
	close(ch)
	return ch
}

func (Discard) Add(context.Context, ipld.Node) error        { return nil }
func (Discard) AddMany(context.Context, []ipld.Node) error  { return nil }
func (Discard) Remove(context.Context, cid.Cid) error       { return nil }
func (Discard) RemoveMany(context.Context, []cid.Cid) error { return nil }

var _ ipld.DAGService = Discard{}
