package node_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/node"
)

// TestAPI_StreamPeerFile: a file only a peer has, HEVC and AC-3, is
// converted as a local one is: ffmpeg reads it as GET /api/file streams
// it from the household that shares it (over bitswap), and the stream is
// H.264 and AAC in MP4 as long as the film.
func TestAPI_StreamPeerFile(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	clip := filepath.Join(lib, "Movies", "Far (2020)", "Far.2020.mkv")
	writeMedia(t, clip, 20, "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error", "-c:a", "ac3")
	sharing := startNodeWith(t, lib, func(c *node.Config) { c.ShareFiles = true })
	b := p2pNode(t, nil)
	if err := connect(b, sharing); err != nil {
		t.Fatal(err)
	}
	c := canonicalOf(t, clip)
	var doc api.Document
	getJSON(t, b, "/api/meta/"+c, &doc) // the record, from the peer

	resp, body := do(t, b, "GET", "/api/stream/"+c+"?video=0&audio=0", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != `video/mp4; codecs="avc1.640028,mp4a.40.2"` {
		t.Fatalf("GET /api/stream of a peer's file: %s %s: %.300s", resp.Status, resp.Header.Get("Content-Type"), body)
	}
	out := filepath.Join(t.TempDir(), "stream.mp4")
	if err := os.WriteFile(out, body, 0o600); err != nil {
		t.Fatal(err)
	}
	probe, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "stream=codec_name:format=duration", "-of", "csv=p=0", out).Output()
	if err != nil {
		t.Fatalf("ffprobe of the stream: %v", err)
	}
	lines := strings.Fields(string(probe))
	if len(lines) != 3 || lines[0] != "h264" || lines[1] != "aac" {
		t.Fatalf("the stream holds %q, want h264, aac and a duration", lines)
	}
	if d, _ := strconv.ParseFloat(lines[2], 64); d < 19 {
		t.Errorf("the stream lasts %s s, want the film's 20", lines[2])
	}
	var st api.StreamStatus
	getJSON(t, b, "/api/stream/"+c+"/status", &st)
	if st.Stream == nil || st.Stream.Mode != "video" || !st.Stream.Done || st.Stream.Speed <= 0 || st.Transcodes != 0 {
		t.Errorf("status of the stream made: %+v %+v", st, st.Stream)
	}
}
