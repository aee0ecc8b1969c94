package main

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// controlEscaper writes what the commands print with every control
// character but newline and tab, and every bidirectional formatting
// character, written as an escape (\x1b, \u009b, \u202e): a file name or
// a peer's record cannot move the cursor, change colours, ring the bell,
// set the terminal's title, or show its text (and what follows it on the
// line) reversed, so that "evil\u202emkv.exe" reads as "evilexe.vkm". JSON
// output is unchanged (encoding/json escapes the controls already).
type controlEscaper struct{ w io.Writer }

func (e controlEscaper) Write(b []byte) (int, error) {
	if _, err := e.w.Write(escapeControls(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// escapeControls returns b with its control characters escaped; b itself
// when it has none.
func escapeControls(b []byte) []byte {
	clean := true
	for i := 0; i < len(b) && clean; {
		r, n := utf8.DecodeRune(b[i:])
		clean = !isControl(r, n)
		i += n
	}
	if clean {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case !isControl(r, n):
			out = append(out, b[i:i+n]...)
		case r < 0x80:
			out = fmt.Appendf(out, `\x%02x`, r)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += n
	}
	return out
}

// isControl reports a C0 control but newline and tab, DEL, a C1 control
// (U+0080–U+009F), decoded from n bytes, or a bidirectional formatting
// character: the embeddings and overrides (U+202A–U+202E), the isolates
// (U+2066–U+2069) and the marks (U+200E, U+200F, U+061C).
func isControl(r rune, n int) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return n == 2 && r >= 0x80 && r <= 0x9f
}
