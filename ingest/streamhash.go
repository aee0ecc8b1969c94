package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/metamesh/node/dag"
	"github.com/metamesh/node/protocol"
)

// StreamHasher computes a file's CIDs from its bytes as they pass,
// written to it in order, for bytes that are not kept (metamesh get -o -):
// sha2-256 and the IPFS CID by the one-pass hasher (fullHash) reading a
// pipe on a goroutine of its own, the midhash from its sample, kept as it
// passes (which needs the size first: without it there is no midhash).
// Write and Sum are called from one goroutine.
type StreamHasher struct {
	pw     *io.PipeWriter
	done   chan streamSums
	size   int64 // -1: unknown
	off    int64 // the midhash sample's offset
	sample []byte
	n      int64 // bytes written so far
}

// streamSums is what the one-pass hasher made of the stream.
type streamSums struct {
	n         int64
	sha, ipfs string
	err       error
}

// NewStreamHasher starts the hash of a stream of size bytes (-1:
// unknown, and then no midhash), under ctx. Sum ends it.
func NewStreamHasher(ctx context.Context, size int64) *StreamHasher {
	pr, pw := io.Pipe()
	s := &StreamHasher{pw: pw, done: make(chan streamSums, 1), size: size}
	if size >= 0 {
		off, n := protocol.MidhashSample(size)
		s.off, s.sample = off, make([]byte, 0, n)
	}
	go func() {
		var r streamSums
		r.n, r.sha, r.ipfs, r.err = fullHash(ctx, pr, dag.Discard{})
		pr.CloseWithError(errors.Join(r.err, io.ErrClosedPipe)) // a hasher that stopped takes no more
		s.done <- r
	}()
	return s
}

// Write hands b, the stream's next bytes, to the hasher, keeping what of
// it lies in the midhash sample. Its error is the hasher's, once it
// stopped (its context ended).
func (s *StreamHasher) Write(b []byte) (int, error) {
	if s.sample != nil {
		lo, hi := max(s.off, s.n), min(s.off+int64(cap(s.sample)), s.n+int64(len(b)))
		if lo < hi {
			s.sample = append(s.sample, b[lo-s.n:hi-s.n]...)
		}
	}
	s.n += int64(len(b))
	return s.pw.Write(b)
}

// Sum ends the stream and returns its CIDs: the midhash only when the
// stream was as long as the size given (Path empty).
func (s *StreamHasher) Sum() (FileHashes, error) {
	s.pw.Close()
	r := <-s.done
	if r.err != nil {
		return FileHashes{}, r.err
	}
	h := FileHashes{Size: r.n, SHA256: r.sha, IPFS: r.ipfs}
	if s.sample != nil && r.n == s.size {
		mid, err := MidhashFile(sampleAt{off: s.off, b: s.sample}, s.size)
		if err != nil {
			return FileHashes{}, err
		}
		h.Midhash = mid
	}
	h.Canonical = h.Store().Canonical()
	return h, nil
}

// sampleAt is the midhash sample of a file, read where it lies in it.
type sampleAt struct {
	off int64
	b   []byte
}

func (s sampleAt) ReadAt(p []byte, off int64) (int, error) {
	if off < s.off || off > s.off+int64(len(s.b)) {
		return 0, fmt.Errorf("midhash sample: offset %d outside %d+%d", off, s.off, len(s.b))
	}
	n := copy(p, s.b[off-s.off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
