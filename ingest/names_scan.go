package ingest

// The scan of one path component: tokens, bracket groups and what each
// token is. The structure (where the title ends) is read in names_parse.go.

// nameScan holds one name while it is parsed. Its buffers keep short
// names off the heap.
type nameScan struct {
	s      string
	low    []byte // ASCII lower case of s
	toks   []token
	brs    []bracket
	mixed  bool // s has lower-case letters, so an all-capitals word stands out
	season int  // of the first episode marker, -1 when it has none
	eps    []int
	date   string // of the first air date

	weakFrom, weakTo int // the run of weak words weakEnds last looked at
	weakEnd          int // its answer: 0 no, 1 yes, 2 when inside brackets

	lowBuf [160]byte
	tokBuf [40]token
	brBuf  [8]bracket
	epBuf  [8]int
	keyBuf [64]byte
}

// scan tokenizes s and classifies its tokens.
func (sc *nameScan) scan(s string) {
	sc.s, sc.season, sc.eps, sc.date = s, -1, sc.epBuf[:0], ""
	sc.weakFrom, sc.weakTo = 0, 0
	if len(s) <= len(sc.lowBuf) {
		sc.low = sc.lowBuf[:len(s)]
	} else {
		sc.low = make([]byte, len(s))
	}
	sc.mixed = false
	for i := 0; i < len(s); i++ {
		c := s[i]
		sc.mixed = sc.mixed || ('a' <= c && c <= 'z')
		sc.low[i] = lowerASCII(c)
	}
	sc.toks, sc.brs = sc.tokBuf[:0], sc.brBuf[:0]
	depth, cur := 0, int8(-1)
	for i := 0; i < len(s); {
		c := s[i]
		if !isSep(c) {
			j := i + 1
			for j < len(s) && !isSep(s[j]) {
				j++
			}
			sc.toks = append(sc.toks, token{start: i, end: j, val: -1, br: cur})
			if cur >= 0 {
				sc.brs[cur].last = len(sc.toks) - 1
			}
			i = j
			continue
		}
		switch c {
		case '[', '(', '{':
			if depth == 0 && len(sc.brs) < 100 {
				sc.brs = append(sc.brs, bracket{first: len(sc.toks), last: len(sc.toks) - 1})
				cur = int8(len(sc.brs) - 1)
			}
			depth++
		case ']', ')', '}':
			if depth > 0 {
				depth--
				if depth == 0 {
					cur = -1
				}
			}
		}
		i++
	}
	for i := 0; i < len(sc.toks); {
		i += max(1, sc.classify(i))
	}
	sc.markBrackets()
}

func (sc *nameScan) lowTok(i int) []byte { return sc.low[sc.toks[i].start:sc.toks[i].end] }

// sep is the text between token i-1 and token i.
func (sc *nameScan) sep(i int) string {
	if i == 0 {
		return sc.s[:sc.toks[0].start]
	}
	return sc.s[sc.toks[i-1].end:sc.toks[i].start]
}

// spacedDash reports a " - " (or " -", "- ", or "_-_" in a name whose
// spaces are underscores) before token i.
func (sc *nameScan) spacedDash(i int) bool {
	if i <= 0 || i >= len(sc.toks) {
		return false
	}
	sp := sc.sep(i)
	dash, space := false, false
	for j := 0; j < len(sp); j++ {
		dash = dash || sp[j] == '-'
		space = space || sp[j] == ' ' || sp[j] == '_'
	}
	return dash && space
}

// simpleSep reports whether tokens i-1 and i are joined by one plain
// separator inside the same bracket group, as the parts of "WEB-DL" are.
func (sc *nameScan) simpleSep(i int) bool {
	if i <= 0 || i >= len(sc.toks) || sc.toks[i].br != sc.toks[i-1].br {
		return false
	}
	sp := sc.sep(i)
	return len(sp) == 1 && (sp[0] == '.' || sp[0] == '-' || sp[0] == ' ' || sp[0] == '_')
}

// lookup finds the n tokens from i, joined by a space, in the vocabulary.
func (sc *nameScan) lookup(i, n int) (vocabEntry, bool) {
	if i+n > len(sc.toks) {
		return vocabEntry{}, false
	}
	key := sc.keyBuf[:0]
	for k := i; k < i+n; k++ {
		if k > i {
			if !sc.simpleSep(k) {
				return vocabEntry{}, false
			}
			key = append(key, ' ')
		}
		t := sc.lowTok(k)
		if len(key)+len(t) > cap(key) {
			return vocabEntry{}, false
		}
		key = append(key, t...)
	}
	e, ok := vocab[string(key)]
	return e, ok
}

// set gives tokens i..i+n-1 one meaning.
func (sc *nameScan) set(i, n int, kind tokKind, value string, weak bool, val int) int {
	t := &sc.toks[i]
	t.kind, t.str, t.weak, t.val = kind, value, weak, val
	for k := i + 1; k < i+n; k++ {
		sc.toks[k].kind = tCont
	}
	return n
}

