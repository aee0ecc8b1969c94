package ingest

import "strings"

// Titles as shown: the bytes of a name turned into words.

// clean turns the bytes a..b of the name into a title: separators become
// spaces, acronyms keep their dots (S.H.I.E.L.D.), "Mr. Robot" keeps its
// dot, brackets stay only in pairs.
func (sc *nameScan) clean(a, b int) string {
	depth := 0
	for i := a; i < b; i++ {
		if isOpen(sc.s[i]) {
			depth++
		} else if depth > 0 && strchr(")]}", sc.s[i]) {
			depth--
		}
	}
	for ; depth > 0 && b < len(sc.s) && strchr(")]}", sc.s[b]); depth-- {
		b++ // "The Office (US)": the bracket closes after the last token
	}
	s := sc.s[a:b]
	brackets := strings.ContainsAny(s, "()[]{}")
	buf := make([]byte, 0, len(s)+1)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '_', '~', '#':
			c = ' '
		case '.':
			if sc.acronymDot(a + i) {
				buf = append(buf, '.')
				if i+1 < len(s) && s[i+1] != ' ' && !sc.acronymDot(a+i+2) {
					buf = append(buf, ' ')
				}
				continue
			}
			if i+1 >= len(s) || s[i+1] != ' ' {
				c = ' '
			}
		case '(', ')', '[', ']', '{', '}':
			if !brackets || !pairedBracket(s, i) {
				c = ' '
			}
		}
		if c == ' ' && (len(buf) == 0 || buf[len(buf)-1] == ' ') {
			continue
		}
		buf = append(buf, c)
	}
	if b < len(sc.s) && sc.s[b] == '.' && sc.acronymDot(b) {
		buf = append(buf, '.')
	}
	for len(buf) > 0 && strchr(" -,+&", buf[len(buf)-1]) {
		buf = buf[:len(buf)-1]
	}
	k := 0
	for k < len(buf) && strchr(" -,+", buf[k]) {
		k++
	}
	return string(buf[k:])
}

// acronymDot reports a dot at p of the name between single letters of an
// acronym ("S.H.I.E.L.D", "E.T.").
func (sc *nameScan) acronymDot(p int) bool {
	s := sc.s
	if p <= 0 || p >= len(s) || s[p] != '.' || !sc.singleLetter(p-1) {
		return false
	}
	return (p+1 < len(s) && sc.singleLetter(p+1)) || (p >= 2 && s[p-2] == '.' && sc.singleLetter(p-3))
}

// singleLetter reports a one-letter word at p.
func (sc *nameScan) singleLetter(p int) bool {
	s := sc.s
	if p < 0 || p >= len(s) {
		return false
	}
	c := lowerASCII(s[p])
	return 'a' <= c && c <= 'z' && (p == 0 || isSep(s[p-1])) && (p+1 == len(s) || isSep(s[p+1]))
}

// pairedBracket reports whether the bracket at i has its partner in s.
func pairedBracket(s string, i int) bool {
	open, close := "([{", ")]}"
	if k := strings.IndexByte(open, s[i]); k >= 0 {
		return strings.IndexByte(s[i+1:], close[k]) >= 0
	}
	k := strings.IndexByte(close, s[i])
	return strings.LastIndexByte(s[:i], open[k]) >= 0
}

// trailingEdition reports editions that end a title even when written
// like title words ("Movie.Title.Uncut.2003"); "The Final Cut" is a title.
func trailingEdition(edition string) bool {
	switch edition {
	case "Extended", "Unrated", "Uncut", "Remastered", "Director's Cut", "Theatrical":
		return true
	}
	return false
}

// resolutionSource is the source glued to a resolution: "BD1080p".
func resolutionSource(b []byte) string {
	switch {
	case b[0] == 'b':
		return "Blu-ray"
	case b[0] == 'w':
		return "WEB"
	}
	return ""
}
