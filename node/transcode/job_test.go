package transcode

import (
	"strings"
	"testing"
)

// TestFollow: ffmpeg's -progress lines give the stream's speed and how
// far it is made; slower than it plays, it is slow while it runs.
func TestFollow(t *testing.T) {
	tests := []struct {
		progress string
		done     bool
		want     Status
	}{
		{"frame=10\nout_time_us=2500000\nspeed=0.48x\nprogress=continue\n", false,
			Status{Mode: string(ModeVideo), Start: 30, Running: true, Speed: 0.48, Made: 32.5, Slow: true}},
		{"out_time_us=N/A\nspeed=N/A\nprogress=continue\nout_time_us=1000000\nspeed=3.5x\n", false,
			Status{Mode: string(ModeVideo), Start: 30, Running: true, Speed: 3.5, Made: 31}},
		{"out_time_us=4000000\nspeed=0.9x\nprogress=end\n", true,
			Status{Mode: string(ModeVideo), Start: 30, Done: true, Speed: 0.9, Made: 34}},
	}
	for _, tt := range tests {
		j := newJob("k", Request{Plan: Plan{Mode: ModeVideo}, Start: 30}, "")
		j.follow(strings.NewReader(tt.progress))
		if tt.done {
			j.finish(nil)
		}
		if got := j.status(); got != tt.want {
			t.Errorf("after %q: %+v, want %+v", tt.progress, got, tt.want)
		}
	}
}
