package transcode

import "strconv"

// args are ffmpeg's arguments for p's stream of src read from in,
// starting start seconds in, written to out as fragmented MP4 (an
// empty moov, a fragment at every keyframe and at least every second;
// its times start at 0 whatever start is, so the page places it), with
// its progress as key=value lines on stdout.
func args(in, out string, src Source, p Plan, start float64) []string {
	a := []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-nostats", "-progress", "pipe:1"}
	if start > 0 {
		a = append(a, "-ss", seconds(start))
	}
	a = append(a, "-i", in, "-map", "0:V:0?", "-map", "0:a:0?", "-sn", "-dn", "-map_metadata", "-1")
	switch {
	case p.CopyVideo:
		a = append(a, "-c:v", "copy")
		if src.Video == "hevc" {
			a = append(a, "-tag:v", "hvc1")
		}
	default:
		a = append(a, "-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-pix_fmt", "yuv420p",
			"-profile:v", "high", "-vf", "scale=trunc(iw/2)*2:trunc(ih/2)*2")
	}
	if p.CopyAudio {
		a = append(a, "-c:a", "copy")
	} else {
		a = append(a, "-c:a", "aac", "-b:a", "160k", "-ac", "2")
	}
	return append(a, "-f", "mp4", "-movflags", "frag_keyframe+empty_moov+default_base_moof",
		"-frag_duration", "1000000", "-y", out)
}

func seconds(s float64) string { return strconv.FormatFloat(s, 'f', 3, 64) }
