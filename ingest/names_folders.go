package ingest

import (
	"bytes"
	"strings"
)

// Parent folders: a season folder gives the season, the nearest folder
// with a title gives what the file name lacks.

// maxFolderDepth bounds how many parent folders are read.
const maxFolderDepth = 6

// titleFolder is the nearest parent folder that names a title.
type titleFolder struct {
	r    Release
	info nameInfo
	ok   bool
}

// genericFolders say nothing about the files they hold.
var genericFolders = map[string]bool{"movies": true, "movie": true, "films": true, "film": true, "tv": true,
	"tv shows": true, "tvshows": true, "tv series": true, "shows": true, "series": true, "anime": true, "videos": true,
	"video": true, "downloads": true, "download": true, "complete": true, "completed": true, "media": true, "kids": true,
	"documentaries": true, "documentary": true, "4k": true, "hd": true, "uhd": true, "new folder": true, "torrents": true,
	"incoming": true, "sample": true, "samples": true, "subs": true, "subtitles": true, "extras": true, "featurettes": true,
	"behind the scenes": true, "deleted scenes": true, "trailers": true, "other": true, "misc": true, "bonus": true,
	"video_ts": true, "bdmv": true, "stream": true, "library": true, "home": true, "mnt": true, "srv": true, "data": true,
	"unsorted": true, "sorted": true, "watched": true, "collection": true, "collections": true, "mkv": true,
	"filme": true}

// movieFolders are the generic folders that hold movies.
var movieFolders = map[string]bool{"movies": true, "movie": true, "films": true, "film": true, "filme": true}

// showFolders are the generic folders that hold shows: a "Part 2" below
// one is an episode, not half of a film.
var showFolders = map[string]bool{"tv": true, "tv shows": true, "tvshows": true, "tv series": true, "shows": true,
	"series": true, "anime": true}

// readFolders reads the folders of dirs from the nearest up, until the
// first one that names a title.
func readFolders(dirs string) (nameCtx, titleFolder) {
	ctx := nameCtx{season: -1}
	var buf [48]byte
	for k := 0; dirs != "" && k < maxFolderDepth; k++ {
		name := dirs
		if i := strings.LastIndexByte(dirs, '/'); i >= 0 {
			name, dirs = dirs[i+1:], dirs[:i]
		} else {
			dirs = ""
		}
		if len(name) <= 1 || name == ".." {
			continue
		}
		if len(name) <= len(buf) {
			low := buf[:len(name)]
			for i := range len(name) {
				low[i] = lowerASCII(name[i])
			}
			if genericFolders[string(low)] {
				ctx.mark(low)
				continue
			}
			if s := seasonFolder(low); s >= 0 {
				if ctx.season < 0 {
					ctx.season = s
				}
				continue
			}
		}
		r := Release{Season: -1, Episode: -1}
		info := parseName(name, nameCtx{season: -1}, &r)
		if r.Season >= 0 && r.Episode < 0 && ctx.season < 0 {
			ctx.season = r.Season // "Season 2", "Show - Season 2", "Show.S02.1080p"
		}
		if r.Title == "" {
			if r.CD > 0 && ctx.cd == 0 {
				ctx.cd = r.CD // "CD1"
			}
			continue // "CD1", "1080p"
		}
		underFolders(dirs, maxFolderDepth-k-1, &ctx)
		return ctx, titleFolder{r: r, info: info, ok: true}
	}
	return ctx, titleFolder{}
}

// underFolders marks ctx with what the last n folders of dirs say of
// the files below them: movies ("Movies/Title/Title.mkv"), shows, anime.
func underFolders(dirs string, n int, ctx *nameCtx) {
	var buf [len("tv series")]byte
	for ; dirs != "" && n > 0; n-- {
		name := dirs
		if i := strings.LastIndexByte(dirs, '/'); i >= 0 {
			name, dirs = dirs[i+1:], dirs[:i]
		} else {
			dirs = ""
		}
		if len(name) > len(buf) {
			continue
		}
		low := buf[:len(name)]
		for i := range len(name) {
			low[i] = lowerASCII(name[i])
		}
		ctx.mark(low)
	}
}

