package stills

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/store"
)

// Run makes the stills queued, one at a time, once Ready says the first
// scan is done, until ctx ends.
func (m *Maker) Run(ctx context.Context) {
	m.removeTemps()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for !m.cfg.Ready() {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
	for {
		r, j, ok := m.next()
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-m.wake:
			}
			continue
		}
		if err := m.do(ctx, r, j); err != nil {
			if ctx.Err() != nil {
				return
			}
			store.Pause(ctx, m.log, "linking a still", err)
			m.mu.Lock()
			if _, ok := m.jobs[r]; !ok {
				m.enqueue(r, j)
			}
			m.mu.Unlock()
		}
	}
}

// next takes the oldest job off the queue.
func (m *Maker) next() (store.RootID, job, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for len(m.order) > 0 {
		r := m.order[0]
		m.order = m.order[1:]
		if j, ok := m.jobs[r]; ok {
			delete(m.jobs, r)
			return r, j, true
		}
	}
	m.order = nil
	return "", job{}, false
}

// do makes root r's still and links it, or drops its link. A video
// ffmpeg makes no still of is remembered and logged, once; an error is
// the store's (the job is done again after a pause).
func (m *Maker) do(ctx context.Context, r store.RootID, j job) error {
	if j.drop {
		_, err := m.cfg.Store.SetStill(ctx, r, "")
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	}
	c, err := m.make(ctx, j)
	if err != nil {
		if ctx.Err() == nil {
			m.fail(j, err)
			m.mu.Lock()
			m.dequeue(r) // handed again meanwhile: it is remembered now
			m.mu.Unlock()
		}
		return nil
	}
	m.mu.Lock()
	m.fresh[c] = true
	m.mu.Unlock()
	changed, err := m.cfg.Store.SetStill(ctx, r, c)
	if err == nil && changed {
		m.log.Debug("still made", "path", j.path, "still", c)
		return nil
	}
	// Not linked (the root went, got a poster, or the write failed): the
	// file goes unless some root links it.
	m.mu.Lock()
	delete(m.fresh, c)
	if m.count[c] == 0 {
		m.remove(c)
	}
	m.mu.Unlock()
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// make has ffmpeg take the still of j's video into a temporary file,
// which is then named by its IPFS CID. Returns the CID.
func (m *Maker) make(ctx context.Context, j job) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	f, err := os.CreateTemp(m.cfg.Dir, ".tmp-*.jpg")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp) // nothing once renamed
	sec := at(j.duration)
	err = extract(ctx, m.cfg.FFmpeg, j.path, sec, tmp)
	if errors.Is(err, errNoFrame) {
		// Past the end (a duration not known, or wrong): the first frame.
		err = extract(ctx, m.cfg.FFmpeg, j.path, 0, tmp)
	}
	if err != nil {
		return "", err
	}
	f, err = os.Open(tmp)
	if err != nil {
		return "", err
	}
	_, _, c, err := ingest.FullHash(ctx, f)
	f.Close()
	if err != nil {
		return "", err
	}
	if err := os.Rename(tmp, m.path(c)); err != nil {
		return "", err
	}
	return c, nil
}

// failedFile lists the IPFS CIDs of the videos that gave no still, one a
// line, so that no start tries them again.
const failedFile = "failed.txt"

// fail remembers that j's video gives no still and says so, once.
func (m *Maker) fail(j job, err error) {
	m.log.Warn("no still of a video: it is not tried again", "path", j.path, "cid", j.video, "err", err)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.failed) >= MaxFailed {
		for c := range m.failed { // forget one: it is tried again some day
			delete(m.failed, c)
			break
		}
		m.writeFailed()
	}
	m.failed[j.video] = true
	f, err := os.OpenFile(filepath.Join(m.cfg.Dir, failedFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err == nil {
		_, err = fmt.Fprintln(f, j.video)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		m.log.Warn("stills: cannot remember a failure", "err", err)
	}
}

// loadFailed reads failedFile.
func (m *Maker) loadFailed() {
	f, err := os.Open(filepath.Join(m.cfg.Dir, failedFile))
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(m.failed) < MaxFailed {
		if c := strings.TrimSpace(sc.Text()); c != "" {
			m.failed[c] = true
		}
	}
}

// writeFailed writes failedFile anew from failed (temporary file and
// rename). Called with mu held.
func (m *Maker) writeFailed() {
	var b strings.Builder
	for c := range m.failed {
		b.WriteString(c + "\n")
	}
	p := filepath.Join(m.cfg.Dir, failedFile)
	tmp := p + ".tmp"
	err := os.WriteFile(tmp, []byte(b.String()), 0o600)
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		m.log.Warn("stills: cannot rewrite the failures", "err", err)
	}
}

// removeTemps removes the temporary files a stopped run left.
func (m *Maker) removeTemps() {
	ents, _ := os.ReadDir(m.cfg.Dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			os.Remove(filepath.Join(m.cfg.Dir, e.Name()))
		}
	}
}
