package ingest

import (
	"strings"
	"sync"
)

// The structure of one scanned name: where the title starts and ends,
// which year and episode marker count, the episode title, the release
// group, and the fields of the technical tokens outside the titles.

// nameCtx is what the folders above a file say about it.
type nameCtx struct {
	season int  // of a season folder ("Season 2", "S02"), -1 when none
	cd     int  // of a CD folder ("CD1"), 0 when none
	movies bool // a folder says it holds movies ("Movies", "Films")
	shows  bool // a folder says it holds shows ("TV", "Series", "Anime")
	anime  bool // a folder says it holds anime ("Anime")
}

// nameInfo is what parseName learns beyond the Release fields.
type nameInfo struct {
	technical int // strong technical tokens: a release name rather than a hand-made one
}

// parseName reads one path component (a file name without its extension,
// or a folder name) into r, which starts with Season and Episode -1.
func parseName(s string, ctx nameCtx, r *Release) nameInfo {
	if len(s) > maxNameLen {
		s = s[:maxNameLen]
	}
	sc := scans.Get().(*nameScan)
	defer scans.Put(sc)
	sc.scan(s)
	return sc.parse(ctx, r)
}

// maxNameLen bounds the work on one path component; file systems allow
// 255 bytes.
const maxNameLen = 1024

// scans recycles the scan buffers, which hold themselves and so would
// otherwise be allocated for every name.
var scans = sync.Pool{New: func() any { return new(nameScan) }}

// nameParts are the token positions parse finds in a scanned name, -1
// for one the name does not have. The title is toks[a:te], the episode
// title toks[epEnd:epTitleEnd].
type nameParts struct {
	ts     int  // where the title may start (titleStart)
	lead   bool // a [Group] led the name
	anchor int  // the token that ends the title, len(toks) when none does
	ep     int  // the episode, season or air-date marker
	epEnd  int  // the token after the marker and its continuations
	film   int  // the first film number ("f21") after ts
	yi     int  // the year that counts
	a, te  int  // the title's first token and the token after its last
	// epTitleEnd is the token after the episode title's last.
	epTitleEnd int
}

// parse reads the structure of the scanned name into r: where the title
// starts and ends, the year and the episode marker that count, the
// title, the release group, the episode title, and the technical fields
// of the tokens outside the titles. Each step narrows the title the
// steps before it found.
func (sc *nameScan) parse(ctx nameCtx, r *Release) nameInfo {
	var np nameParts
	np.ts, np.lead = sc.titleStart(r)
	np.anchor, np.ep, np.film = sc.titleAnchor(np.ts)
	sc.readYear(&np, r)
	sc.readEpisode(&np, ctx, r)
	sc.trimTitle(&np, r)
	sc.readTitle(&np, ctx, r)
	sc.readEpisodeTitle(&np, sc.group(np.ts, np.anchor, np.ep, r), r)
	return sc.readFields(&np, r)
}

// titleAnchor finds the first token from ts on that ends the title: an
// episode, season or air-date marker (also returned as ep), a part of
// the file, or a technical token (a weak one only where weakEnds says
// so). It also returns the first film number ("f21") on the way; both
// are -1, and anchor len(toks), when there is none.
func (sc *nameScan) titleAnchor(ts int) (anchor, ep, film int) {
	toks, n := sc.toks, len(sc.toks)
	anchor, ep, film = n, -1, -1
	for i := ts; i < n; i++ {
		t := &toks[i]
		switch t.kind {
		case tWord, tNumber, tCont, tGroup:
			continue
		case tFilm:
			if film < 0 {
				film = i
			}
			continue
		case tEpisode, tSeason:
			ep = i
		case tDate:
			if t.str == "" {
				continue
			}
			ep = i
		case tPart:
			if i == ts || !sc.partEnds(i) {
				continue
			}
		default:
			if t.weak && (i == ts || !sc.weakEnds(i)) {
				continue
			}
		}
		return i, ep, film
	}
	return anchor, ep, film
}

