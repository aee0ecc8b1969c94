package stills

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// Width is the widest a still is, in pixels: a narrower video keeps its
// own width.
const Width = 640

// Nice is the niceness ffmpeg runs at, so that a still never competes
// with hashing or serving for a core.
const Nice = 10

// errNoFrame: ffmpeg ended without error and wrote no frame (the time
// asked for is past the end of the video).
var errNoFrame = errors.New("ffmpeg wrote no frame")

// at is where a still of a video of duration seconds is taken: a tenth
// of the way in, or FallbackAt when the duration is not known.
func at(duration float64) float64 {
	if duration > 0 {
		return duration / 10
	}
	return FallbackAt
}

// FallbackAt is where a still is taken, in seconds, in a video whose
// duration ffprobe did not find.
const FallbackAt = 3

// extract has ffmpeg write the frame at sec seconds of the video at
// path, scaled to at most Width pixels wide, as a JPEG file at out.
// ffmpeg runs niced (Nice) and ends with ctx.
func extract(ctx context.Context, ffmpeg, path string, sec float64, out string) error {
	cmd := exec.CommandContext(ctx, ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
		"-ss", strconv.FormatFloat(sec, 'f', 3, 64), "-i", "file:"+path,
		"-map", "0:v:0", "-frames:v", "1", "-vf", fmt.Sprintf("scale='min(%d,iw)':-2", Width),
		"-c:v", "mjpeg", "-q:v", "4", "-f", "image2", "file:"+out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start ffmpeg: %w", err)
	}
	// The child gets its niceness at once, before it decodes anything.
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, cmd.Process.Pid, Nice)
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("ffmpeg: %w", ctx.Err())
		}
		return fmt.Errorf("ffmpeg: %w: %s", err, lastLine(stderr.String()))
	}
	if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
		return errNoFrame
	}
	return nil
}

// lastLine is the last non-empty line of ffmpeg's error output, at most
// 200 bytes: what it says went wrong.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200]
	}
	if l == "" {
		return "no message"
	}
	return l
}
