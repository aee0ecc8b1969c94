package dav

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSafeName(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "Heat (1995)", "Heat (1995)"},
		{"slash and colon", "AC/DC: Live", "AC-DC - Live"},
		{"colon without space", "Title:Sub", "Title - Sub"},
		{"backslash", `a\b`, "a-b"},
		{"windows characters", `What? "Now" <x> | y*`, "What Now x y"},
		{"control characters", "a\x00b\tc\nd\x7f", "a b c d"},
		{"runs of spaces", "  a   b  ", "a b"},
		{"leading dot: no hidden file", ".hidden", "hidden"},
		{"trailing dots and spaces", "Dr. No...  ", "Dr. No"},
		{"dots alone", "..", untitled},
		{"empty", "", untitled},
		{"only unsafe", "/:/", "- - -"},
		{"invalid UTF-8 dropped", "caf\xe9", "caf"},
		{"NFC", "Ame\u0301lie", "Am\u00e9lie"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SafeName(tt.in); got != tt.want {
				t.Errorf("SafeName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSafeName_Long(t *testing.T) {
	got := SafeName(strings.Repeat("é", 500))
	if len(got) > maxNameBytes || !utf8.ValidString(got) {
		t.Errorf("%d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}

func TestNames_Unique(t *testing.T) {
	var n names
	var got []string
	for _, s := range []string{"Twin (2001)", "Twin (2001)", "twin (2001)", "Other", "Twin (2001) (2)"} {
		got = append(got, n.unique(s))
	}
	want := []string{"Twin (2001)", "Twin (2001) (2)", "twin (2001) (3)", "Other", "Twin (2001) (2) (2)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// FuzzSafeName: whatever a title holds (a peer's record is untrusted),
// its name is one path element every client takes.
func FuzzSafeName(f *testing.F) {
	for _, s := range []string{"AC/DC: Live", "..", "a\x00b", "caf\xe9", " . ", `<>|?*"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := SafeName(s)
		if got == "" || got == "." || got == ".." || !utf8.ValidString(got) || len(got) > maxNameBytes {
			t.Fatalf("SafeName(%q) = %q", s, got)
		}
		if strings.ContainsAny(got, "/\\:*?\"<>|") || strings.HasPrefix(got, ".") || strings.HasPrefix(got, " ") || strings.HasSuffix(got, " ") || strings.HasSuffix(got, ".") {
			t.Fatalf("SafeName(%q) = %q: unsafe", s, got)
		}
		for _, r := range got {
			if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("SafeName(%q) = %q: control character %U", s, got, r)
			}
		}
		if SafeName(got) != got {
			t.Fatalf("SafeName(%q) = %q, not stable: %q", s, got, SafeName(got))
		}
	})
}
