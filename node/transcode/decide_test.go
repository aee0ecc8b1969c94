package transcode

import "testing"

func TestDecide(t *testing.T) {
	tests := []struct {
		name string
		src  Source
		br   Browser
		want Plan
	}{
		{"container only: h264 and aac in MPEG-TS", Source{"mpegts", "h264", "aac"}, Browser{true, true}, Plan{ModeRemux, true, true}},
		{"audio only: h264 and AC-3", Source{"matroska,webm", "h264", "ac3"}, Browser{true, false}, Plan{ModeAudio, true, false}},
		{"audio only: h264 and DTS, which MP4 is not given as it is", Source{"matroska,webm", "h264", "dts"}, Browser{true, true}, Plan{ModeAudio, true, false}},
		{"video: HEVC and AC-3 in a browser that decodes neither", Source{"matroska,webm", "hevc", "ac3"}, Browser{false, false}, Plan{ModeVideo, false, false}},
		{"video: HEVC, the AAC copied", Source{"matroska,webm", "hevc", "aac"}, Browser{false, true}, Plan{ModeVideo, false, true}},
		{"HEVC a browser decodes is copied", Source{"matroska,webm", "hevc", "ac3"}, Browser{true, false}, Plan{ModeAudio, true, false}},
		{"MPEG-4 part 2 is transcoded whatever the browser says", Source{"avi", "mpeg4", "mp3"}, Browser{true, true}, Plan{ModeVideo, false, true}},
		{"no audio", Source{"avi", "h264", ""}, Browser{true, false}, Plan{ModeRemux, true, true}},
		{"no video: AC-3 alone", Source{"ac3", "", "ac3"}, Browser{false, false}, Plan{ModeAudio, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.src, tt.br); got != tt.want {
				t.Errorf("Decide(%+v, %+v) = %+v, want %+v", tt.src, tt.br, got, tt.want)
			}
		})
	}
}

func TestContentType(t *testing.T) {
	tests := []struct {
		src  Source
		plan Plan
		want string
	}{
		{Source{"matroska,webm", "hevc", "ac3"}, Plan{ModeVideo, false, false}, `video/mp4; codecs="avc1.640028,mp4a.40.2"`},
		{Source{"mpegts", "h264", "opus"}, Plan{ModeRemux, true, true}, `video/mp4; codecs="avc1.640028,opus"`},
		{Source{"matroska,webm", "vp9", ""}, Plan{ModeRemux, true, true}, `video/mp4; codecs="vp09.00.40.08"`},
		{Source{"ac3", "", "ac3"}, Plan{ModeAudio, true, false}, `audio/mp4; codecs="mp4a.40.2"`},
	}
	for _, tt := range tests {
		if got := ContentType(tt.src, tt.plan); got != tt.want {
			t.Errorf("ContentType(%+v, %+v) = %s, want %s", tt.src, tt.plan, got, tt.want)
		}
	}
}

func TestTypes(t *testing.T) {
	v, a := Types(Source{"matroska,webm", "hevc", "dts"})
	if v != `video/mp4; codecs="hvc1.1.6.L120.90"` || a != "" {
		t.Errorf("Types(hevc, dts) = %q, %q", v, a)
	}
}
