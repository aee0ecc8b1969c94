package main

import (
	"bytes"
	"testing"
)

// Control characters and bidirectional formatting characters of names
// and records are escaped; text (right-to-left scripts too), newlines,
// tabs and other Unicode pass as they are.
func TestEscapeControls(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Amélie (2001)\tlocal\n", "Amélie (2001)\tlocal\n"},
		{"Ctl\x1b[31mRed\x07", `Ctl\x1b[31mRed\x07`},
		{"a\rb\x00c\x7f", `a\x0db\x00c\x7f`},
		{"csi \u009b2J", `csi \u009b2J`},
		{"not UTF-8 \xff", "not UTF-8 \xff"},
		// Bidirectional formatting: overrides, embeddings, isolates, marks.
		{"evil\u202emkv.exe\u202c (2001)", `evil\u202emkv.exe\u202c (2001)`},
		{"\u202a\u202b\u202d \u2066\u2067\u2068\u2069 \u200e\u200f\u061c", `\u202a\u202b\u202d \u2066\u2067\u2068\u2069 \u200e\u200f\u061c`},
		{"עברית Hebrew and zero-width joiner \u200d kept", "עברית Hebrew and zero-width joiner \u200d kept"},
	} {
		var b bytes.Buffer
		n, err := controlEscaper{w: &b}.Write([]byte(tt.in))
		if err != nil || n != len(tt.in) || b.String() != tt.want {
			t.Errorf("%q: wrote %q (%d, %v), want %q", tt.in, b.String(), n, err, tt.want)
		}
	}
}
