package api

import (
	"errors"
	"strings"
	"testing"
)

func TestToWebVTT(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"SubRip", "1\n00:00:01,000 --> 00:00:02,500\nHello\nthere\n\n2\n00:01:02,003 --> 00:01:04,000\n<i>Bye</i>\n",
			"WEBVTT\n\n00:00:01.000 --> 00:00:02.500\nHello\nthere\n\n00:01:02.003 --> 00:01:04.000\n<i>Bye</i>\n"},
		{"CRLF, a byte-order mark, no final newline", "\ufeff1\r\n00:00:01,000 --> 00:00:02,000\r\nHi",
			"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nHi\n"},
		{"Windows-1252", "1\n00:00:01,000 --> 00:00:02,000\nCaf\xe9\n", "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nCafé\n"},
		{"font tags and cue settings dropped", "1\n00:00:01,000 --> 00:00:02,000 X1:100 X2:200\n<font color=\"#ff0000\">Red</font> -->\n",
			"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nRed --&gt;\n"},
		{"a WebVTT file, hours left out", "WEBVTT\n\nintro\n01:02.500 --> 01:03.000 align:start\nHi\n",
			"WEBVTT\n\n00:01:02.500 --> 00:01:03.000\nHi\n"},
		{"broken blocks skipped", "1\n00:00:01,000 --> nonsense\nA\n\n2\n00:00:05,000 --> 00:00:04,000\nBackwards\n\n3\n00:00:06,000 --> 00:00:07,000\nC\n\n4\n00:00:08,000 --> 00:00:09,000\n\n",
			"WEBVTT\n\n00:00:06.000 --> 00:00:07.000\nC\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ToWebVTT([]byte(tt.src))
			if err != nil || string(got) != tt.want {
				t.Errorf("ToWebVTT = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	for _, src := range []string{"", "hello", "\x89PNG\r\n\x1a\n", "1\n00:99:00,000 --> 00:99:01,000\nA\n"} {
		if _, err := ToWebVTT([]byte(src)); !errors.Is(err, ErrNotSubtitle) {
			t.Errorf("ToWebVTT(%q) = %v, want ErrNotSubtitle", src, err)
		}
	}
}

// FuzzToWebVTT: whatever a subtitle file holds, the answer is an error
// or WebVTT whose every cue has a time line a browser reads.
func FuzzToWebVTT(f *testing.F) {
	f.Add([]byte("1\n00:00:01,000 --> 00:00:02,000\nHi\n"))
	f.Add([]byte("WEBVTT\n\n01:02.500 --> 01:03.000\nHi\n"))
	f.Add([]byte("\ufeff1\r\n00:00:01,000 --> 00:00:02,000\r\n<font>x</font>"))
	f.Fuzz(func(t *testing.T, src []byte) {
		out, err := ToWebVTT(src)
		if err != nil {
			return
		}
		blocks := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n\n")
		if blocks[0] != "WEBVTT" || len(blocks) < 2 {
			t.Fatalf("not WebVTT: %q", out)
		}
		for _, b := range blocks[1:] {
			line, text, _ := strings.Cut(b, "\n")
			a, z, ok := strings.Cut(line, " --> ")
			if !ok || !srtTime.MatchString(a) || !srtTime.MatchString(z) || text == "" || strings.Contains(text, "-->") {
				t.Fatalf("cue %q of %q", b, out)
			}
		}
	})
}