// readYear finds the year that counts, the last one between the title's
// first token and the anchor ("2001.A.Space.Odyssey.1968": 1968) or,
// with no episode marker, the first after them, and sets r.Year. A year
// before the anchor ends the title.
func (sc *nameScan) readYear(np *nameParts, r *Release) {
	np.yi = -1
	for i := np.ts + 1; i < np.anchor; i++ {
		if sc.isYear(i) {
			np.yi = i
		}
	}
	if np.yi < 0 && np.ep < 0 {
		for i := max(np.anchor, np.ts+1); i < len(sc.toks); i++ {
			if sc.isYear(i) {
				np.yi = i
				break
			}
		}
	}
	if np.yi >= 0 {
		r.Year = sc.toks[np.yi].val
	}
	np.te = np.anchor
	if np.yi >= np.ts && np.yi < np.anchor {
		np.te = np.yi
	}
}

// readEpisode reads the episode: the marker titleAnchor found, or else
// an episode given by a bare number (episodeNumber), which then ends the
// title too.
func (sc *nameScan) readEpisode(np *nameParts, ctx nameCtx, r *Release) {
	if np.ep >= 0 {
		np.epEnd = sc.readMarker(np.ep, r)
		return
	}
	np.epEnd = -1
	if k := sc.partEpisode(np, ctx); k >= 0 {
		np.ep, np.epEnd, np.te = k, k+1, k
		for np.epEnd < len(sc.toks) && sc.toks[np.epEnd].kind == tCont {
			np.epEnd++ // "Part 5"
		}
		r.Season, r.Episode = max(ctx.season, 1), sc.toks[k].val
		return
	}
	if i, season, episode := sc.episodeNumber(np.ts, np.te, np.anchor, np.yi, ctx, np.lead); i >= 0 {
		np.ep, np.epEnd = i, i+1
		if sc.finale(i + 1) {
			np.epEnd++ // "Show - 12 END": no episode title
		}
		r.Season, r.Episode = season, episode
		if i < np.te {
			np.te = i
		}
	}
}

// partEpisode finds the part of a miniseries that is its episode, in a
// shows folder or a season folder ("TV/Band of Brothers/Band.of.Brothers.Part.5.Crossroads"),
// when the name holds no year: -1 when there is none. Elsewhere "Part 2"
// is half of a film.
func (sc *nameScan) partEpisode(np *nameParts, ctx nameCtx) int {
	if !ctx.shows && ctx.season < 0 || np.yi >= 0 {
		return -1
	}
	for k := np.ts + 1; k < np.te && k < len(sc.toks); k++ {
		if t := &sc.toks[k]; t.kind == tPart && t.val > 0 && t.br < 0 {
			return k
		}
	}
	return -1
}

// readMarker sets r's season and episodes, or air date, from the marker
// at ep and returns the token after it and its continuations (a season
// marker takes the episode number that follows it: "Show S2 - 04").
func (sc *nameScan) readMarker(ep int, r *Release) (epEnd int) {
	toks, n := sc.toks, len(sc.toks)
	for epEnd = ep + 1; epEnd < n && toks[epEnd].kind == tCont; epEnd++ {
	}
	switch toks[ep].kind {
	case tEpisode:
		r.Season, r.Episode = sc.season, sc.eps[0]
		if len(sc.eps) > 1 {
			r.Episodes = append([]int(nil), sc.eps...)
		}
	case tSeason:
		r.Season = sc.season
		if epEnd < n && toks[epEnd].kind == tNumber && sc.spacedDash(epEnd) && toks[epEnd].end-toks[epEnd].start <= 4 {
			r.Episode = toks[epEnd].val // "Show S2 - 04"
			epEnd++
		}
	case tDate:
		r.AirDate = toks[ep].str
	}
	return epEnd
}

// trimTitle takes off the title's end what is not title: an alternative
// title in brackets, a country ("The Office (US)", into r.Country), and
// technical words in capitals or right before other technical words.
func (sc *nameScan) trimTitle(np *nameParts, r *Release) {
	toks, ts := sc.toks, np.ts
	// stripped: technical words already end the title ("Avatar.3D.COMPLETE"),
	// so a weak one before them is technical too; a year does not count
	// ("Step.Up.3D.2010").
	stripped := np.te == np.anchor && np.anchor < len(toks) && isTech(toks[np.anchor].kind)
	for np.te > ts+1 {
		h := np.te - 1
		for h > ts && toks[h].kind == tCont {
			h--
		}
		if br := toks[h].br; br >= 0 && sc.brs[br].first > ts && sc.brs[br].last > sc.brs[br].first {
			np.te = sc.brs[br].first // "Le.Prestige.(The.Prestige)": an alternative title
			r.AltTitle = sc.clean(toks[np.te].start, toks[h].end)
			continue
		}
		if br := toks[h].br; br >= 0 && sc.brs[br].first == h && sc.brs[br].last == h && h > ts && countries[sc.s[toks[h].start:toks[h].end]] {
			r.Country = sc.s[toks[h].start:toks[h].end] // "The Office (US)"
			np.te = h
			continue
		}
		if c := sc.bareCountry(h); c != "" && h > ts && np.ep >= 0 && np.te == np.ep {
			r.Country = c // "The.Office.UK.S01E01"
			np.te = h
			continue
		}
		if h == ts || !isTech(toks[h].kind) || !(sc.isCaps(h) || trailingEdition(toks[h].str) && np.te == np.yi || stripped && toks[h].weak) {
			break
		}
		np.te, stripped = h, true // "Movie.FRENCH.2010": the language is no title word
	}
}

