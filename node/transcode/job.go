package transcode

import (
	"github.com/metamesh/node/model"

	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Status is what is known of a stream: how it is made, and how fast
// (Note is left to the API).
type Status = model.StreamState

// job is one stream: made by one ffmpeg into a file of Dir (read by its
// players as it grows), or kept from before.
type job struct {
	key    string
	req    Request
	path   string // the file the players read
	cancel context.CancelFunc
	cached bool
	refs   int // players reading it (under Manager.mu)

	mu      sync.Mutex
	speed   float64
	made    float64
	done    bool
	err     error
	changed chan struct{} // closed and replaced when anything changes
}

func newJob(key string, req Request, path string) *job {
	return &job{key: key, req: req, path: path, cancel: func() {}, changed: make(chan struct{})}
}

// start starts key's ffmpeg, under m.mu, holding a slot that it gives
// back when ffmpeg ends.
func (m *Manager) start(key string, req Request) (*job, error) {
	part := filepath.Join(m.cfg.Dir, key+partExt)
	if err := os.WriteFile(part, nil, 0o600); err != nil {
		return nil, fmt.Errorf("transcode: %w", err)
	}
	in, err := m.in.add(req.Open)
	if err != nil {
		os.Remove(part)
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	j := newJob(key, req, part)
	j.cancel = cancel
	name, a := m.cfg.FFmpeg, args(in.url, part, req.Source, req.Plan, req.Start)
	if m.nice != "" {
		name, a = m.nice, append([]string{"-n", "10", m.cfg.FFmpeg}, a...)
	}
	cmd := exec.CommandContext(ctx, name, a...)
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: 4 << 10}
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		cancel()
		in.remove()
		os.Remove(part)
		return nil, fmt.Errorf("transcode: starting ffmpeg: %w", err)
	}
	m.jobs[key] = j
	m.last[req.CID] = j
	m.running++
	m.log.Info("transcode started", "cid", req.CID, "mode", req.Plan.Mode, "start", req.Start, "pid", cmd.Process.Pid)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		j.follow(out)
		err := cmd.Wait()
		in.remove()
		if err != nil {
			if ctx.Err() != nil {
				err = errors.New("stopped: no player reads it any more")
			} else {
				err = fmt.Errorf("ffmpeg: %w: %s", err, strings.TrimSpace(stderr.String()))
			}
		}
		m.ended(j, err)
	}()
	return j, nil
}

// ended records that j's ffmpeg ended with err: a whole stream goes to
// the cache, a half-made one is removed (its players read on from the
// file they hold open, and then get err).
func (m *Manager) ended(j *job, err error) {
	if err == nil {
		final := filepath.Join(m.cfg.Dir, j.key+keptExt)
		if rerr := os.Rename(j.path, final); rerr != nil {
			err = fmt.Errorf("keeping the stream: %w", rerr)
		} else {
			m.cache.add(j.key, final)
		}
	}
	if err != nil {
		os.Remove(j.path)
		m.log.Info("transcode ended", "cid", j.req.CID, "mode", j.req.Plan.Mode, "err", err)
	} else {
		m.log.Info("transcode done", "cid", j.req.CID, "mode", j.req.Plan.Mode, "speed", j.status().Speed)
	}
	j.finish(err)
	m.mu.Lock()
	delete(m.jobs, j.key)
	m.running--
	m.mu.Unlock()
	m.release()
}

// follow reads ffmpeg's -progress lines until it closes them.
func (j *job) follow(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		switch k {
		case "speed":
			if s, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(v, "x")), 64); err == nil {
				j.update(func() { j.speed = s })
			}
		case "out_time_us":
			if us, err := strconv.ParseInt(v, 10, 64); err == nil && us >= 0 {
				j.update(func() { j.made = j.req.Start + float64(us)/1e6 })
			}
		}
	}
	_, _ = io.Copy(io.Discard, r)
}

func (j *job) update(f func()) {
	j.mu.Lock()
	f()
	close(j.changed)
	j.changed = make(chan struct{})
	j.mu.Unlock()
}

func (j *job) finish(err error) {
	j.update(func() { j.done, j.err = true, err })
}

// state is whether j is done, with its error, and the channel closed at
// its next change.
func (j *job) state() (bool, error, <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.done, j.err, j.changed
}

func (j *job) status() Status {
	j.mu.Lock()
	defer j.mu.Unlock()
	st := Status{Mode: string(j.req.Plan.Mode), Start: j.req.Start, Running: !j.done, Done: j.done && j.err == nil,
		Cached: j.cached, Speed: j.speed, Made: j.made}
	st.Slow = st.Running && j.speed > 0 && j.speed < 1
	if j.err != nil {
		st.Error = j.err.Error()
	}
	return st
}

// reader is a new player of j, under Manager.mu.
func (j *job) reader(ctx context.Context, m *Manager) (*Stream, error) {
	f, err := os.Open(j.path)
	if err != nil {
		return nil, fmt.Errorf("transcode: %w", err)
	}
	j.refs++
	return &Stream{ctx: ctx, f: f, j: j, m: m}, nil
}

// limitedWriter keeps the first n bytes written to w.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
