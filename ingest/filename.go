package ingest

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
)

// NameParserVersion is the version of the release-name parser
// (ParseReleaseName). Fields extracted from names with an older version
// are extracted again on a rescan, without hashing the file again. Raise
// it whenever the parser reads a name differently.
const NameParserVersion = 6

// Release holds what a media file's path says about its content.
type Release struct {
	Title        string // show or movie title
	Year         int    // release year (of the show, for an episode), 0 when absent
	Season       int    // -1 when absent
	Episode      int    // the first episode, -1 when absent
	Episodes     []int  // every episode of a multi-episode file (S01E01E02), nil for one
	EpisodeTitle string
	AirDate      string // YYYY-MM-DD of a date-based episode ("Show.2013.10.21")
	VideoType    string // movie, episode, other (a home video: homeVideo) or unknown
	Recorded     string // YYYY-MM-DD a home video's name holds ("VID_20190314_181510")

	Source     string   // Blu-ray, WEB-DL, HDTV, DVD…
	Resolution string   // 2160p, 1080p, 720p…
	VideoCodec string   // H.264, H.265, XviD…
	AudioCodec string   // DTS, AC3, AAC…
	Languages  []string // ISO 639-2/B codes ("fre", "ger"), "mul" for multi-language
	Edition    string   // Director's Cut, Extended, Criterion…
	Group      string   // release group
	Part       int      // "Part 2" of a split file, 0 when absent
	CD         int      // "CD1", 0 when absent
	// Country qualifies a title that several countries made ("The Office
	// (US)"): the code in parentheses after it, kept out of Title.
	Country string
	// Anime says the name carries an anime's marks (readAnime); CRC is
	// the CRC-32 tag a fansub group puts in it ("[ABCD1234]").
	Anime bool
	CRC   string
	// AltTitle is a title in brackets after the title, another name of
	// the same work ("Shingeki no Kyojin (Attack on Titan)").
	AltTitle string
}

// Filename reads video files' paths (relative to their library) into the
// fields listed by Release.Fields.
type Filename struct{}

// Name implements Extractor.
func (Filename) Name() string { return "filename" }

// Extract implements Extractor. Only video files get fields.
func (Filename) Extract(_ context.Context, s *Subject) (map[string]string, error) {
	if s.FileType != "video" {
		return nil, nil
	}
	return ParseReleaseName(libraryRelative(s.Path, s.Library)).Fields(), nil
}

// maxFolders is how many parent folders are read when the library root
// is unknown.
const maxFolders = 3

// libraryRelative is path relative to library, or the file and its
// maxFolders parents when library is unknown or does not hold path.
func libraryRelative(path, library string) string {
	path = filepath.ToSlash(path)
	if library != "" {
		lib := strings.TrimSuffix(filepath.ToSlash(library), "/") + "/"
		if rel, ok := strings.CutPrefix(path, lib); ok {
			return rel
		}
	}
	i := len(path)
	for range maxFolders + 1 {
		i = strings.LastIndexByte(path[:i], '/')
		if i < 0 {
			return path
		}
	}
	return path[i+1:]
}

