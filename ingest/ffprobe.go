package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"time"

	"github.com/metamesh/node/store"
)

// FFprobe runs ffprobe on audio and video files and writes
// fileinfo/duration, fileinfo/formatName and
// fileinfo/streamdetails/{video,audio,subtitle,embeddedimage}/N/….
type FFprobe struct {
	bin     string
	timeout time.Duration
}

// NewFFprobe finds ffprobe on PATH.
func NewFFprobe() (*FFprobe, error) {
	bin, err := exec.LookPath("ffprobe")
	if err != nil {
		return nil, err
	}
	return &FFprobe{bin: bin, timeout: 30 * time.Second}, nil
}

// Name implements Extractor.
func (*FFprobe) Name() string { return "ffprobe" }

type probeOutput struct {
	Format struct {
		Duration   string `json:"duration"`
		FormatName string `json:"format_name"`
	} `json:"format"`
	Streams []struct {
		CodecType   string            `json:"codec_type"`
		CodecName   string            `json:"codec_name"`
		Profile     string            `json:"profile"`
		Width       int               `json:"width"`
		Height      int               `json:"height"`
		Aspect      string            `json:"display_aspect_ratio"`
		BitRate     string            `json:"bit_rate"`
		Level       int               `json:"level"`
		Channels    int               `json:"channels"`
		SampleRate  string            `json:"sample_rate"`
		Tags        map[string]string `json:"tags"`
		Disposition map[string]int    `json:"disposition"`
	} `json:"streams"`
}

// Extract implements Extractor.
func (f *FFprobe) Extract(ctx context.Context, s *Subject) (map[string]string, error) {
	if s.FileType != "video" && s.FileType != "audio" || s.ByName {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, f.bin, "-v", "error", "-print_format", "json",
		"-show_format", "-show_streams", "--", s.Path).Output()
	if err != nil {
		return nil, fmt.Errorf("ffprobe: %w", err)
	}
	return parseProbe(out)
}

func parseProbe(out []byte) (map[string]string, error) {
	var p probeOutput
	if err := json.Unmarshal(out, &p); err != nil {
		return nil, fmt.Errorf("ffprobe output: %w", err)
	}
	fi := map[string]any{}
	if p.Format.Duration != "" {
		fi["duration"] = p.Format.Duration
	}
	if p.Format.FormatName != "" {
		fi["formatName"] = p.Format.FormatName
	}
	details := map[string][]any{}
	for _, st := range p.Streams {
		m := map[string]any{}
		put := func(k, v string) {
			if v != "" && v != "0" && v != "N/A" {
				m[k] = v
			}
		}
		kind := st.CodecType
		switch {
		case kind == "video" && st.Disposition["attached_pic"] == 1:
			kind = "embeddedimage"
			put("type", "cover")
			put("codec", st.CodecName)
		case kind == "video":
			put("codec", st.CodecName)
			put("width", strconv.Itoa(st.Width))
			put("height", strconv.Itoa(st.Height))
			put("aspect", st.Aspect)
			put("bitrate", st.BitRate)
			put("profile", st.Profile)
			if st.Level >= 0 { // ffprobe says -99 for a codec without levels (VP9)
				put("level", strconv.Itoa(st.Level))
			}
		case kind == "audio":
			put("codec", st.CodecName)
			put("language", st.Tags["language"])
			put("channels", strconv.Itoa(st.Channels))
			put("bitrate", st.BitRate)
			put("samplerate", st.SampleRate)
		case kind == "subtitle":
			put("language", st.Tags["language"])
			put("format", st.CodecName)
		default:
			continue
		}
		details[kind] = append(details[kind], m)
	}
	if len(details) > 0 {
		fi["streamdetails"] = details
	}
	if len(fi) == 0 {
		return nil, nil
	}
	return store.Flatten("fileinfo", fi), nil
}
