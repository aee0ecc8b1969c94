package node

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/node/stills"
	"github.com/metamesh/node/store"
)

// openStills makes the videos' stills' Maker when Config.Stills is on
// and ffmpeg is on the PATH; without ffmpeg it says once that stills are
// off, and why.
func (n *Node) openStills() error {
	if !n.cfg.Stills {
		return nil
	}
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		n.log.Warn("stills are off: ffmpeg is not on the PATH (install ffmpeg, or run with --stills=false to say so)", "err", err)
		return nil
	}
	n.stills, err = stills.New(stills.Config{Dir: filepath.Join(n.cfg.DataDir, "stills"), FFmpeg: ffmpeg, Store: n.st,
		Ready: n.firstScanDone, Logger: n.log})
	return err
}

// stillsConsumers are the store's consumers the stills add: none when off.
func (n *Node) stillsConsumers() []store.Consumer {
	if n.stills == nil {
		return nil
	}
	return []store.Consumer{n.stills.Consumer()}
}

// runStills runs the stills' worker until bg ends (Close).
func (n *Node) runStills(bg context.Context) {
	if n.stills == nil {
		return
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.stills.Run(bg)
	}()
}

// firstScanDone reports whether ingest's first scan of the libraries is
// done: stills are made after it.
func (n *Node) firstScanDone() bool {
	if n.ing == nil {
		return false
	}
	switch n.ing.Progress().State {
	case ingest.StateWatching, ingest.StatePolling, ingest.StateIdle:
		return true
	}
	return false
}

// openStill opens the still CID c names for its thumbnail; ok is false
// when the node holds no still of that CID.
func (n *Node) openStill(c string) (io.ReadCloser, bool, error) {
	if n.stills == nil {
		return nil, false, nil
	}
	f, err := n.stills.Open(c)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	return f, err == nil, err
}