// ParseReleaseName reads a media file's path, relative to its library
// root, or a bare file name. The file name gives the title, year, season
// and episode; the parent folders fill in what it lacks: "Show/Season
// 2/05 - Title.mkv", "Movie (1998)/Movie.720p.mkv", a scene folder
// holding an obfuscated file. It does no I/O.
func ParseReleaseName(rel string) Release {
	rel = slashed(rel)
	dirs, file := "", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dirs, file = rel[:i], rel[i+1:]
	}
	stem := stripExtension(file)
	ctx, title := readFolders(dirs)
	// A film's folder (Movies, "Clip (2020)") says the household filed
	// it as one, whatever its name looks like.
	if recorded, ok := homeVideo(stem, dirs); ok && !ctx.movies && !yearFolder(dirs) {
		// A camera's counter or date is no year, season or episode.
		sc := nameScan{s: stem}
		return Release{Title: sc.clean(0, len(stem)), Season: -1, Episode: -1, VideoType: "other", Recorded: recorded}
	}
	r := Release{Season: -1, Episode: -1}
	before, ep, epTitle, jp := japaneseEpisode(stem)
	if jp {
		parseName(before, ctx, &r) // "呪術廻戦 第24話 「素材」"
		r.Episode, r.EpisodeTitle = ep, epTitle
	} else if info := parseName(stem, ctx, &r); info.technical == 0 && r.Year == 0 && r.Episode < 0 && r.AirDate == "" {
		reversedName(stem, ctx, &r) // "ELBAIMA-462x.yaRulB.p0801.5991.taeH"
	}
	mergeFolder(&r, stem, ctx, title)
	if r.Episode >= 0 {
		ordinalSeason(&r)
	}
	r.Title = elide(r.Title)
	if r.Title == "" && hasLetter(stem) {
		sc := nameScan{s: stem}
		r.Title = sc.clean(0, len(stem)) // nothing better: the name itself
	}
	readAnime(stem, ctx, jp, &r)
	switch {
	case r.Episode >= 0 || r.AirDate != "":
		r.VideoType = "episode"
	case r.Year > 0 || ctx.movies:
		r.VideoType = "movie" // a year, or a movie folder: "Movies/Title/Title.mkv"
	case r.Anime && r.Title != "":
		r.VideoType = "movie" // "[Group] Tenki no Ko [BDRip 1080p]": an anime with no episode is a film
	default:
		r.VideoType = "unknown"
	}
	return r
}

// slashed is a path written with backslashes and maybe a drive letter
// ("D:\TV\Show\Season 07\…", as Windows writes it) with slashes and
// without the drive; any other path as it is (a backslash is a letter of
// a POSIX file name).
func slashed(p string) string {
	if strings.IndexByte(p, '/') >= 0 || strings.IndexByte(p, '\\') < 0 {
		return p
	}
	if len(p) >= 2 && p[1] == ':' && ('a' <= lowerASCII(p[0]) && lowerASCII(p[0]) <= 'z') {
		p = p[2:]
	}
	return strings.TrimLeft(strings.ReplaceAll(p, "\\", "/"), "/")
}

// reversedName reads stem backwards when that makes a release name and
// forwards made nothing but a title (an obfuscation some uploaders use).
func reversedName(stem string, ctx nameCtx, r *Release) {
	if !reversedMarker(stem) {
		return
	}
	b := []byte(stem)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	rev := Release{Season: -1, Episode: -1}
	if info := parseName(string(b), ctx, &rev); info.technical > 0 && (rev.Year > 0 || rev.Episode >= 0) {
		*r = rev
	}
}

// reversedMarker reports a reversed resolution, codec or source in stem
// ("p0801", "462x", "yaRulB"): what a reversed release name holds.
func reversedMarker(stem string) bool {
	if len(stem) < 10 {
		return false
	}
	for _, m := range [...]string{"p0801", "p027", "p0612", "p675", "p084", "462x", "562x", "462h", "562h", "yarulb", "pirbew", "ld-bew", "vtdh"} {
		for i := 0; i+len(m) <= len(stem); i++ {
			if strings.EqualFold(stem[i:i+len(m)], m) {
				return true
			}
		}
	}
	return false
}

