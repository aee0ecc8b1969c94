package protocol

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// MaxTokenLen bounds one search token, in bytes; longer ones are cut.
const MaxTokenLen = 64

// Tokens cuts text into search tokens: lower case, accents removed
// ("Amélie" → "amelie", "Straße" → "strasse"), split at everything that
// is not a letter or digit. Season and episode marks are written one way:
// "S1E2" → "s01e02", "s1" → "s01", "E002" → "e02". Tokens are at most 64
// bytes.
func Tokens(text string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, normToken(b.String()))
			b.Reset()
		}
	}
	for _, r := range norm.NFKD.String(text) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if f, ok := foldSpecial[r]; ok {
				b.WriteString(f)
			} else {
				b.WriteRune(unicode.ToLower(r))
			}
		default:
			flush()
		}
	}
	flush()
	return out
}

// foldSpecial are letters NFKD does not decompose.
var foldSpecial = map[rune]string{
	'ß': "ss", 'ẞ': "ss", 'æ': "ae", 'Æ': "ae", 'ø': "o", 'Ø': "o", 'œ': "oe", 'Œ': "oe",
	'đ': "d", 'Đ': "d", 'ł': "l", 'Ł': "l", 'þ': "th", 'Þ': "th", 'ð': "d", 'Ð': "d", 'ı': "i",
}

// normToken writes season/episode marks one way and cuts long tokens.
func normToken(t string) string {
	if s, e, ok := seasonEpisode(t); ok {
		switch {
		case s >= 0 && e >= 0:
			t = fmt.Sprintf("s%02de%02d", s, e)
		case s >= 0:
			t = fmt.Sprintf("s%02d", s)
		default:
			t = fmt.Sprintf("e%02d", e)
		}
	}
	if len(t) > MaxTokenLen {
		t = t[:MaxTokenLen]
	}
	return t
}

// seasonEpisode parses "s<n>", "e<n>" and "s<n>e<m>" (-1 for a part that
// is not there).
func seasonEpisode(t string) (int, int, bool) {
	num := func(s string) (int, bool) {
		if s == "" || len(s) > 4 {
			return 0, false
		}
		n, err := strconv.Atoi(s)
		return n, err == nil && s[0] != '+' && s[0] != '-'
	}
	switch {
	case strings.HasPrefix(t, "s"):
		sp, ep, both := strings.Cut(t[1:], "e")
		s, ok := num(sp)
		if !ok {
			return 0, 0, false
		}
		if !both {
			return s, -1, true
		}
		e, ok := num(ep)
		return s, e, ok
	case strings.HasPrefix(t, "e"):
		e, ok := num(t[1:])
		return -1, e, ok
	}
	return 0, 0, false
}
