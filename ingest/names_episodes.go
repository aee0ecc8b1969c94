package ingest

import "strconv"

// Episode markers: S02E05, s2e5, S01E01E02, S01E01-E03, 1x05, 1x05-1x06,
// Season 2 Episode 5, S02 E05, Ep 5, E05, and a season alone (S02,
// Season 2). Numbers and the small readers the scan shares live here too.

const maxEpisodes = 8

var (
	seasonWords = map[string]bool{"season": true, "saison": true, "staffel": true, "temporada": true, "stagione": true, "series": true, "seizoen": true,
		"livre": true, "temp": true}
	episodeWords = map[string]bool{"episode": true, "ep": true, "e": true, "episodio": true, "folge": true, "eps": true}
)

// matchEpisode reads an episode marker at token i and returns how many
// tokens it used. The first marker of a name fills sc.season and sc.eps.
func (sc *nameScan) matchEpisode(i int) int {
	season, eps, n := sc.markerAt(i, sc.keyEps())
	if n == 0 {
		return 0
	}
	if len(eps) == 0 {
		var ok bool
		if eps, n, ok = sc.episodeAfterSeason(i, n, season, eps); !ok {
			return 0
		}
	}
	n += sc.moreEpisodes(i+n, &eps)
	kind := tEpisode
	if len(eps) == 0 {
		kind = tSeason
	}
	if sc.season < 0 && len(sc.eps) == 0 {
		sc.season, sc.eps = season, eps
	}
	return sc.set(i, n, kind, "", false, season)
}

// markerAt reads the marker that starts at token i, in any of its
// forms, appending its episodes to eps. It returns the season (-1 when
// the marker gives none), the episodes and the tokens used, 0 when there
// is no marker at i.
func (sc *nameScan) markerAt(i int, eps []int) (season int, _ []int, n int) {
	b := sc.lowTok(i)
	switch {
	case len(b) >= 2 && b[0] == 's' && isDigit(b[1]):
		season, eps, n = seasonEpisodes(b, eps)
	case len(b) >= 3 && isDigit(b[0]):
		season, eps, n = crossEpisodes(b, eps)
	case seasonWords[string(b)] && i+1 < len(sc.toks):
		season, n = sc.seasonWord(i)
	case string(b) == "cap" && i+1 < len(sc.toks):
		season, eps, n = sc.capEpisode(i, eps)
	case len(b) > 6 && string(b[:6]) == "season":
		v, ok := number(b[6:]) // "Season2"
		if !ok {
			return -1, eps, 0
		}
		season, n = v, 1
	default:
		v, m := sc.episodeWord(i)
		if m == 0 {
			return -1, eps, 0
		}
		season, eps, n = -1, appendEp(eps, v), m
	}
	return season, eps, n
}

// seasonEpisodes reads "S02E05", "S01E01E02", "S01E01-E03", "S06xE01",
// "S02E05v2", a season alone ("S02") and a season's disc ("S01D01"). It
// returns the season, eps with the episodes appended, and 1, or 0 when b
// is none of them.
func seasonEpisodes(b []byte, eps []int) (season int, _ []int, n int) {
	j := digitsEnd(b, 1)
	if j-1 > 4 {
		return -1, eps, 0
	}
	season, _ = number(b[1:j])
	if j == len(b) {
		return season, eps, 1
	}
	if b[j] == 'd' {
		if _, ok := number(b[j+1:]); ok {
			return season, eps, 1 // "S01D01": a season's disc
		}
		return -1, eps, 0
	}
	if b[j] == 'x' && j+1 < len(b) && b[j+1] == 'e' {
		j++ // "S06xE01"
	}
	if b[j] != 'e' {
		return -1, eps, 0
	}
	for j < len(b) && b[j] == 'e' {
		k := digitsEnd(b, j+1)
		if k == j+1 || k-j-1 > 4 {
			return -1, eps, 0
		}
		v, _ := number(b[j+1 : k])
		eps = appendEp(eps, v)
		j = k
		if j < len(b) && b[j] == '-' {
			j++
		}
	}
	if j != len(b) && !(j+2 == len(b) && b[j] == 'v' && isDigit(b[j+1])) {
		return -1, eps, 0
	}
	return season, eps, 1
}

// crossEpisodes reads "1x05" and "1x05x06". It returns the season, eps
// with the episodes appended, and 1, or 0 when b is neither.
func crossEpisodes(b []byte, eps []int) (season int, _ []int, n int) {
	j := digitsEnd(b, 0)
	if j > 2 || j == len(b) || b[j] != 'x' {
		return -1, eps, 0
	}
	season, _ = number(b[:j])
	for j < len(b) && b[j] == 'x' {
		k := digitsEnd(b, j+1)
		if k == j+1 || k-j-1 > 3 {
			return -1, eps, 0
		}
		v, _ := number(b[j+1 : k])
		eps = appendEp(eps, v)
		j = k
	}
	if j != len(b) {
		return -1, eps, 0
	}
	return season, eps, 1
}