// readTitle finds where the title starts, past a number that only counts
// the file in a list, a leading episode number after a [Group], or a
// film number, and sets r.Title.
func (sc *nameScan) readTitle(np *nameParts, ctx nameCtx, r *Release) {
	toks, a, te := sc.toks, np.ts, np.te
	if r.Year > 0 && ctx.season < 0 && a+1 < te && sc.enumeration(a) {
		a++ // "(1)Alien (1979)", "03-Aliens (1986)", "003. Blade Runner (1982)"
	}
	if np.lead && r.Episode < 0 && r.AirDate == "" && a+1 < te && toks[a].kind == tNumber && toks[a+1].kind == tWord &&
		len(sc.lowTok(a)) >= 2 && len(sc.lowTok(a)) <= 3 && sc.lowTok(a)[0] == '0' {
		r.Episode = toks[a].val // "[Group] 06 Title": the episode, then the title
		a++
	}
	if np.film >= np.ts && np.film < te {
		if np.film+1 < te {
			a = np.film + 1 // "James_Bond-f21-Casino_Royale": the film's own title
		} else {
			te = np.film
		}
	}
	if te > a {
		r.Title = sc.clean(toks[a].start, toks[te-1].end)
	}
	np.a, np.te = a, te
}

// readEpisodeTitle sets r.EpisodeTitle: the words after an episode marker
// that gave an episode or air date, up to the release group's token
// (group, -1 when none) or a token that ends it (endsEpisodeTitle).
func (sc *nameScan) readEpisodeTitle(np *nameParts, group int, r *Release) {
	e, end, n := np.epEnd, np.epEnd, len(sc.toks)
	if np.ep >= 0 && (r.Episode >= 0 || r.AirDate != "") {
		for end < n && end != group && !sc.endsEpisodeTitle(end) {
			end++
		}
		if end > e {
			r.EpisodeTitle = sc.clean(sc.toks[e].start, sc.toks[end-1].end)
		}
	}
	np.epTitleEnd = end
}

// readFields fills r's technical fields from the tokens outside the title
// and the episode title (readField) and counts the strong technical
// tokens among them.
func (sc *nameScan) readFields(np *nameParts, r *Release) nameInfo {
	var info nameInfo
	for i := range len(sc.toks) {
		if (i >= np.a && i < np.te) || (i >= np.epEnd && i < np.epTitleEnd) {
			continue // title words
		}
		if t := &sc.toks[i]; isTech(t.kind) && !t.weak {
			info.technical++
		}
		sc.readField(i, r)
	}
	return info
}

// readField fills the field of r that the technical token at i gives:
// the first source, resolution, codec or edition counts, every language
// is added, and the last part or CD number counts.
func (sc *nameScan) readField(i int, r *Release) {
	t := &sc.toks[i]
	first := func(f *string) {
		if *f == "" {
			*f = t.str
		}
	}
	switch t.kind {
	case tSource:
		first(&r.Source)
		if string(sc.lowTok(i)) == "dvdivx" && r.VideoCodec == "" {
			r.VideoCodec = "DivX"
		}
	case tResolution:
		first(&r.Resolution)
		if b := sc.lowTok(i); r.Source == "" && len(b) > 2 && !isDigit(b[0]) {
			r.Source = resolutionSource(b) // "BD1080p"
		}
	case tVideoCodec:
		first(&r.VideoCodec)
	case tAudioCodec:
		first(&r.AudioCodec)
	case tEdition:
		first(&r.Edition)
	case tLanguage:
		r.addLanguage(t.str)
	case tPart:
		r.Part = t.val
	case tCD:
		r.CD = t.val
	case tWebsite:
		if low := sc.lowTok(i); r.Group == "" && (string(low) == "yts" || string(low) == "yify") {
			end := i + 1
			for end < len(sc.toks) && sc.toks[end].kind == tCont {
				end++
			}
			r.Group = sc.s[t.start:sc.toks[end-1].end] // "[YTS.MX]": a group that names itself by its site
		}
	}
}

