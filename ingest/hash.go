package ingest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	chunk "github.com/ipfs/boxo/chunker"
	"github.com/ipfs/boxo/ipld/unixfs/importer/balanced"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"

	"github.com/metamesh/node/dag"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// IPFSChunkSize is the fixed chunk size of `ipfs add --cid-version=1`
// with Kubo's defaults (256 KiB); the rest of those defaults (raw leaves, a
// balanced DAG of 174 links per node, CIDv1 dag-pb over sha2-256) is
// dag.Params.
const IPFSChunkSize = dag.ChunkSize

// readBlock is the unit the one-pass hasher reads and hands to both
// digests: a whole number of IPFS chunks.
const readBlock = 4 * IPFSChunkSize

// FileHashes are the three CIDs the node computes for a file.
type FileHashes struct {
	Path      string `json:"path"`
	Size      int64  `json:"size"`
	Midhash   string `json:"midhash256"`
	SHA256    string `json:"sha2-256"`
	IPFS      string `json:"ipfs"`
	Canonical string `json:"canonical"`
}

// Store returns the hashes in the store's shape.
func (h FileHashes) Store() store.Hashes {
	return store.Hashes{Midhash: h.Midhash, SHA256: h.SHA256, IPFS: h.IPFS}
}

// MidhashFile computes the midhash256 CID of an open file of the given
// size (one 1 MiB read).
func MidhashFile(f io.ReaderAt, size int64) (string, error) {
	c, err := protocol.Midhash256(f, size)
	if err != nil {
		return "", err
	}
	return c.String(), nil
}

// HashFile computes all three CIDs of the file at path: midhash256 (one
// sample read), then sha2-256 and the IPFS CID together in one read pass.
func HashFile(ctx context.Context, path string) (FileHashes, error) {
	return HashFileReporting(ctx, path, nil)
}

// HashFileReporting is HashFile telling read, when not nil, how many bytes
// the full pass read, as it reads them (for progress).
func HashFileReporting(ctx context.Context, path string, read func(n int64)) (FileHashes, error) {
	f, fi, err := openRegular(path)
	if err != nil {
		return FileHashes{}, err
	}
	defer f.Close()
	h, _, err := hashOpen(ctx, path, f, fi, read, dag.Discard{})
	return h, err
}