// mark notes what a generic folder, its name in lower case, says of the
// files below it: movies, shows, anime.
func (ctx *nameCtx) mark(low []byte) {
	ctx.movies = ctx.movies || movieFolders[string(low)]
	ctx.shows = ctx.shows || showFolders[string(low)]
	ctx.anime = ctx.anime || string(low) == "anime"
}

// seasonFolder reads the folder names "Specials" (season 0) and
// "Series 2" (which in a file name is no season without an episode).
func seasonFolder(low []byte) int {
	if string(low) == "specials" || string(low) == "special" {
		return 0
	}
	k := bytes.IndexByte(low, ' ')
	if k < 0 {
		return -1
	}
	word, rest := bytes.TrimSuffix(low[:k], []byte(".")), low[k+1:]
	if !folderSeasonWords[string(word)] {
		return -1
	}
	if v, ok := number(rest); ok && v < 100 {
		return v
	}
	return roman(rest) // "Season IV", "Livre II"
}

// folderSeasonWords name a season in a folder's name: "Series 2" (which
// in a file name is no season without an episode), "Seizoen 2", "Temp. 3",
// "Livre II".
var folderSeasonWords = map[string]bool{"series": true, "season": true, "saison": true, "staffel": true, "temporada": true,
	"temp": true, "stagione": true, "seizoen": true, "sezon": true, "livre": true, "book": true}

// roman reads a Roman numeral up to 39 (lower case), -1 for anything else.
func roman(s []byte) int {
	v := 0
	for len(s) > 0 && s[0] == 'x' {
		v, s = v+10, s[1:]
	}
	switch {
	case bytes.HasPrefix(s, []byte("ix")):
		v, s = v+9, s[2:]
	case bytes.HasPrefix(s, []byte("iv")):
		v, s = v+4, s[2:]
	case len(s) > 0 && s[0] == 'v':
		v, s = v+5, s[1:]
	}
	for n := 0; len(s) > 0 && s[0] == 'i' && n < 3; n++ {
		v, s = v+1, s[1:]
	}
	if len(s) != 0 || v == 0 || v > 39 {
		return -1
	}
	return v
}

// mergeFolder fills what the file name r lacks from the folders: the
// season of a season folder; title, year, episode and release fields of
// the title folder when the file names the same title, names none, or is
// an obfuscated name ("grp-mt.avi") inside a release folder.
func mergeFolder(r *Release, stem string, ctx nameCtx, tf titleFolder) {
	if r.Season < 0 && ctx.season >= 0 && (r.Episode >= 0 || r.Title == "") {
		r.Season = ctx.season
	}
	if r.CD == 0 {
		r.CD = ctx.cd
	}
	if !tf.ok {
		return
	}
	d := &tf.r
	release := tf.info.technical > 0 || d.Year > 0 || d.Season >= 0 || d.Episode >= 0
	fromFolder := false
	if r.Title == "" || (release && (placeholder(stem) || groupPrefixed(stem, d.Group) || !hasLetter(stem) || obfuscated(stem) && !sameTitle(r.Title, d.Title))) {
		r.Title, fromFolder = d.Title, true
	}
	if !fromFolder && d.Country != "" && r.Country == "" && strings.EqualFold(alnumOf(r.Title), alnumOf(d.Title+d.Country)) {
		r.Title, r.Country = d.Title, d.Country // "Euphoria (US)/euphoria.us.s02e01.mkv"
	}
	if !fromFolder && !sameTitle(r.Title, d.Title) {
		return
	}
	if !fromFolder && !hasUpper(r.Title) && hasUpper(d.Title) && strings.EqualFold(alnumOf(r.Title), alnumOf(d.Title)) {
		r.Title = d.Title // "The Matrix (1999)/the.matrix.1999.mkv": the folder's casing
	}
	if r.Year == 0 {
		r.Year = d.Year
	}
	if r.Season < 0 && d.Season >= 0 && (r.Episode >= 0 || fromFolder) {
		r.Season = d.Season
	}
	if fromFolder && r.Episode < 0 && r.AirDate == "" {
		r.Episode, r.Episodes, r.AirDate = d.Episode, d.Episodes, d.AirDate
		if r.EpisodeTitle == "" {
			r.EpisodeTitle = d.EpisodeTitle
		}
	}
	fill := func(f *string, v string) {
		if *f == "" {
			*f = v
		}
	}
	fill(&r.Source, d.Source)
	fill(&r.Resolution, d.Resolution)
	fill(&r.VideoCodec, d.VideoCodec)
	fill(&r.AudioCodec, d.AudioCodec)
	fill(&r.Edition, d.Edition)
	fill(&r.Group, d.Group)
	if len(r.Languages) == 0 {
		r.Languages = d.Languages
	}
}