// countries are the codes a title is qualified with in parentheses, as
// written ("The Office (US)", "Shark Tank (AU)"): ISO 3166 alpha-2 codes
// of countries that remake shows, and UK.
var countries = map[string]bool{"US": true, "UK": true, "GB": true, "AU": true, "NZ": true, "CA": true, "IE": true,
	"FR": true, "DE": true, "ES": true, "IT": true, "NL": true, "BE": true, "SE": true, "NO": true, "DK": true, "FI": true,
	"PL": true, "JP": true, "KR": true, "IN": true, "BR": true, "MX": true, "AR": true, "ZA": true, "IL": true, "RU": true}

// bareCountry is the country at token i of a show's name, written
// without brackets before the episode ("The.Office.US.S02E01",
// "shameless.uk.s03e02"): a code of bareCountries in capitals, or in
// lower case one that is no English word ("us" is: "This.Is.Us").
func (sc *nameScan) bareCountry(i int) string {
	t := &sc.toks[i]
	if t.br >= 0 || t.end-t.start != 2 {
		return ""
	}
	w := sc.s[t.start:t.end]
	switch w {
	case "US", "UK", "AU", "NZ", "CA":
		return w
	case "uk", "au", "nz":
		return strings.ToUpper(w)
	}
	return ""
}

// enumeration reports a number at i that only counts the file in a list
// before its title: alone in brackets ("(1)Alien"), with a leading zero
// and a dash ("03-Aliens"), or with a dot and a space ("003. Blade
// Runner"). "101 Dalmatians", "3-Iron" and "300" keep theirs.
func (sc *nameScan) enumeration(i int) bool {
	t := &sc.toks[i]
	if t.kind != tNumber || sc.isYear(i) || i+1 >= len(sc.toks) || sc.toks[i+1].kind != tWord {
		return false
	}
	b, sep := sc.lowTok(i), sc.sep(i+1)
	switch {
	case t.br >= 0 && sc.brs[t.br].first == i && sc.brs[t.br].last == i && sc.toks[i+1].br < 0:
		return true
	case sep == "-" && len(b) >= 2 && b[0] == '0':
		return true
	}
	return sep == ". "
}

// titleStart skips a leading [Group], tag group, website, date or
// bracketed year ("(2010) Title").
func (sc *nameScan) titleStart(r *Release) (ts int, lead bool) {
	n := len(sc.toks)
	for ts < n {
		t := &sc.toks[ts]
		switch {
		case t.kind == tGroup:
			g := sc.brs[t.br]
			if r.Group == "" {
				r.Group = sc.s[t.start:sc.toks[g.last].end]
			}
			ts, lead = g.last+1, true
		case t.br >= 0 && sc.brs[t.br].tag:
			ts = sc.brs[t.br].last + 1
		case t.kind == tWebsite || (t.kind == tDate && ts+3 < n && sc.toks[ts+3].kind == tWord):
			for ts++; ts < n && sc.toks[ts].kind == tCont; ts++ {
			}
		case sc.languagePrefix(ts):
			ts++ // "Fr - Title (2005)", "VOSTFR Title 2019"
		case sc.isYear(ts) && t.br >= 0 && sc.brs[t.br].first == sc.brs[t.br].last:
			r.Year = t.val
			ts++
		default:
			return ts, lead
		}
	}
	return ts, lead
}

// languagePrefix reports a language before the title at i: a language
// or its code before " - " ("Fr - ", "GER - ", "VF - "), or a release's
// language or subtitle word before a title word ("VOSTFR Parasite").
// "French Kiss" keeps its French.
func (sc *nameScan) languagePrefix(i int) bool {
	t := &sc.toks[i]
	if t.br >= 0 || i+1 >= len(sc.toks) || sc.toks[i+1].kind != tWord {
		return false
	}
	low := sc.lowTok(i)
	if sc.spacedDash(i+1) && (t.kind == tLanguage || bracketLangs[string(low)] != "") {
		return true
	}
	return !t.weak && (t.kind == tLanguage || string(low) == "vostfr" || string(low) == "vost")
}

