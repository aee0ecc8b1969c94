package ingest

import (
	"sync"
	"time"

	"github.com/metamesh/node/model"
)

// Scan states.
const (
	StateStarting = "starting" // not scanned yet
	StateScanning = "scanning" // walking the library
	StateHashing  = "hashing"  // walked; hashing what changed
	StateWatching = "watching" // in sync, following fsnotify events
	StatePolling  = "polling"  // in sync, rescanning periodically (watching incomplete)
	StateIdle     = "idle"     // in sync, not watching (one-shot scan)
	StateStopped  = "stopped"
)

// Progress of the current (or last) full scan (the wire's type,
// model.ScanProgress: Status.Scan).
type Progress = model.ScanProgress

type progress struct {
	mu sync.Mutex
	p  Progress
	// hashedAt is when BytesHashed last grew.
	hashedAt time.Time
}

// lastHashed is when a worker last hashed a byte.
func (p *progress) lastHashed() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hashedAt
}

func (p *progress) get() Progress {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.p
	end := out.FinishedAt
	if end.IsZero() {
		end = time.Now()
	}
	if el := end.Sub(out.StartedAt).Seconds(); el > 0 && !out.StartedAt.IsZero() {
		out.Rate = float64(out.BytesDone) / el
		out.FilesRate = float64(out.FilesDone) / el
		out.HashRate = float64(out.BytesHashed) / el
	}
	return out
}

func (p *progress) update(fn func(*Progress)) {
	p.mu.Lock()
	before := p.p.BytesHashed
	fn(&p.p)
	if p.p.BytesHashed != before {
		p.hashedAt = time.Now()
	}
	p.mu.Unlock()
}
