package ingest

import "sync"

// errSet holds the paths (files and directories) that failed and have not
// been fixed since: scan.errors counts them, so it goes down again when a
// file becomes readable.
type errSet struct {
	mu sync.Mutex
	m  map[string]bool
}

func (e *errSet) add(p string) {
	e.mu.Lock()
	if e.m == nil {
		e.m = map[string]bool{}
	}
	e.m[p] = true
	e.mu.Unlock()
}

func (e *errSet) clear(p string) {
	e.mu.Lock()
	delete(e.m, p)
	e.mu.Unlock()
}

func (e *errSet) reset() {
	e.mu.Lock()
	e.m = nil
	e.mu.Unlock()
}

func (e *errSet) len() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return int64(len(e.m))
}