// elide restores the French elisions a dotted name loses: "d Amelie" →
// "d'Amelie", "l Homme" → "l'Homme" (a lower-case d or l before a word of
// three letters or more that starts with a vowel or h).
func elide(title string) string {
	if !strings.Contains(title, " d ") && !strings.Contains(title, " l ") {
		return title
	}
	words := strings.Split(title, " ")
	out := words[:1]
	for _, w := range words[1:] {
		prev := out[len(out)-1]
		// 0xc3 leads the UTF-8 of À…ÿ: "d Émilie"
		if (prev == "d" || prev == "l") && len(w) >= 3 && (strings.IndexByte("aeiouyhAEIOUYH", w[0]) >= 0 || w[0] == 0xc3) {
			out[len(out)-1] = prev + "'" + w
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// videoExtensions are stripped from file names; other extensions only
// when they look like one.
var videoExtensions = map[string]bool{"mkv": true, "mp4": true, "avi": true, "m4v": true, "mov": true, "wmv": true,
	"mpg": true, "mpeg": true, "ts": true, "m2ts": true, "mts": true, "webm": true, "flv": true, "ogm": true, "ogv": true,
	"divx": true, "vob": true, "iso": true, "3gp": true, "rmvb": true, "rm": true, "asf": true, "srt": true, "ass": true,
	"sub": true, "idx": true, "nfo": true, "strm": true}

func stripExtension(file string) string {
	i := strings.LastIndexByte(file, '.')
	if i <= 0 || len(file)-i > 6 {
		return file
	}
	ext := strings.ToLower(file[i+1:])
	if videoExtensions[ext] {
		return file[:i]
	}
	if len(ext) < 2 || len(ext) > 4 || !hasLetter(ext) {
		return file
	}
	for j := 0; j < len(ext); j++ {
		if c := ext[j]; !('a' <= c && c <= 'z') && !isDigit(c) {
			return file
		}
	}
	sc := scans.Get().(*nameScan)
	defer scans.Put(sc)
	sc.scan(ext)
	if sc.toks[0].kind != tWord {
		return file // "Show.S01E01.HDTV": no extension
	}
	return file[:i]
}

func hasLetter(s string) bool {
	for _, c := range s {
		if unicode.IsLetter(c) {
			return true
		}
	}
	return false
}

func (r *Release) addLanguage(code string) {
	for _, l := range r.Languages {
		if l == code {
			return
		}
	}
	if len(r.Languages) < 8 {
		r.Languages = append(r.Languages, code)
	}
}

// Fields are the flat metadata keys of a parsed name: titles/eng,
// originalTitle, movieYear, season, episode, episodes/N, episodeTitle,
// releasedate, videoType and release/… (source, resolution, videoCodec,
// audioCodec, languages/N, edition, group, part, cd).
func (r Release) Fields() map[string]string {
	out := map[string]string{"videoType": r.VideoType}
	set := func(k, v string) {
		if v != "" {
			out[k] = v
		}
	}
	num := func(k string, v, min int) {
		if v >= min {
			out[k] = strconv.Itoa(v)
		}
	}
	switch {
	case japanese(r.Title) && (r.Anime || kana(r.Title)):
		set("titles/jpn", r.Title) // "進撃の巨人"
	case r.Anime && romaji(r.Title):
		set("titles/rom", r.Title) // "Shingeki no Kyojin"
	default:
		set("titles/eng", r.Title)
	}
	if r.Anime {
		out["anime"] = "true"
		if !japanese(r.AltTitle) {
			set("titles/eng", r.AltTitle) // "Shingeki no Kyojin (Attack on Titan)"
		}
	}
	set("originalTitle", r.Title)
	num("movieYear", r.Year, 1)
	num("season", r.Season, 0)
	num("episode", r.Episode, 0)
	for i, e := range r.Episodes {
		out["episodes/"+strconv.Itoa(i)] = strconv.Itoa(e)
	}
	set("episodeTitle", r.EpisodeTitle)
	set("releasedate", r.AirDate)
	set("recorded", r.Recorded)
	set("release/source", r.Source)
	set("release/resolution", r.Resolution)
	set("release/videoCodec", r.VideoCodec)
	set("release/audioCodec", r.AudioCodec)
	for i, l := range r.Languages {
		out["release/languages/"+strconv.Itoa(i)] = l
	}
	set("release/edition", r.Edition)
	set("release/group", r.Group)
	set("release/country", r.Country)
	set("release/crc32", r.CRC)
	num("release/part", r.Part, 1)
	num("release/cd", r.CD, 1)
	return out
}