// episodeNumber finds an episode given by a bare number: "05 - Title" in
// a season folder, "Show - 12" (anime, hand-made names), "[Group] Show
// 12", and three digits "Show.105" (S01E05) where nothing says otherwise.
func (sc *nameScan) episodeNumber(ts, te, anchor, yi int, ctx nameCtx, lead bool) (i, season, episode int) {
	toks := sc.toks
	if ts < te && toks[ts].kind == tNumber {
		b, v := sc.lowTok(ts), toks[ts].val
		if ctx.season >= 0 && len(b) >= 3 && len(b) <= 4 && v/100 == ctx.season && v%100 > 0 {
			return ts, ctx.season, v % 100
		}
		if len(b) <= 3 && (ctx.season >= 0 || (b[0] == '0' && len(b) >= 2)) && (ts+1 == len(toks) || sc.spacedDash(ts+1) || ctx.season >= 0) {
			return ts, ctx.season, v
		}
	}
	for i := ts + 1; i < anchor; i++ {
		t := &toks[i]
		b := sc.lowTok(i)
		if t.kind != tNumber || i == yi || (len(b) == 4 && yearish(t.val)) {
			continue
		}
		last, dashAfter := i+1 == anchor, sc.spacedDash(i+1)
		if alone := t.br >= 0 && sc.brs[t.br].first == i && sc.brs[t.br].last == i; alone && len(b) == 3 && yi < 0 && t.val%100 > 0 && ctx.season < 0 {
			return i, t.val / 100, t.val % 100 // "Show [401]"
		}
		if i+2 == anchor && len(b) == 3 && yi < 0 && t.val%100 > 0 && ctx.season < 0 && toks[i+1].kind == tNumber &&
			toks[i+1].br >= 0 && sc.brs[toks[i+1].br].first == i+1 && sc.brs[toks[i+1].br].last == i+1 && t.br < 0 {
			return i, t.val / 100, t.val % 100 // "Show 101 (01)": then the episode counted from the first
		}
		if last && yi < 0 && t.br < 0 && versioned(b) > 0 {
			return i, ctx.season, t.val // "Show 07v4": the fourth version of episode 7
		}
		if last && yi < 0 && t.br < 0 && len(b) == 4 && b[0] == '0' && t.val%100 > 0 && t.val/100 > 0 && ctx.season < 0 {
			return i, t.val / 100, t.val % 100 // "Show.0307"
		}
		if s, e := t.val/100, t.val%100; ctx.season >= 0 && yi < 0 && len(b) >= 3 && s == ctx.season && e > 0 && (last || dashAfter || toks[i+1].kind == tWord) {
			return i, s, e // "Season 1/Show - 101 - Pilot", "Season 10/Show.1002.Title"
		}
		if sc.spacedDash(i) && yi < i && (last || dashAfter || toks[i+1].br >= 0 || sc.finale(i+1)) {
			return i, ctx.season, t.val
		}
		if lead && last && yi < 0 {
			return i, ctx.season, t.val
		}
		if yi >= 0 || !(last || dashAfter) || len(b) < 3 || len(b) > 4 || b[0] == '0' {
			continue
		}
		s, e := t.val/100, t.val%100
		switch {
		case ctx.season < 0 && len(b) == 3 && e >= 1 && e <= 30 && (anchor < len(toks) || dashAfter) && t.val != 480 && t.val != 576 && t.val != 720:
			return i, s, e
		}
	}
	return -1, -1, -1
}

// group reads the release group: "x264-GRP", "-GRP[rarbg]", or a
// trailing "[GRP]" after technical tokens or the episode number at ep
// ("One Piece - 1071 [SubsPlease]"). It returns the group's token,
// -1 when there is none.
func (sc *nameScan) group(ts, anchor, ep int, r *Release) int {
	j, cand, candLast := len(sc.toks)-1, -1, -1
	for j >= 0 && sc.toks[j].br >= 0 {
		g := sc.brs[sc.toks[j].br]
		if cand < 0 && sc.groupBracket(g) {
			cand, candLast = g.first, g.last
		}
		j = g.first - 1
	}
	if j > ts && j >= anchor && sc.toks[j].kind == tWord && sc.sep(j) == "-" && sc.technicalAt(j-1) {
		// "[rartv] Show.S02E01.1080p.WEB-DL.H.264-FLUX": the group at the
		// end made the release, the bracket at the start only passed it on.
		r.Group = sc.s[sc.toks[j].start:sc.toks[j].end]
		return j
	}
	if r.Group != "" {
		return -1
	}
	if cand > ts && (cand > anchor && sc.technicalAt(cand-1) || cand-1 == ep) {
		r.Group = sc.s[sc.toks[cand].start:sc.toks[candLast].end]
		return cand
	}
	return -1
}

