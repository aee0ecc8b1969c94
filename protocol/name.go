package protocol

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxName bounds a household's name, in bytes of UTF-8.
const MaxName = 64

// ErrBadName is returned by CheckName for a name a household may not
// give itself: not UTF-8, longer than MaxName bytes, with a character
// that controls the terminal or the text's direction (see CleanName), or
// with leading or trailing white space.
var ErrBadName = errors.New("bad household name")

// CheckName reports whether name may be sent as a household's name: valid
// UTF-8 of at most MaxName bytes, no white space at either end, and no
// character CleanName removes. The empty name is valid (the household
// sends none).
func CheckName(name string) error {
	switch {
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: %q is not UTF-8", ErrBadName, clip(name))
	case len(name) > MaxName:
		return fmt.Errorf("%w: %q is %d bytes, at most %d", ErrBadName, clip(name), len(name), MaxName)
	case strings.TrimSpace(name) != name:
		return fmt.Errorf("%w: %q has white space at an end", ErrBadName, name)
	case strings.IndexFunc(name, unsafeInName) >= 0:
		return fmt.Errorf("%w: %q holds a control character", ErrBadName, name)
	}
	return nil
}

// CleanName turns a name a peer sent, untrusted, into one CheckName
// accepts: invalid UTF-8 dropped, control characters (Unicode Cc, such as
// a newline or an escape) and the marks that reorder text (U+200E,
// U+200F, U+202A to U+202E, U+2066 to U+2069) removed, white space
// trimmed at both ends, then cut to at most MaxName bytes at a character
// boundary (and trimmed again). It never fails; a name of nothing but
// such characters becomes "".
func CleanName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r == utf8.RuneError || unsafeInName(r) {
			continue
		}
		b.WriteRune(r)
	}
	s := strings.TrimSpace(b.String())
	if len(s) > MaxName {
		n := MaxName
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = strings.TrimSpace(s[:n])
	}
	return s
}

// unsafeInName reports a character a name may not hold: a control
// character, or a mark that changes the direction text is shown in (a
// name written right to left could otherwise make the ID beside it read
// as another).
func unsafeInName(r rune) bool {
	switch {
	case unicode.IsControl(r):
		return true
	case r == 0x200e || r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