// hashOpen is HashFileReporting on f, opened at path, building the DAG
// into ds: with a dag.Recorder (index true), it also returns the index
// of the file's DAG (its leaves as byte ranges, its internal nodes),
// recorded while hashing: what serving its blocks in place needs.
func hashOpen(ctx context.Context, path string, f *os.File, fi os.FileInfo, read func(n int64), ds ipld.DAGService) (FileHashes, *dag.Index, error) {
	var err error
	h := FileHashes{Path: path, Size: fi.Size()}
	if h.Midhash, err = MidhashFile(f, h.Size); err != nil {
		return FileHashes{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	var r io.Reader = io.NewSectionReader(f, 0, h.Size)
	if read != nil {
		r = reporter{r: r, read: read}
	}
	n, sha, ipfs, err := fullHash(ctx, r, ds)
	if err != nil {
		return FileHashes{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	if n != h.Size {
		return FileHashes{}, nil, fmt.Errorf("%s: %w: read %d bytes, stat said %d", path, ErrChangedWhileHashing, n, h.Size)
	}
	h.SHA256, h.IPFS = sha, ipfs
	h.Canonical = h.Store().Canonical()
	var ix *dag.Index
	if rec, ok := ds.(*dag.Recorder); ok {
		if root, err := cid.Decode(ipfs); err == nil {
			ix = rec.Index(root)
		}
	}
	return h, ix, nil
}

// reporter tells read how many bytes each Read returned.
type reporter struct {
	r    io.Reader
	read func(int64)
}

func (p reporter) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.read(int64(n))
	}
	return n, err
}

// FullHash reads r once and returns the byte count, the sha2-256 CID and
// the IPFS CID. The whole-file SHA-256 runs on its own goroutine (its own
// core) while the UnixFS builder hashes chunks and tree nodes on another,
// both fed from the same buffers.
func FullHash(ctx context.Context, r io.Reader) (n int64, shaCID, ipfsCID string, err error) {
	return fullHash(ctx, r, dag.Discard{})
}

// fullHash is FullHash building the DAG into ds (a dag.Recorder keeps
// its index).
func fullHash(ctx context.Context, r io.Reader, ds ipld.DAGService) (n int64, shaCID, ipfsCID string, err error) {
	release := func(b *buffer) {
		if b.refs.Add(-1) == 0 {
			buffers.Put(b)
		}
	}
	toSHA, toDAG := make(chan *buffer, 4), make(chan *buffer, 4)
	shaOut, dagOut := make(chan []byte, 1), make(chan dagResult, 1)
	go func() {
		h := sha256.New()
		for b := range toSHA {
			h.Write(b.b[:b.n])
			release(b)
		}
		shaOut <- h.Sum(nil)
	}()
	chunks := &splitter{ch: toDAG, release: release}
	go func() {
		c, err := buildDAG(chunks, ds)
		chunks.drain()
		dagOut <- dagResult{c, err}
	}()

	var readErr error
	for {
		if readErr = ctx.Err(); readErr != nil {
			break
		}
		b := buffers.Get().(*buffer)
		m, err := io.ReadFull(r, b.b)
		if m > 0 {
			b.n = m
			b.refs.Store(2)
			n += int64(m)
			toSHA <- b
			toDAG <- b
		} else {
			buffers.Put(b)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			readErr = err
			break
		}
	}
	close(toSHA)
	close(toDAG)
	sum := <-shaOut
	dag := <-dagOut
	if readErr != nil {
		return n, "", "", readErr
	}
	if dag.err != nil {
		return n, "", "", fmt.Errorf("unixfs: %w", dag.err)
	}
	sc, err := protocol.SHA256CID(sum)
	if err != nil {
		return n, "", "", err
	}
	return n, sc.String(), dag.cid.String(), nil
}

// buffers are shared by every hash pass of the process, so hashing many
// small files does not allocate a read block per file.
var buffers = sync.Pool{New: func() any { return &buffer{b: make([]byte, readBlock)} }}

// buffer is one read block shared by both digests; the last to finish
// with it returns it to the pool.
type buffer struct {
	b    []byte
	n    int
	refs atomic.Int32
}

type dagResult struct {
	cid cid.Cid
	err error
}

// buildDAG runs boxo's balanced UnixFS importer over the chunks with
// Kubo's CIDv1 defaults (dag.Params), handing its nodes to ds.
func buildDAG(chunks chunk.Splitter, ds ipld.DAGService) (cid.Cid, error) {
	params := dag.Params(ds)
	db, err := params.New(chunks)
	if err != nil {
		return cid.Undef, err
	}
	nd, err := balanced.Layout(db)
	if err != nil {
		return cid.Undef, err
	}
	return nd.Cid(), nil
}

// splitter is a chunk.Splitter of fixed IPFSChunkSize chunks that hands
// out slices of the shared read buffers instead of copying them. Read
// buffers are a whole number of chunks, so every chunk but the last is
// full. A buffer is released when the importer asks for the chunk after
// its last one: the balanced builder is done with a leaf by then.
type splitter struct {
	ch      chan *buffer
	cur     *buffer
	off     int
	release func(*buffer)
}

var _ chunk.Splitter = (*splitter)(nil)

// Reader is not used by the importer for this splitter.
func (s *splitter) Reader() io.Reader { return nil }

// NextBytes returns the next chunk, or io.EOF.
func (s *splitter) NextBytes() ([]byte, error) {
	for {
		if s.cur != nil && s.off < s.cur.n {
			end := min(s.off+IPFSChunkSize, s.cur.n)
			b := s.cur.b[s.off:end:end]
			s.off = end
			return b, nil
		}
		if s.cur != nil {
			s.release(s.cur)
			s.cur = nil
		}
		b, ok := <-s.ch
		if !ok {
			return nil, io.EOF
		}
		s.cur, s.off = b, 0
	}
}

// drain releases whatever the builder did not consume (after an error).
func (s *splitter) drain() {
	if s.cur != nil {
		s.release(s.cur)
		s.cur = nil
	}
	for b := range s.ch {
		s.release(b)
	}
}
