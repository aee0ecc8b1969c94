package ingest

import (
	"slices"
	"sync"
	"time"
)

// busyJobs are the jobs the workers run now, with when each started.
type busyJobs struct {
	mu   sync.Mutex
	next int
	jobs map[int]busyJob
}

type busyJob struct {
	path  string
	since time.Time
}

// start records a job on path; done ends it.
func (b *busyJobs) start(path string) (done func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.jobs == nil {
		b.jobs = map[int]busyJob{}
	}
	id := b.next
	b.next++
	b.jobs[id] = busyJob{path: path, since: time.Now()}
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.jobs, id)
	}
}

// paths are the paths of the jobs running now.
func (b *busyJobs) paths() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, j := range b.jobs {
		out = append(out, j.path)
	}
	slices.Sort(out)
	return out
}

// oldest is the job running the longest, and whether there is one.
func (b *busyJobs) oldest() (busyJob, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var o busyJob
	found := false
	for _, j := range b.jobs {
		if !found || j.since.Before(o.since) {
			o, found = j, true
		}
	}
	return o, found
}

// Stuck reports a job that has run for longer than Config.StuckAfter
// while no byte was hashed for as long (a read blocked on a hung mount):
// its path and since when. A node that is stuck is not ready (/ready).
func (in *Ingester) Stuck() (path string, since time.Time, stuck bool) {
	j, ok := in.busy.oldest()
	if !ok || time.Since(j.since) < in.cfg.StuckAfter {
		return "", time.Time{}, false
	}
	if last := in.prog.lastHashed(); time.Since(last) < in.cfg.StuckAfter {
		return "", time.Time{}, false
	}
	return j.path, j.since, true
}
