package ingest

import (
	"strings"
	"testing"
)

// ffprobe's output depends on the bytes of media files, which are
// untrusted: parsing it must never panic and must only write fileinfo/
// fields.
func FuzzParseProbe(f *testing.F) {
	f.Add([]byte(`{"format":{"duration":"3.0","format_name":"matroska,webm"},"streams":[{"codec_type":"video","codec_name":"h264","width":640,"height":360},{"codec_type":"audio","codec_name":"aac","channels":2,"tags":{"language":"eng"}},{"codec_type":"subtitle","codec_name":"subrip"},{"codec_type":"video","disposition":{"attached_pic":1}}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := parseProbe(b)
		if err != nil {
			return
		}
		for k := range out {
			if !strings.HasPrefix(k, "fileinfo/") {
				t.Fatalf("field %q outside fileinfo/", k)
			}
		}
	})
}

// TestParseProbe_Level: a codec's level is kept; ffprobe's -99 for a
// codec without levels (VP9) is no level.
func TestParseProbe_Level(t *testing.T) {
	for _, tt := range []struct {
		level string
		want  string // "" for none
	}{
		{"41", "41"},
		{"0", ""},
		{"-99", ""},
	} {
		out, err := parseProbe([]byte(`{"streams":[{"codec_type":"video","codec_name":"x","level":` + tt.level + `}]}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := out["fileinfo/streamdetails/video/0/level"]; got != tt.want {
			t.Errorf("level %s: field %q, want %q (%v)", tt.level, got, tt.want, out)
		}
	}
}
