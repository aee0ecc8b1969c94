package node

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/dag"
	"github.com/metamesh/node/protocol"
)

// GET /api/file answers a local file's bytes under its CID as immutable
// (ETag the canonical CID, Cache-Control immutable): what it sends must
// be what was hashed, even when the file changed in place under the same
// size and mtime, which openLocal cannot see. So every 256 KiB block it
// reads is checked before a byte of it goes out:
//
//   - against the block's CID, when the block index holds the file's DAG
//     (the hasher recorded it at ingest, or a peer's want indexed it), as
//     bitswap checks what it serves; a file of one chunk is its block;
//   - otherwise, the file's midhash sample (protocol.Midhash256, the
//     whole of a file up to 1 MiB) is checked before the first byte, and
//     the file's size and mtime before each block.
//
// A mismatch ends the answer (an error before the first byte, an
// aborted stream after it: never a complete 200 of other bytes) and has
// the file hashed again, as bitswap does (sharedChanged).

// checkedContent is lf's bytes for GET /api/file, checked as above; it
// takes lf.f over. A file whose midhash sample no longer matches is an
// api.ErrConflict, and is being hashed again.
func (n *Node) checkedContent(ctx context.Context, lf *localFile) (*checkedFile, error) {
	c := &checkedFile{f: lf.f, size: lf.fi.Size(), fi: lf.fi, at: -1,
		fail: func(why string) error { return n.servedChanged(lf, why) }}
	if n.shr != nil {
		if root, err := cid.Decode(lf.own.IPFS); err == nil {
			if ls, err := n.shr.Leaves(ctx, root); err == nil && int64(len(ls)) == (c.size+dag.ChunkSize-1)/dag.ChunkSize {
				c.leaves = ls
				return c, nil
			}
		}
	}
	mid, err := protocol.Midhash256(lf.f, c.size)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: reading its midhash sample: %v", api.ErrConflict, lf.path, err)
	}
	if mid.String() != lf.own.Midhash {
		return nil, n.servedChanged(lf, "its midhash sample no longer matches")
	}
	return c, nil
}

// servedChanged has ingest hash lf again, its bytes found not to be what
// was hashed, and is the error the request gets. The log says it once
// per file every changeLogEvery.
func (n *Node) servedChanged(lf *localFile, why string) error {
	if changeLogs.due(lf.path) {
		n.log.Warn("a library file changed since it was hashed (its size and mtime did not move); its bytes are not served until it is hashed again",
			"path", lf.path, "cid", lf.doc.CanonicalCID(), "found", why)
	}
	n.ing.Rehash(lf.path)
	return fmt.Errorf("%w: %s changed on disk since it was hashed (%s); it is being hashed again", api.ErrConflict, filepath.Base(lf.path), why)
}

// changeLogEvery is how often one changed file is logged.
const changeLogEvery = 30 * time.Second

// changeLogs is when each changed file was last logged.
var changeLogs = &logTimes{m: map[string]time.Time{}}

type logTimes struct {
	mu sync.Mutex
	m  map[string]time.Time
}

// due reports whether k was not logged for changeLogEvery, and notes it
// logged now.
func (l *logTimes) due(k string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if t, ok := l.m[k]; ok && now.Sub(t) < changeLogEvery {
		return false
	}
	if len(l.m) >= 1000 {
		clear(l.m)
	}
	l.m[k] = now
	return true
}

// checkedFile reads a library file block by block, each checked before
// any of its bytes are returned; after a mismatch every read fails.
type checkedFile struct {
	f      *os.File
	size   int64
	fi     os.FileInfo // as opened: the size and mtime that were hashed
	leaves []cid.Cid   // the blocks' CIDs; nil when the index has none
	pos    int64
	buf    []byte // block at, checked
	at     int64  // -1: none
	fail   func(why string) error
	err    error
}

func (c *checkedFile) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.pos >= c.size {
		return 0, io.EOF
	}
	i := c.pos / dag.ChunkSize
	if i != c.at {
		if err := c.load(i); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.buf[c.pos-i*dag.ChunkSize:])
	c.pos += int64(n)
	return n, nil
}

// load reads block i and checks it.
func (c *checkedFile) load(i int64) error {
	c.at = -1
	start := i * dag.ChunkSize
	if c.buf == nil {
		c.buf = make([]byte, dag.ChunkSize)
	}
	b := c.buf[:min(dag.ChunkSize, c.size-start)]
	if c.leaves == nil {
		fi, err := c.f.Stat()
		if err != nil {
			return err
		}
		if fi.Size() != c.fi.Size() || !fi.ModTime().Equal(c.fi.ModTime()) {
			return c.failed("its size or mtime moved while it was served")
		}
	}
	if _, err := c.f.ReadAt(b, start); err != nil {
		if errors.Is(err, io.EOF) {
			return c.failed("it is shorter than it was")
		}
		return err
	}
	if c.leaves != nil && !leafMatches(c.leaves[i], b) {
		return c.failed(fmt.Sprintf("bytes %d to %d no longer hash to block %s", start, start+int64(len(b))-1, c.leaves[i]))
	}
	c.buf, c.at = b, i
	return nil
}

func (c *checkedFile) failed(why string) error {
	c.err = c.fail(why)
	return c.err
}

// leafMatches reports whether b hashes to the raw sha2-256 leaf l.
func leafMatches(l cid.Cid, b []byte) bool {
	dec, err := multihash.Decode(l.Hash())
	if err != nil || dec.Code != multihash.SHA2_256 {
		return false
	}
	sum := sha256.Sum256(b)
	return bytes.Equal(dec.Digest, sum[:])
}

func (c *checkedFile) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += c.pos
	case io.SeekEnd:
		offset += c.size
	default:
		return 0, fmt.Errorf("seek: whence %d", whence)
	}
	if offset < 0 {
		return 0, fmt.Errorf("seek: position %d before the start", offset)
	}
	c.pos = offset
	return offset, nil
}

func (c *checkedFile) Close() error { return c.f.Close() }
