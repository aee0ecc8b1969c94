package ingest

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Release holds what a media file name says about its content.
type Release struct {
	Title        string // show or movie title
	Year         int    // release year, 0 when absent
	Season       int    // -1 when absent
	Episode      int    // -1 when absent
	EpisodeTitle string
	VideoType    string // movie, episode or unknown
}

var (
	reSxxExx    = regexp.MustCompile(`(?i)(?:^|[\s._\-\[(])s(\d{1,2})[\s._\-]?e(\d{1,4})(?:[\s._\-]?e\d{1,4})*`)
	reNxNN      = regexp.MustCompile(`(?i)(?:^|[\s._\-\[(])(\d{1,2})x(\d{2,3})(?:$|[\s._\-\])])`)
	reSeasonEp  = regexp.MustCompile(`(?i)(?:^|[\s._\-])season[\s._\-]?(\d{1,2})[\s._\-]+episode[\s._\-]?(\d{1,4})`)
	reJunkStart = regexp.MustCompile(`(?i)(?:^|[\s._\-\[(])(2160p|1080p|1080i|720p|576p|480p|4k|uhd|hdr|hdr10|dv|x264|x265|h\.?264|h\.?265|hevc|avc|xvid|divx|bluray|blu-ray|bdrip|brrip|web-?dl|web-?rip|web|hdtv|dvdrip|dvd|remux|proper|repack|extended|unrated|directors\.cut|imax|aac|ac3|dts|ddp?5\.1|atmos|10bit|multi|subbed|dubbed)(?:$|[\s._\-\])])`)
	reBrackets  = regexp.MustCompile(`^\[[^\]]*\]\s*`)
	reSpaces    = regexp.MustCompile(`\s+`)
)

// ParseReleaseName reads title, year, season and episode from common
// release names: "Show.Name.S01E05.1080p.WEB.x264.mkv",
// "Movie Title (2010).mkv", "Movie.Title.2010.1080p.BluRay.x264.mkv",
// "Show - 1x05 - Title.avi".
func ParseReleaseName(name string) Release {
	base := filepath.Base(name)
	if ext := filepath.Ext(base); len(ext) > 1 && len(ext) <= 5 && !strings.ContainsAny(ext[1:], " ") {
		if _, err := strconv.Atoi(ext[1:]); err != nil { // "Movie.2010" has no extension
			base = strings.TrimSuffix(base, ext)
		}
	}
	base = reBrackets.ReplaceAllString(base, "") // leading release-group tag
	r := Release{Season: -1, Episode: -1, VideoType: "unknown"}

	for _, re := range []*regexp.Regexp{reSxxExx, reSeasonEp, reNxNN} {
		m := re.FindStringSubmatchIndex(base)
		if m == nil {
			continue
		}
		r.Season, _ = strconv.Atoi(base[m[2]:m[3]])
		r.Episode, _ = strconv.Atoi(base[m[4]:m[5]])
		r.VideoType = "episode"
		head := base[:m[0]]
		if y := lastYear(head); y.ok {
			head = head[:y.start]
		}
		r.Title = clean(head)
		r.EpisodeTitle = clean(cutJunk(base[m[1]:]))
		return r
	}

	if y := lastYear(base); y.ok && y.start > 0 {
		r.Year = y.year
		r.Title = clean(base[:y.start])
		r.VideoType = "movie"
		return r
	}
	r.Title = clean(cutJunk(base))
	return r
}

type yearMatch struct {
	year  int
	start int
	ok    bool
}

// lastYear finds the last plausible year token that is not the whole
// title ("2001.A.Space.Odyssey.1968" → 1968).
func lastYear(s string) yearMatch {
	sep := func(i int) bool { return i < 0 || i >= len(s) || strings.IndexByte(" ._-[]()", s[i]) >= 0 }
	for i := len(s) - 4; i >= 0; i-- {
		if !sep(i-1) || !sep(i+4) || !(strings.HasPrefix(s[i:], "19") || strings.HasPrefix(s[i:], "20")) {
			continue
		}
		y, err := strconv.Atoi(s[i : i+4])
		if err != nil {
			continue
		}
		if strings.Trim(s[:i], " ._-[(") == "" {
			continue // a title that is a year
		}
		start := i
		if start > 0 {
			start-- // the separator before the year
		}
		return yearMatch{year: y, start: start, ok: true}
	}
	return yearMatch{}
}

func cutJunk(s string) string {
	if m := reJunkStart.FindStringIndex(s); m != nil {
		return s[:m[0]]
	}
	return s
}

// clean turns separators into spaces and trims decoration.
func clean(s string) string {
	if !strings.Contains(s, " ") || strings.Count(s, ".") > 1 {
		s = strings.NewReplacer(".", " ", "_", " ").Replace(s)
	} else {
		s = strings.ReplaceAll(s, "_", " ")
	}
	s = reSpaces.ReplaceAllString(s, " ")
	return strings.TrimSpace(strings.Trim(s, " -([{"))
}

// Fields are the flat metadata keys of a parsed name.
func (r Release) Fields() map[string]string {
	out := map[string]string{"videoType": r.VideoType}
	if r.Title != "" {
		out["titles/eng"] = r.Title
		out["originalTitle"] = r.Title
	}
	if r.Year > 0 {
		out["movieYear"] = strconv.Itoa(r.Year)
	}
	if r.Season >= 0 {
		out["season"] = strconv.Itoa(r.Season)
		out["episode"] = strconv.Itoa(r.Episode)
	}
	if r.EpisodeTitle != "" {
		out["episodeTitle"] = r.EpisodeTitle
	}
	return out
}