// seasonWord reads a season word and its number at token i ("Season 2",
// "Staffel 3", "Season IV" with a Roman numeral in capitals). It returns
// the season and 2, or 0 when the next token is no season number.
func (sc *nameScan) seasonWord(i int) (season, n int) {
	if sc.spacedDash(i + 1) {
		return -1, 0 // "Show Final Season - 16": the number is an episode
	}
	v, ok := number(sc.lowTok(i + 1))
	if !ok {
		// "Season IV", "Livre II": a Roman numeral, in capitals
		if r := roman(sc.lowTok(i + 1)); r > 0 && sc.isCaps(i+1) {
			v, ok = r, true
		}
	}
	if !ok || v > 3000 {
		return -1, 0
	}
	return v, 2
}

// capEpisode reads "Cap.302" at token i: season and episode in one
// number ("Temporada 3 Cap.302"). It returns the season, eps with the
// episode appended, and 2, or 0 when the number is no such pair.
func (sc *nameScan) capEpisode(i int, eps []int) (season int, _ []int, n int) {
	c := sc.lowTok(i + 1)
	v, ok := number(c)
	if !ok || len(c) < 3 || len(c) > 4 || v%100 == 0 {
		return -1, eps, 0
	}
	return v / 100, appendEp(eps, v%100), 2
}

// episodeAfterSeason reads the episode that may follow a season marker
// of n tokens at token i: an episode word ("Season 2 Episode 5", "S02
// E05") or "Cap" and a number ("Temporada 3 Cap.302": the season again,
// then the episode; "Temp 2 Cap 05": the episode alone). It returns eps
// with the episode appended and the tokens used with it; ok is false when
// the marker is none without an episode ("Series" alone).
func (sc *nameScan) episodeAfterSeason(i, n, season int, eps []int) (_ []int, _ int, ok bool) {
	if v, m := sc.episodeWord(i + n); m > 0 {
		return appendEp(eps, v), n + m, true
	}
	if k := i + n; k+1 < len(sc.toks) && string(sc.lowTok(k)) == "cap" {
		c := sc.lowTok(k + 1)
		if v, ok := number(c); ok && len(c) >= 3 && v/100 == season && v%100 > 0 {
			eps, n = appendEp(eps, v%100), n+2
		} else if ok && len(c) <= 2 {
			eps, n = appendEp(eps, v), n+2
		}
		return eps, n, true
	}
	if string(sc.lowTok(i)) == "series" {
		return eps, n, false // "Series" is a season only before an episode
	}
	return eps, n, true
}

// keyEps is an empty episode list backed by the scan's buffer when no
// marker was kept yet.
func (sc *nameScan) keyEps() []int {
	if sc.season < 0 && len(sc.eps) == 0 {
		return sc.epBuf[:0]
	}
	return nil
}

// episodeWord reads "E05", "Ep05", "Episode 5", "Ep. 5" at token i.
func (sc *nameScan) episodeWord(i int) (ep, n int) {
	if i >= len(sc.toks) {
		return 0, 0
	}
	b := sc.lowTok(i)
	if episodeWords[string(b)] && i+1 < len(sc.toks) {
		// "Wall-E (2008)": a year is no episode; "E 1071" needs the full word
		c := sc.lowTok(i + 1)
		if k := versioned(c); k > 0 {
			c = c[:k] // "Episode 366v2"
		}
		if len(c) <= 3 || (len(c) == 4 && len(b) > 2 && !yearish(sc.toks[i+1].val)) {
			if v, ok := number(c); ok {
				return v, 2
			}
		}
		return 0, 0
	}
	if v, m := sc.episodeOf(i); m > 0 {
		return v, m // "Season.2.1of4"
	}
	for _, w := range [...]string{"episode", "ep", "e"} {
		if len(b) > len(w) && string(b[:len(w)]) == w {
			if v, ok := number(b[len(w):]); ok && len(b)-len(w) <= 4 {
				return v, 1
			}
		}
	}
	return 0, 0
}

// versioned is where the digits of "12v2" (a second version of episode
// 12) end, 0 when b is not one.
func versioned(b []byte) int {
	j := digitsEnd(b, 0)
	if j > 0 && j+2 == len(b) && b[j] == 'v' && isDigit(b[j+1]) {
		return j
	}
	return 0
}

// episodeOf reads "14.of.21" and "1of4" (episode 14 of 21) at token i and
// returns the episode and the tokens used.
func (sc *nameScan) episodeOf(i int) (ep, n int) {
	if i >= len(sc.toks) {
		return 0, 0
	}
	b := sc.lowTok(i)
	if j := digitsEnd(b, 0); j > 0 && j+2 < len(b) && string(b[j:j+2]) == "of" {
		v, okV := number(b[:j])
		m, okM := number(b[j+2:])
		if okV && okM && v >= 1 && v <= m && m <= 200 {
			return v, 1
		}
		return 0, 0
	}
	if i+2 < len(sc.toks) && string(sc.lowTok(i+1)) == "of" {
		v, okV := number(b)
		m, okM := number(sc.lowTok(i + 2))
		if okV && okM && v >= 1 && v <= m && m <= 200 && len(b) <= 3 {
			return v, 3
		}
	}
	return 0, 0
}

