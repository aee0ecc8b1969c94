package protocol

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
)

// MidhashSampleSize is the size of the sample midhash256 reads: 1 MiB.
const MidhashSampleSize = 1 << 20

// MidhashSample returns the byte range midhash256 reads from a file of the
// given size: the whole file up to 1 MiB, else the 1 MiB starting at
// floor((size - 1 MiB) / 2).
func MidhashSample(size int64) (offset, length int64) {
	if size <= MidhashSampleSize {
		return 0, size
	}
	return (size - MidhashSampleSize) / 2, MidhashSampleSize
}

// Midhash256 computes the midhash256 CID of a file of the given size read
// through r: SHA-256 over uint64_be(size) ‖ sample, as a CIDv1 with codec
// and multihash code 0x1000. It reads exactly one sample, so its cost does
// not depend on the file size.
func Midhash256(r io.ReaderAt, size int64) (cid.Cid, error) {
	if size < 0 {
		return cid.Undef, fmt.Errorf("midhash256: negative size %d", size)
	}
	off, n := MidhashSample(size)
	h := sha256.New()
	var hdr [8]byte
	binary.BigEndian.PutUint64(hdr[:], uint64(size))
	h.Write(hdr[:])
	got, err := io.Copy(h, io.NewSectionReader(r, off, n))
	if err != nil {
		return cid.Undef, fmt.Errorf("midhash256: read sample: %w", err)
	}
	if got != n {
		return cid.Undef, fmt.Errorf("midhash256: read sample: %w (got %d of %d bytes)", io.ErrUnexpectedEOF, got, n)
	}
	return MidhashCID(h.Sum(nil))
}

// MidhashCID wraps a 32-byte midhash256 digest as its CID.
func MidhashCID(digest []byte) (cid.Cid, error) {
	if len(digest) != sha256.Size {
		return cid.Undef, fmt.Errorf("midhash256: digest is %d bytes, want %d", len(digest), sha256.Size)
	}
	mh, err := multihash.Encode(digest, CodeMidhash256)
	if err != nil {
		return cid.Undef, err
	}
	return cid.NewCidV1(CodeMidhash256, mh), nil
}

// SHA256CID wraps a SHA-256 digest of a whole file as its raw-codec CID
// (the "bafkrei…" form).
func SHA256CID(digest []byte) (cid.Cid, error) {
	mh, err := multihash.Encode(digest, CodeSHA2_256)
	if err != nil {
		return cid.Undef, err
	}
	return cid.NewCidV1(CodeRaw, mh), nil
}

// MidhashBytes is Midhash256 of a file held whole in memory.
func MidhashBytes(data []byte) (cid.Cid, error) {
	off, n := MidhashSample(int64(len(data)))
	h := sha256.New()
	var hdr [8]byte
	binary.BigEndian.PutUint64(hdr[:], uint64(len(data)))
	h.Write(hdr[:])
	h.Write(data[off : off+n])
	return MidhashCID(h.Sum(nil))
}