// classify sets the kind of token i (and of the tokens that continue
// it) and returns how many tokens it used.
func (sc *nameScan) classify(i int) int {
	b := sc.lowTok(i)
	if v, ok := number(b); ok {
		if n := sc.matchDate(i); n > 0 {
			return n
		}
		if ep, n := sc.episodeOf(i); n > 0 {
			eps := appendEp(sc.keyEps(), ep) // "Show.14.of.21"
			if sc.season < 0 && len(sc.eps) == 0 {
				sc.eps = eps
			}
			return sc.set(i, n, tEpisode, "", false, -1)
		}
		if len(b) == 1 && i+1 < len(sc.toks) && sc.sep(i+1) == "." && strchr("12567", b[0]) {
			if c := sc.lowTok(i + 1); len(c) == 1 && (c[0] == '0' || c[0] == '1') {
				return sc.set(i, 2, tOther, "", true, -1) // 5.1 channels
			}
		}
		sc.toks[i].kind, sc.toks[i].val = tNumber, v
		return 1
	}
	if n := sc.matchEpisode(i); n > 0 {
		return n
	}
	for n := 3; n >= 1; n-- {
		if e, ok := sc.lookup(i, n); ok {
			sc.set(i, n, e.kind, e.value, e.weak, -1)
			if e.kind == tAudioCodec {
				n += sc.channels(i + n)
			}
			return n
		}
	}
	if n := sc.matchMarker(i, b); n > 0 {
		return n
	}
	if res := resolution(b); res != "" {
		return sc.set(i, 1, tResolution, res, false, -1)
	}
	if codec := audioWithChannels(b); codec != "" {
		return sc.set(i, 1, tAudioCodec, codec, false, -1) + sc.channels(i+1)
	}
	if n := sc.matchWebsite(i, b); n > 0 {
		return n
	}
	if j := digitsEnd(b, 0); j > 0 && j+2 == len(b) && b[j] == 'v' && isDigit(b[j+1]) {
		v, _ := number(b[:j]) // "12v2": a second version of episode 12
		sc.toks[i].kind, sc.toks[i].val = tNumber, v
	}
	return 1
}

// channels consumes the ".1" of "DD5.1" or the "5.1" after "DTS".
func (sc *nameScan) channels(i int) int {
	if i >= len(sc.toks) || !sc.simpleSep(i) {
		return 0
	}
	b := sc.lowTok(i)
	if len(b) == 1 && (b[0] == '0' || b[0] == '1') {
		sc.toks[i].kind = tCont
		return 1
	}
	if len(b) == 1 && strchr("2567", b[0]) && i+1 < len(sc.toks) && sc.simpleSep(i+1) {
		if c := sc.lowTok(i + 1); len(c) == 1 && (c[0] == '0' || c[0] == '1') {
			sc.toks[i].kind, sc.toks[i+1].kind = tCont, tCont
			return 2
		}
	}
	return 0
}

// matchDate reads an air date (2013.10.21, 21.10.2013) starting at token
// i, and a leading date of two-digit parts (09.03.08) at the start.
func (sc *nameScan) matchDate(i int) int {
	if i+2 >= len(sc.toks) || !sc.simpleSep(i+1) || !sc.simpleSep(i+2) || sc.sep(i+1) != sc.sep(i+2) {
		return 0
	}
	a, b, c := sc.lowTok(i), sc.lowTok(i+1), sc.lowTok(i+2)
	x, okA := number(a)
	y, okB := number(b)
	z, okC := number(c)
	if okA && okB && okC && sc.sep(i+1) == "-" && len(a) == 2 && len(b) == 2 && len(c) == 4 && yearish(z) &&
		x >= 1 && x <= 12 && y >= 1 && y <= 31 {
		// "07-25-2016": the American order, month first, with dashes
		d := string(append(append(append(append(append(sc.keyBuf[:0], c...), '-'), a...), '-'), b...))
		if sc.date == "" {
			sc.date = d
		}
		return sc.set(i, 3, tDate, d, false, -1)
	}
	if !okA || !okB || !okC || len(b) != 2 || y < 1 || y > 12 {
		return 0
	}
	var date []byte
	switch {
	case len(a) == 4 && len(c) == 2 && yearish(x) && z >= 1 && z <= 31:
		date = append(sc.keyBuf[:0], a...)
		date = append(append(append(append(date, '-'), b...), '-'), c...)
	case len(a) == 2 && len(c) == 4 && yearish(z) && x >= 1 && x <= 31:
		date = append(sc.keyBuf[:0], c...)
		date = append(append(append(append(date, '-'), b...), '-'), a...)
	case len(a) == 2 && len(c) == 2 && i == 0:
		return sc.set(i, 3, tDate, "", false, -1) // a leading date, its order unknown
	default:
		return 0
	}
	d := string(date)
	if sc.date == "" {
		sc.date = d
	}
	return sc.set(i, 3, tDate, d, false, -1)
}

