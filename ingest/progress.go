package ingest

import (
	"sync"
	"time"
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

// Progress of the current (or last) full scan.
type Progress struct {
	State      string    `json:"state"`
	FilesDone  int64     `json:"filesDone"`
	FilesTotal int64     `json:"filesTotal"`
	BytesDone  int64     `json:"bytesDone"`
	BytesTotal int64     `json:"bytesTotal"`
	Rate       float64   `json:"bytesPerSecond"`
	FilesRate  float64   `json:"filesPerSecond"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	Errors     int64     `json:"errors"`
	// Hashed counts full hash passes since the scan started.
	Hashed int64 `json:"hashed"`
	// BytesHashed counts the bytes read by full hash passes, as they are
	// read; HashRate is BytesHashed per second of the scan (unchanged
	// files cost nothing, so this is what hashing really runs at).
	BytesHashed int64   `json:"bytesHashed"`
	HashRate    float64 `json:"hashBytesPerSecond"`
	// BytesInFlight are the bytes already read of files still being
	// hashed: BytesDone + BytesInFlight moves while a large file is read.
	BytesInFlight int64 `json:"bytesInFlight"`
}

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
