package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	ipld "github.com/ipfs/go-ipld-format"

	"github.com/metamesh/node/dag"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// The reads of a library file's bytes: the midhash's samples, the full
// pass, a small file read whole once. Each opens the file through the
// ingester's file system (open.go) and checks that it did not change
// while it was read.

// midhashOf reads the midhash of the file at p.
func (in *Ingester) midhashOf(p string, size int64) (string, error) {
	f, err := in.fs.Open(p, readSample)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return MidhashFile(f, size)
}

// hash runs the full pass and makes sure the file did not change under
// it: same size and mtime before and after, and the path still names the
// same file. A mismatch is ErrChangedWhileHashing; nothing is stored.
func (in *Ingester) hash(ctx context.Context, path string, cur store.FileStat) (FileHashes, error) {
	before, err := os.Stat(path)
	if err != nil {
		return FileHashes{}, err
	}
	if before.Size() != cur.Size || before.ModTime().UnixNano() != cur.MtimeNs {
		return FileHashes{}, ErrChangedWhileHashing
	}
	var read int64
	start := time.Now()
	f, err := in.fs.Open(path, readFull)
	if err != nil {
		return FileHashes{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return FileHashes{}, err
	}
	var ds ipld.DAGService = dag.Discard{}
	if in.cfg.OnIndexed != nil {
		ds = dag.NewRecorder()
	}
	h, ix, err := hashOpen(ctx, path, f, fi, func(n int64) {
		read += n
		in.prog.update(func(p *Progress) { p.BytesHashed += n; p.BytesInFlight += n })
	}, ds)
	in.prog.update(func(p *Progress) {
		p.BytesInFlight -= read
		if err == nil {
			p.Hashed++
		}
	})
	if err != nil {
		return FileHashes{}, err
	}
	if in.cfg.OnHashed != nil {
		in.cfg.OnHashed(time.Since(start).Seconds())
	}
	after, err := os.Stat(path)
	if err != nil {
		return FileHashes{}, err
	}
	if !os.SameFile(before, after) || after.Size() != cur.Size || after.ModTime().UnixNano() != cur.MtimeNs || h.Size != cur.Size {
		return FileHashes{}, ErrChangedWhileHashing
	}
	if in.cfg.OnIndexed != nil && ix != nil {
		in.cfg.OnIndexed(path, ix)
	}
	return h, nil
}

// fail handles a hash failure: a file that vanished leaves the store
// (no root or CID for bytes that are gone); one that changed is retried
// once it settles; an unreadable one is logged and retried when it changes.
func (in *Ingester) fail(ctx context.Context, path string, err error, fromScan bool) error {
	if errors.Is(err, fs.ErrNotExist) {
		return in.remove(ctx, path, fromScan)
	}
	if errors.Is(err, ErrChangedWhileHashing) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ErrChangedWhileHashing
	}
	return err
}

// readSmall reads a small file whole, once, into buf (grown as needed)
// and computes its three CIDs from memory: the midhash sample is the whole
// file, and up to one UnixFS chunk the IPFS CID is the sha2-256 CID. It
// returns the bytes too, for the extractors; they live in buf. A file
// whose size or mtime differ from cur once read is ErrChangedWhileHashing.
func (in *Ingester) readSmall(ctx context.Context, cur store.FileStat, buf *[]byte) (store.Hashes, []byte, error) {
	start := time.Now()
	f, err := in.fs.Open(cur.Path, readWhole)
	if err != nil {
		return store.Hashes{}, nil, err
	}
	defer f.Close()
	if int64(cap(*buf)) < cur.Size+1 {
		*buf = make([]byte, cur.Size+1)
	}
	b := (*buf)[:cur.Size+1]
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return store.Hashes{}, nil, err
	}
	after, err := f.Stat()
	if err != nil {
		return store.Hashes{}, nil, err
	}
	if int64(n) != cur.Size || after.Size() != cur.Size || after.ModTime().UnixNano() != cur.MtimeNs {
		return store.Hashes{}, nil, ErrChangedWhileHashing
	}
	data := b[:n]
	mid, err := protocol.MidhashBytes(data)
	if err != nil {
		return store.Hashes{}, nil, err
	}
	h := store.Hashes{Midhash: mid.String()}
	if cur.Size <= dagChunk {
		sum := sha256.Sum256(data)
		c, err := protocol.SHA256CID(sum[:])
		if err != nil {
			return store.Hashes{}, nil, err
		}
		h.SHA256, h.IPFS = c.String(), c.String()
	} else {
		var m int64
		if m, h.SHA256, h.IPFS, err = FullHash(ctx, bytes.NewReader(data)); err != nil {
			return store.Hashes{}, nil, err
		}
		if m != cur.Size {
			return store.Hashes{}, nil, fmt.Errorf("%s: hashed %d bytes of %d", cur.Path, m, cur.Size)
		}
	}
	in.prog.update(func(p *Progress) { p.Hashed++; p.BytesHashed += cur.Size })
	if in.cfg.OnHashed != nil {
		in.cfg.OnHashed(time.Since(start).Seconds())
	}
	return h, data, nil
}
