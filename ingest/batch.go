package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"

	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// Scanning many small files is a matter of round trips, not hashing. A
// batch of settled scan paths is looked up in one pipeline; each new file
// of at most smallFile bytes is read whole once (its midhash sample is
// the whole file), hashed and extracted in memory, and all of them go to
// the store in one pipelined round trip (store.IngestBatch: arrive,
// confirm and metadata in one script per file). Everything else (large,
// changed or racing files) takes the path-by-path route.
const (
	smallFile = 1 << 20 // a midhash of a file this size reads it whole
	batchSize = 64      // paths per batch job
	dagChunk  = 256 << 10
)

// batch runs the paths of one batch job and returns those to look at
// again once they settle.
func (in *Ingester) batch(ctx context.Context, items []job) (retry []string) {
	paths := make([]string, len(items))
	for i, it := range items {
		paths[i] = it.path
	}
	states, err := retryGet(ctx, in, "read paths", func() (map[string]store.PathState, error) { return in.st.Paths(ctx, paths) })
	if err != nil {
		return in.oneByOne(ctx, paths)
	}
	var fast []store.IngestItem
	var slow []func() error
	var slowPaths []string
	later := func(p string, fn func() error) {
		slow = append(slow, fn)
		slowPaths = append(slowPaths, p)
	}
	for _, p := range paths {
		cur, ok := in.fileStat(p, nil)
		st, known := states[p]
		switch {
		case !ok || Skipped(p) || (in.cfg.ReleaseOutside && !in.inLibrary(p)):
			if known {
				later(p, func() error { return in.remove(ctx, p, true) })
			}
		case known && st.Size == cur.Size && st.MtimeNs == cur.MtimeNs && st.Hashed && (!st.Primary || st.Extracted >= extractVersion):
			in.errs.clear(p) // unchanged and complete
		case known:
			later(p, func() error { return in.known(ctx, cur, st, true) })
		case cur.Size > smallFile:
			later(p, func() error { return in.arrive(ctx, cur, true) })
		default:
			h, data, err := in.readSmall(ctx, cur)
			if err != nil {
				later(p, func() error { return in.fail(ctx, p, err, true) })
				continue
			}
			fast = append(fast, store.IngestItem{File: cur, Hashes: h, Meta: in.meta(ctx, p, cur.Size, data)})
		}
	}
	if len(fast) > 0 {
		res, err := retryGet(ctx, in, "ingest", func() ([]store.IngestResult, error) { return in.st.IngestBatch(ctx, fast) })
		if err != nil {
			return append(retry, in.oneByOne(ctx, paths)...)
		}
		for i, r := range res {
			p := fast[i].File.Path
			switch {
			case r.Err == nil && (r.Kind == store.KindConfirmed || r.Kind == store.KindMerged || r.Kind == store.KindSplit):
				in.errs.clear(p)
				in.note(true, "ingested", "path", p, "result", r.Kind)
			default: // a duplicate of an unconfirmed primary, a race: one by one
				later(p, func() error { return in.file(ctx, p, true) })
			}
		}
	}
	for i, fn := range slow {
		if in.settleErr(slowPaths[i], fn(), ctx) {
			retry = append(retry, slowPaths[i])
		}
	}
	return retry
}

// oneByOne runs paths through the path-by-path route.
func (in *Ingester) oneByOne(ctx context.Context, paths []string) (retry []string) {
	for _, p := range paths {
		if in.settleErr(p, in.file(ctx, p, true), ctx) {
			retry = append(retry, p)
		}
	}
	return retry
}

// readSmall reads a small file whole, once, and computes its three CIDs
// from memory: the midhash sample is the whole file, and up to one UnixFS
// chunk the IPFS CID is the sha2-256 CID. It returns the bytes too, for
// the extractors. A file that changes while it is read is
// ErrChangedWhileHashing.
func (in *Ingester) readSmall(ctx context.Context, cur store.FileStat) (store.Hashes, []byte, error) {
	f, err := in.open(cur.Path)
	if err != nil {
		return store.Hashes{}, nil, err
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return store.Hashes{}, nil, err
	}
	if before.Size() != cur.Size || before.ModTime().UnixNano() != cur.MtimeNs {
		return store.Hashes{}, nil, ErrChangedWhileHashing
	}
	buf := make([]byte, cur.Size+1)
	n, err := io.ReadFull(f, buf)
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
	data := buf[:n]
	mid, err := protocol.Midhash256(bytes.NewReader(data), cur.Size)
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
	in.prog.update(func(p *Progress) { p.Hashed++ })
	return h, data, nil
}
