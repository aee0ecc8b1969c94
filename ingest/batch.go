package ingest

import (
	"context"

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
	chunkSize = 16      // new small files per store round trip
	dagChunk  = 256 << 10
)

// batch runs the paths of one batch job and returns those to look at
// again once they settle, and those the store already had as they are.
func (in *Ingester) batch(ctx context.Context, items []job) (retry, unchanged []string) {
	paths := make([]string, len(items))
	for i, it := range items {
		paths[i] = it.path
	}
	states, err := retryGet(ctx, in, "read paths", func() (map[string]store.PathState, error) { return in.st.Paths(ctx, paths) })
	if err != nil {
		return in.oneByOne(ctx, paths), nil
	}
	var slow []func() error
	var slowPaths []string
	later := func(p string, fn func() error) {
		slow = append(slow, fn)
		slowPaths = append(slowPaths, p)
	}
	// New small files go to the store in chunks, each sent while the next
	// is read and hashed, so reading and the store's work overlap.
	type chunk struct {
		items []store.IngestItem
		res   []store.IngestResult
		err   error
		done  chan struct{}
	}
	var sent []*chunk
	var fast []store.IngestItem
	var buf []byte // one read buffer for the batch
	send := func() {
		c := &chunk{items: fast, done: make(chan struct{})}
		fast = nil
		sent = append(sent, c)
		go func() {
			defer close(c.done)
			c.res, c.err = retryGet(ctx, in, "ingest", func() ([]store.IngestResult, error) { return in.st.IngestBatch(ctx, c.items) })
		}()
	}
	for _, it := range items {
		// The walk's stat is recent; readSmall checks it again against
		// the open file.
		p, cur, ok := it.path, it.stat, it.stat.Path != ""
		if !ok {
			cur, ok = in.fileStat(p, nil)
		}
		st, known := states[p]
		switch {
		case !ok || Skipped(p) || (in.cfg.ReleaseOutside && !in.inLibrary(p)):
			if known {
				later(p, func() error { return in.remove(ctx, p, true) })
			}
		case known && st.Size == cur.Size && st.MtimeNs == cur.MtimeNs && st.Hashed && (!st.Primary || st.Extracted >= extractVersion):
			in.errs.clear(p) // unchanged and complete
			unchanged = append(unchanged, p)
		case known && st.Size == cur.Size && st.MtimeNs == cur.MtimeNs && st.Hashed:
			// Unchanged, its metadata older than the extractors: extracted
			// again, and, a sidecar, its videos' links are as they were.
			unchanged = append(unchanged, p)
			later(p, func() error { return in.known(ctx, cur, st, true) })
		case known:
			later(p, func() error { return in.known(ctx, cur, st, true) })
		case cur.Size > smallFile:
			later(p, func() error { return in.arrive(ctx, cur, true) })
		default:
			h, data, err := in.readSmall(ctx, cur, &buf)
			if err != nil {
				later(p, func() error { return in.fail(ctx, p, err, true) })
				continue
			}
			fast = append(fast, store.IngestItem{File: cur, Hashes: h, Meta: in.meta(ctx, p, cur.Size, data)})
			if len(fast) == chunkSize {
				send()
			}
		}
	}
	if len(fast) > 0 {
		send()
	}
	for _, c := range sent {
		<-c.done
		if c.err != nil {
			for _, it := range c.items {
				p := it.File.Path
				later(p, func() error { return in.file(ctx, p, true) })
			}
			continue
		}
		for i, r := range c.res {
			p := c.items[i].File.Path
			switch {
			case r.Err == nil && (r.Kind == store.KindConfirmed || r.Kind == store.KindMerged || r.Kind == store.KindSplit):
				in.errs.clear(p)
				in.note("ingested", "path", p, "result", r.Kind)
				in.applied(true, changeAdded, p, "")
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
	return retry, unchanged
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
