package dav

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxNameBytes bounds a name's stem, in bytes: file systems take 255,
// and a suffix, a language and an extension go after it.
const maxNameBytes = 180

// untitled names a file whose title leaves nothing once made safe.
const untitled = "Untitled"

// SafeName is s as a file or folder name every client takes (Windows,
// macOS, Linux file managers, Kodi, rclone mount): "/" and "\" become
// "-"; ":" becomes " -" ("AC/DC: Live" → "AC-DC - Live"); the other
// characters Windows refuses (* ? " < > |) and control characters become
// spaces, format characters (U+202E, U+200B) go; runs of spaces are
// one; leading and trailing spaces and dots
// go (no hidden file, no name Windows cuts); invalid UTF-8 is dropped,
// the rest put in NFC; at most maxNameBytes bytes. Nothing left is
// "Untitled".
func SafeName(s string) string {
	s = norm.NFC.String(strings.ToValidUTF8(s, ""))
	var b strings.Builder
	space := false
	put := func(r rune) {
		if r == ' ' {
			space = b.Len() > 0
			return
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	for _, r := range s {
		switch {
		case r == '/' || r == '\\':
			put('-')
		case r == ':':
			put(' ')
			put('-')
			put(' ')
		case strings.ContainsRune(`*?"<>|`, r), unicode.IsControl(r), unicode.IsSpace(r), r == utf8.RuneError:
			put(' ')
		case unicode.Is(unicode.Cf, r):
			// Format characters (a right-to-left override, a zero-width
			// space) show nothing: a name holding them is not what it
			// reads as.
		default:
			put(r)
		}
	}
	out := strings.Trim(b.String(), " .")
	out = cut(out, maxNameBytes)
	out = strings.Trim(out, " .")
	if out == "" {
		return untitled
	}
	return out
}

// cut is s cut to at most n bytes at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// names hands out the names of one folder, each once: a name taken
// before (case aside: Windows and macOS do not tell "Up" from "UP") gets
// " (2)", " (3)", … The zero value is ready.
type names struct{ taken map[string]bool }

// unique is name, or name with the first free suffix; it is taken.
func (n *names) unique(name string) string {
	if n.taken == nil {
		n.taken = map[string]bool{}
	}
	out := name
	for i := 2; n.taken[strings.ToLower(out)]; i++ {
		out = name + " (" + strconv.Itoa(i) + ")"
	}
	n.taken[strings.ToLower(out)] = true
	return out
}

// take takes name when it is free, and reports whether it was.
func (n *names) take(name string) bool {
	if n.taken == nil {
		n.taken = map[string]bool{}
	}
	k := strings.ToLower(name)
	if n.taken[k] {
		return false
	}
	n.taken[k] = true
	return true
}