// groupBracket reports a bracket that may hold a release group: one word,
// or words joined by dashes ("[Erai-raws]").
func (sc *nameScan) groupBracket(g bracket) bool {
	if g.last < g.first || g.last-g.first > 2 {
		return false
	}
	for k := g.first; k <= g.last; k++ {
		if sc.toks[k].kind != tWord && sc.toks[k].kind != tCont || k > g.first && sc.sep(k) != "-" {
			return false
		}
	}
	return true
}

// technicalAt reports a technical token, or a year, at k: what a
// release group follows.
func (sc *nameScan) technicalAt(k int) bool {
	if k < 0 {
		return false
	}
	t := sc.toks[k]
	return isTech(t.kind) || t.kind == tCont || sc.isYear(k)
}

func isTech(k tokKind) bool { return k >= tSource && k <= tOther }

func (sc *nameScan) isYear(i int) bool {
	t := &sc.toks[i]
	return t.kind == tNumber && t.end-t.start == 4 && yearish(t.val)
}

// isCaps reports a word in capitals in a name that has lower-case
// letters: "Movie.FRENCH.2010".
func (sc *nameScan) isCaps(i int) bool {
	if !sc.mixed {
		return false
	}
	t, letters := sc.toks[i], 0
	for k := t.start; k < t.end; k++ {
		c := sc.s[k]
		if 'a' <= c && c <= 'z' {
			return false
		}
		if 'A' <= c && c <= 'Z' {
			letters++
		}
	}
	return letters >= 2
}

// weakEnds reports whether the weak technical word at i ends the title:
// in capitals, or followed by other technical words up to a strong one.
func (sc *nameScan) weakEnds(i int) bool {
	if sc.isCaps(i) {
		return true
	}
	if i < sc.weakTo && i >= sc.weakFrom {
		return sc.weakEnd == 1 || (sc.weakEnd == 2 && sc.toks[i].br >= 0)
	}
	j := i + 1
	for j < len(sc.toks) && (sc.toks[j].kind == tCont || (sc.toks[j].weak && isTech(sc.toks[j].kind))) {
		j++
	}
	sc.weakFrom, sc.weakTo, sc.weakEnd = i, j, 0 // the whole run of weak words has one answer
	if j == len(sc.toks) {
		sc.weakEnd = 2
		return sc.toks[i].br >= 0
	}
	if t := &sc.toks[j]; !t.weak && (isTech(t.kind) || t.kind == tCD || t.kind == tWebsite) {
		sc.weakEnd = 1
	}
	return sc.weakEnd == 1
}

// partEnds reports whether "Part N" at i is a part of the file rather
// than of the title: it ends the name or technical tokens follow.
func (sc *nameScan) partEnds(i int) bool {
	j := i + 1
	for j < len(sc.toks) && sc.toks[j].kind == tCont {
		j++
	}
	if j == len(sc.toks) {
		return true
	}
	t := &sc.toks[j]
	return (isTech(t.kind) && (!t.weak || sc.weakEnds(j))) || t.kind == tCD
}

// finale reports an "END" at token i that follows a show's last
// episode number and ends the name or comes before its brackets ("Show
// - 12 END [1080p]").
func (sc *nameScan) finale(i int) bool {
	if i >= len(sc.toks) || sc.toks[i].br >= 0 || !strings.EqualFold(sc.s[sc.toks[i].start:sc.toks[i].end], "end") {
		return false
	}
	return i+1 == len(sc.toks) || sc.toks[i+1].br >= 0
}

// endsEpisodeTitle reports a token the episode title stops before.
func (sc *nameScan) endsEpisodeTitle(i int) bool {
	t := &sc.toks[i]
	switch t.kind {
	case tWord, tNumber, tCont:
		return t.br >= 0 && sc.brs[t.br].tag
	case tPart:
		// "Title, Part 1" is the episode's title; "Part.1.720p" a part
		return sc.partEnds(i) && i+2 < len(sc.toks)
	}
	return !t.weak || sc.weakEnds(i)
}