// moreEpisodes reads what continues a multi-episode marker: "-E03"
// (a range), "E02", "-02", "-1x06", "-S01E02".
func (sc *nameScan) moreEpisodes(i int, eps *[]int) int {
	n := 0
	for len(*eps) > 0 && i+n < len(sc.toks) && sc.simpleSep(i+n) {
		b := sc.lowTok(i + n)
		dash := sc.sep(i+n) == "-"
		v, ok := -1, false
		switch {
		case len(b) >= 2 && b[0] == 'e':
			v, ok = number(b[1:])
		case dash && len(b) <= 3:
			v, ok = number(b)
		case dash && len(b) >= 4:
			// -1x06 or -S01E02: the episode after the last x or e
			k := len(b) - 1
			for k > 0 && isDigit(b[k]) {
				k--
			}
			if b[k] == 'x' || b[k] == 'e' {
				v, ok = number(b[k+1:])
				_, okS := number(b[:k])
				ok = ok && (okS || (b[0] == 's' && k > 1))
			}
		}
		if !ok {
			break
		}
		last := (*eps)[len(*eps)-1]
		if dash && v > last && v-last <= 30 {
			for e := last + 1; e <= v; e++ {
				*eps = appendEp(*eps, e)
			}
		} else {
			*eps = appendEp(*eps, v)
		}
		n++
	}
	for k := i; k < i+n; k++ {
		sc.toks[k].kind = tCont
	}
	return n
}

func appendEp(eps []int, v int) []int {
	if len(eps) >= maxEpisodes {
		return eps
	}
	return append(eps, v)
}

// number reads a run of up to nine ASCII digits.
func number(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	v := 0
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digitsEnd returns the index after the digits of b starting at from.
func digitsEnd(b []byte, from int) int {
	for from < len(b) && isDigit(b[from]) {
		from++
	}
	return from
}

func strchr(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// yearish reports a plausible release year.
func yearish(v int) bool { return v >= 1900 && v <= 2039 }

var romans = map[string]int{"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6, "vii": 7, "viii": 8, "ix": 9, "x": 10,
	"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}

// partNumber reads 2, 02, II or Two; 0 when b is none of them.
func partNumber(b []byte) int {
	if v, ok := number(b); ok && v > 0 && v < 20 {
		return v
	}
	return romans[string(b)]
}

var heights = map[int]string{240: "240p", 360: "360p", 480: "480p", 540: "540p", 576: "576p", 720: "720p",
	900: "900p", 1080: "1080p", 1440: "1440p", 2160: "2160p", 4320: "4320p"}

// resolution reads 1080p, 720i, 1920x1080 and BD1080p / WEB720p.
func resolution(b []byte) string {
	for _, p := range [...]string{"bd", "web", "hd", "fhd"} {
		if len(b) > len(p)+3 && string(b[:len(p)]) == p && isDigit(b[len(p)]) {
			b = b[len(p):]
			break
		}
	}
	j := digitsEnd(b, 0)
	if j < 3 {
		return ""
	}
	switch {
	case j == len(b)-1 && (b[j] == 'p' || b[j] == 'i'):
		v, _ := number(b[:j])
		if h := heights[v]; h != "" && b[j] == 'i' {
			return h[:len(h)-1] + "i"
		} else if h != "" {
			return h
		}
	case j < len(b) && b[j] == 'x':
		// 1920x1080, and any other frame size ("1444x866": a re-encode)
		if v, ok := number(b[j+1:]); ok && len(b)-j-1 >= 3 && len(b)-j-1 <= 4 {
			if h := heights[v]; h != "" {
				return h
			}
			if w, _ := number(b[:j]); j <= 4 && w >= 320 && v >= 200 {
				return strconv.Itoa(v) + "p"
			}
		}
	}
	return ""
}

// audioWithChannels reads "DD5", "DDP5", "AAC2", "DTS6" (the ".1" is the
// next token).
func audioWithChannels(b []byte) string {
	j := len(b)
	for j > 0 && isDigit(b[j-1]) {
		j--
	}
	if j == len(b) || len(b)-j > 1 {
		return ""
	}
	return audioPrefix[string(b[:j])]
}

// isCRC reports an 8-digit hexadecimal checksum ("[ABCD1234]").
func isCRC(s string) bool {
	if len(s) != 8 {
		return false
	}
	digits, letters := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := lowerASCII(s[i]); {
		case isDigit(c):
			digits++
		case 'a' <= c && c <= 'f':
			letters++
		default:
			return false
		}
	}
	return digits > 0 && letters > 0 || digits == 8
}

func isOpen(c byte) bool { return c == '[' || c == '(' || c == '{' }

func firstNonSpace(s string) byte {
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			return s[i]
		}
	}
	return 0
}
