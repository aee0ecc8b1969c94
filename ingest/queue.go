package ingest

import (
	"context"
	"sync"
	"time"

	"github.com/metamesh/node/store"
)

// jobKind says what a worker does with a path.
type jobKind int

const (
	jobFile   jobKind = iota // stat the path: arrive, change, resume or remove
	jobRename                // a settled move: oldPath → path (replacing a known path)
	jobSettle                // pair the settled paths of one flush into moves
	jobGone                  // a directory went: look at every stored path under it
	jobBatch                 // settled scan paths, handled together (batch.go)
	jobRelink                // a video's name, NFO and sidecar link fields read again (relink.go)
)

type job struct {
	kind     jobKind
	path     string
	oldPath  string
	fromScan bool           // counts towards scan progress
	size     int64          // as walked, for progress
	stat     store.FileStat // as walked, in a jobBatch item (Path "" when not)
	batch    *settleBatch   // jobSettle
	items    []job          // jobBatch: its paths, each a scan jobFile
}

// settleBatch is what one flush hands a worker to pair: vanished and
// arrived paths that settled together, their pending state (the loop no
// longer owns it), and the size and mtime of paths still settling.
type settleBatch struct {
	gone, arrived []string
	pends         map[string]*pend
	settling      map[sizeKey]bool
	now           time.Time
}

type sizeKey struct{ size, mtime int64 }

// paths a job occupies while it runs: no other job for them starts.
func (j job) paths() []string {
	switch j.kind {
	case jobRename:
		return []string{j.oldPath, j.path}
	case jobSettle:
		return append(append([]string(nil), j.batch.gone...), j.batch.arrived...)
	case jobBatch:
		out := make([]string, len(j.items))
		for i, it := range j.items {
			out[i] = it.path
		}
		return out
	}
	return []string{j.path}
}

// queue is an unbounded FIFO: the event loop never blocks handing out
// work, and workers never block handing results back.
type queue struct {
	mu     sync.Mutex
	items  []job
	notify chan struct{}
}

func newQueue() *queue { return &queue{notify: make(chan struct{}, 1)} }

func (q *queue) push(j job) {
	q.mu.Lock()
	q.items = append(q.items, j)
	q.mu.Unlock()
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

func (q *queue) pop(ctx context.Context) (job, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			j := q.items[0]
			q.items[0] = job{}
			q.items = q.items[1:]
			more := len(q.items) > 0
			q.mu.Unlock()
			if more { // wake the next worker
				select {
				case q.notify <- struct{}{}:
				default:
				}
			}
			return j, true
		}
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			return job{}, false
		case <-q.notify:
		}
	}
}