// matchMarker reads Part III, pt2, CD1, Disc 2, the bonus -x02- and the
// film number -f21-.
func (sc *nameScan) matchMarker(i int, b []byte) int {
	switch {
	case string(b) == "part" || string(b) == "pt":
		if i+1 < len(sc.toks) && sc.simpleSep(i+1) {
			if v := partNumber(sc.lowTok(i + 1)); v > 0 {
				// "Part.1.and.Part.2": both parts in one file, the first named
				if i+4 < len(sc.toks) && string(sc.lowTok(i+2)) == "and" && string(sc.lowTok(i+3)) == string(b) && partNumber(sc.lowTok(i+4)) > v {
					return sc.set(i, 5, tPart, "", false, v)
				}
				return sc.set(i, 2, tPart, "", false, v)
			}
		}
	case string(b) == "cd" || string(b) == "disc" || string(b) == "disk":
		if i+1 < len(sc.toks) && sc.simpleSep(i+1) {
			if v, ok := number(sc.lowTok(i + 1)); ok && v > 0 && v < 20 {
				return sc.set(i, 2, tCD, "", false, v)
			}
		}
	}
	for _, p := range [...]string{"part", "pt", "cd", "disc", "disk"} {
		if len(b) > len(p) && string(b[:len(p)]) == p {
			v, ok := number(b[len(p):])
			if !ok || v < 1 || v > 19 {
				continue
			}
			if p[0] == 'p' {
				return sc.set(i, 1, tPart, "", false, v)
			}
			return sc.set(i, 1, tCD, "", false, v)
		}
	}
	if t := sc.toks[i]; len(b) >= 2 && len(b) <= 4 && (b[0] == 'x' || b[0] == 'f') && sc.sep(i) == "-" && t.end < len(sc.s) && sc.s[t.end] == '-' {
		if v, ok := number(b[1:]); ok {
			if b[0] == 'x' {
				return sc.set(i, 1, tBonus, "", false, v)
			}
			return sc.set(i, 1, tFilm, "", false, v)
		}
	}
	return 0
}

var tlds = map[string]bool{"com": true, "net": true, "org": true, "info": true, "biz": true, "tv": true, "to": true,
	"cc": true, "me": true, "ru": true, "io": true, "co": true, "xyz": true, "ws": true, "uk": true, "eu": true,
	"nu": true, "lt": true, "se": true, "am": true, "ag": true, "mx": true, "re": true, "ch": true, "si": true, "la": true}

// matchWebsite reads www.site.org anywhere, and site.com at the start
// when " - " follows it.
func (sc *nameScan) matchWebsite(i int, b []byte) int {
	n := 0
	switch {
	case string(b) == "www":
		n = 1
		for i+n < len(sc.toks) && sc.sep(i+n) == "." && n < 4 {
			n++
			if tlds[string(sc.lowTok(i+n-1))] && n >= 3 {
				return sc.set(i, n, tWebsite, "", false, -1)
			}
		}
	case i == 0 && len(sc.toks) > 2 && sc.sep(1) == "." && tlds[string(sc.lowTok(1))] && sc.spacedDash(2):
		return sc.set(i, 2, tWebsite, "", false, -1)
	}
	return 0
}

// markBrackets marks bracket groups of technical tokens as tags
// ("[HDTV 720p English-Spanish]", "{Fr-Eng}"), bracketed websites and a
// leading release group.
func (sc *nameScan) markBrackets() {
	for g := range sc.brs {
		br := &sc.brs[g]
		if br.last < br.first {
			continue
		}
		known, unknown := 0, 0
		for k := br.first; k <= br.last; k++ {
			t := &sc.toks[k]
			if t.kind == tWord {
				if code, ok := bracketLangs[string(sc.lowTok(k))]; ok {
					t.kind, t.str = tLanguage, code
				} else if isCRC(sc.s[t.start:t.end]) {
					t.kind = tOther
				}
			}
			switch t.kind {
			case tWord:
				unknown++
			case tNumber, tCont:
			default:
				known++
			}
		}
		if sc.bracketWebsite(br) {
			sc.set(br.first, br.last-br.first+1, tWebsite, "", false, -1)
			continue
		}
		if known > 0 && unknown*2 < known {
			br.tag = true
			for k := br.first; k <= br.last; k++ {
				t := &sc.toks[k]
				t.weak = false
				if t.kind == tWord {
					t.kind = tOther
				}
			}
			continue
		}
		if br.first == 0 && unknown > 0 && br.last+1 < len(sc.toks) && isOpen(firstNonSpace(sc.s)) {
			for k := br.first; k <= br.last; k++ {
				sc.toks[k].kind = tGroup
			}
		}
	}
}

// bracketWebsite reports "[sharethefiles.com]", "(www.site.org)".
func (sc *nameScan) bracketWebsite(br *bracket) bool {
	if br.last == br.first || !tlds[string(sc.lowTok(br.last))] {
		return false
	}
	for k := br.first + 1; k <= br.last; k++ {
		if sc.sep(k) != "." {
			return false
		}
	}
	return true
}