// hasUpper reports an ASCII capital in s.
func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// alnumOf is s's letters and digits alone.
func alnumOf(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x80 && !(isDigit(byte(r)) || 'a' <= r|0x20 && r|0x20 <= 'z') {
			return -1
		}
		return r
	}, s)
}

// placeholder reports a file name that stands for whatever its folder
// holds: "movie", "title_t00" (a disc rip), "main", a DVD's "VTS_01_1".
func placeholder(stem string) bool {
	low := strings.ToLower(stem)
	switch low {
	case "movie", "video", "film", "feature", "main", "main feature", "video_ts":
		return true
	}
	return strings.HasPrefix(low, "title_t") || strings.HasPrefix(low, "title t") || strings.HasPrefix(low, "vts_")
}

// obfuscated reports a file name that may not name its content: a short
// scene name ("grp-mt"), a hash, one lower-case word.
func obfuscated(stem string) bool {
	if len(stem) <= 3 {
		return true
	}
	upper, sep := false, false
	for i := 0; i < len(stem); i++ {
		c := stem[i]
		upper = upper || ('A' <= c && c <= 'Z')
		sep = sep || c == ' ' || c == '.' || c == '_'
	}
	return !sep && (!upper || len(stem) >= 16 && !strings.ContainsRune(stem, '-') || randomName(stem))
}

// randomName reports one run of letters and digits that changes case or
// between letters and digits at least four times ("aXk29Qz7LmPw"): no
// word anyone types.
func randomName(stem string) bool {
	if len(stem) < 8 {
		return false
	}
	class := func(c byte) int {
		switch {
		case isDigit(c):
			return 0
		case 'a' <= c && c <= 'z':
			return 1
		case 'A' <= c && c <= 'Z':
			return 2
		}
		return -1
	}
	flips := 0
	for i := 1; i < len(stem); i++ {
		a, b := class(stem[i-1]), class(stem[i])
		if a < 0 || b < 0 {
			return false
		}
		if a != b {
			flips++
		}
	}
	return flips >= 4
}

// sameTitle compares two titles by their letters and digits; one may
// extend the other ("Star Wars" and "Star Wars Episode IV").
func sameTitle(a, b string) bool {
	alnum := func(c byte) bool { c = lowerASCII(c); return 'a' <= c && c <= 'z' || isDigit(c) || c >= 0x80 }
	i, j, n := 0, 0, 0
	for {
		for i < len(a) && !alnum(a[i]) {
			i++
		}
		for j < len(b) && !alnum(b[j]) {
			j++
		}
		if i == len(a) || j == len(b) {
			return n > 0 && (n >= 4 || i == len(a) && j == len(b))
		}
		if lowerASCII(a[i]) != lowerASCII(b[j]) {
			return false
		}
		i, j, n = i+1, j+1, n+1
	}
}

// groupPrefixed reports a scene file name that starts with its folder's
// release group: "ALLiANCE-tdkr" in "….x264-ALLiANCE".
func groupPrefixed(stem, group string) bool {
	if group == "" {
		return false
	}
	if len(stem) > 4 && strings.EqualFold(stem[:4], "www.") {
		if i := strings.IndexAny(stem, "_ "); i > 0 {
			stem = strings.TrimLeft(stem[i:], "_ -") // "www.site.net_grp-ttl"
		}
	}
	i := strings.IndexAny(stem, "-_")
	if i <= 0 || i+1 >= len(stem) {
		return false
	}
	p := stem[:i]
	return strings.EqualFold(p, group) || len(p) <= 5 && abbreviates(strings.ToLower(p), strings.ToLower(group))
}

// abbreviates reports letters that abbreviate a group's name: its first,
// then others of it in order ("sph" of "saphire", "f" of "felony").
func abbreviates(p, group string) bool {
	if p == "" || group == "" || p[0] != group[0] {
		return false
	}
	k := 0
	for i := 0; i < len(group) && k < len(p); i++ {
		if group[i] == p[k] {
			k++
		}
	}
	return k == len(p)
}
