package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/node/transcode"
)

// openTranscodes makes the streams' Manager (node/transcode) when ffmpeg
// is on the PATH; without it the page plays only what the browser
// plays as it is, and says so.
func (n *Node) openTranscodes() error {
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		n.log.Warn("streams for browsers that cannot play a file are off: ffmpeg is not on the PATH (install ffmpeg)", "err", err)
		return nil
	}
	n.tc, err = transcode.New(transcode.Config{Dir: filepath.Join(n.cfg.DataDir, "transcode"), FFmpeg: ffmpeg,
		Max: n.cfg.Transcodes, CacheBytes: n.cfg.TranscodeCache, Logger: n.log})
	return err
}

// closeTranscodes stops every ffmpeg: their players' answers end.
func (n *Node) closeTranscodes() error {
	if n.tc == nil {
		return nil
	}
	return n.tc.Close()
}

// Transcodes is how many ffmpeg processes make streams now.
func (n *Node) Transcodes() int {
	if n.tc == nil {
		return 0
	}
	return n.tc.Running()
}

var errNoTranscodes = fmt.Errorf("%w: this node makes no streams: ffmpeg is not on its PATH", api.ErrNotFound)

// Stream opens the stream of a file the browser cannot play as it is
// (api.Streamer).
func (b *backend) Stream(ctx context.Context, req api.StreamRequest) (io.ReadCloser, string, error) {
	tc := b.n.tc
	if tc == nil {
		return nil, "", errNoTranscodes
	}
	src := sourceOf(req.Source)
	plan := transcode.Decide(src, transcode.Browser{Video: req.Video, Audio: req.Audio})
	s, err := tc.Open(ctx, transcode.Request{CID: req.CID, Source: src, Plan: plan, Start: req.Start, Open: req.Open})
	if errors.Is(err, transcode.ErrBusy) {
		return nil, "", fmt.Errorf("%w: all %d transcodes (--transcodes) make streams for other players: %v; try again when one stops", api.ErrStreamsBusy, tc.Max(), err)
	}
	if err != nil {
		return nil, "", err
	}
	return s, transcode.ContentType(src, plan), nil
}

// StreamStatus says what the browser is asked about for a file and how
// its latest stream is made (api.Streamer).
func (b *backend) StreamStatus(cid string, source api.StreamSource) api.StreamStatus {
	src := sourceOf(source)
	st := api.StreamStatus{CID: cid, Source: source}
	st.VideoType, st.AudioType = transcode.Types(src)
	tc := b.n.tc
	if tc == nil {
		return st
	}
	st.Transcodes, st.Max = tc.Running(), tc.Max()
	if s, ok := tc.Status(cid); ok {
		st.Stream = &s
		if s.Slow {
			st.Stream.Note = api.SlowNote(s.Speed)
		}
	}
	return st
}

func sourceOf(s api.StreamSource) transcode.Source {
	return transcode.Source{Container: s.Container, Video: s.Video, Audio: s.Audio}
}
