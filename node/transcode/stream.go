package transcode

import (
	"context"
	"io"
	"os"
	"time"
)

// poll is how often a player waiting for more of a stream looks at its
// file, besides being woken by ffmpeg's progress.
const poll = 250 * time.Millisecond

// Stream is a player's reading of a stream: its bytes as ffmpeg writes
// them, to the end once ffmpeg is done. Read and Close are for one
// goroutine.
type Stream struct {
	ctx    context.Context
	f      *os.File
	j      *job
	m      *Manager // nil for a stream kept whole
	closed bool
}

// Read reads what is made, waiting for more while ffmpeg runs (until
// the Stream's context ends); io.EOF once the stream is whole, ffmpeg's
// error when it failed.
func (s *Stream) Read(p []byte) (int, error) {
	for {
		n, err := s.f.Read(p)
		if n > 0 || (err != nil && err != io.EOF) {
			return n, err
		}
		done, jerr, changed := s.j.state()
		if done {
			// What ffmpeg wrote last, before it ended, is read first.
			if n, err := s.f.Read(p); n > 0 || err != io.EOF {
				return n, err
			}
			if jerr != nil {
				return 0, jerr
			}
			return 0, io.EOF
		}
		t := time.NewTimer(poll)
		select {
		case <-changed:
		case <-t.C:
		case <-s.ctx.Done():
			t.Stop()
			return 0, s.ctx.Err()
		}
		t.Stop()
	}
}

// Status is the stream's Status.
func (s *Stream) Status() Status { return s.j.status() }

// Close ends the player's reading; the last player of a stream being
// made stops its ffmpeg.
func (s *Stream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.m != nil {
		s.m.leave(s.j)
	}
	return s.f.Close()
}

// leave is a player of j gone.
func (m *Manager) leave(j *job) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if j.refs--; j.refs <= 0 {
		j.cancel()
	}
}
