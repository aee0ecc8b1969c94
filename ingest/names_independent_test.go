package ingest_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/metamesh/node/ingest"
)

// independentCase is one line of testdata/names/independent.tsv: path,
// videoType, title, year, season, episode.
type independentCase struct {
	path, videoType, title, year, season, episode string
	line                                          int
}

func readIndependent(t *testing.T) []independentCase {
	rows, lines := readTable(t, "independent.tsv", 6)
	out := make([]independentCase, len(rows))
	for i, r := range rows {
		out[i] = independentCase{r[0], r[1], r[2], r[3], r[4], r[5], lines[i]}
	}
	return out
}

// normTitle folds case, drops apostrophes and turns any other run of
// punctuation or spaces into one space, so "Ocean's Eleven" matches
// "Oceans Eleven" and "Mission: Impossible - Fallout" matches
// "Mission Impossible Fallout".
func normTitle(s string) string {
	var b strings.Builder
	space := false
	for _, c := range strings.ToLower(s) {
		switch {
		case c == '\'' || c == '’':
		case unicode.IsLetter(c) || unicode.IsDigit(c):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(c)
		default:
			space = true
		}
	}
	return b.String()
}

// num is an expected number: -1 (or 0 for a year) when empty.
func num(s string, absent int) int {
	if s == "" {
		return absent
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

// independentMisses lists what r gets wrong about c: the type and title,
// then the year of a movie or the season and episodes of an episode (the
// air date's year for a date-based one).
func independentMisses(c independentCase, r ingest.Release) []string {
	var out []string
	miss := func(what string, got, want any) {
		out = append(out, fmt.Sprintf("%s: got %v, want %v", what, got, want))
	}
	if r.VideoType != c.videoType {
		miss("type", r.VideoType, c.videoType)
	}
	if normTitle(r.Title) != normTitle(c.title) {
		miss("title", strconv.Quote(r.Title), strconv.Quote(c.title))
	}
	if c.videoType == "movie" {
		if want := num(c.year, 0); r.Year != want {
			miss("year", r.Year, want)
		}
		return out
	}
	if want := num(c.season, -1); r.Season != want {
		miss("season", r.Season, want)
	}
	first, last := c.episode, c.episode
	if a, b, ok := strings.Cut(c.episode, "-"); ok {
		first, last = a, b
	}
	from, to := num(first, -1), num(last, -1)
	if r.Episode != from {
		miss("episode", r.Episode, from)
	}
	var eps []int
	if to > from {
		for e := from; e <= to; e++ {
			eps = append(eps, e)
		}
	}
	if fmt.Sprint(r.Episodes) != fmt.Sprint(eps) && !(len(eps) == 0 && len(r.Episodes) <= 1) {
		miss("episodes", r.Episodes, eps)
	}
	if c.season == "" && c.episode == "" && !strings.HasPrefix(r.AirDate, c.year+"-") {
		miss("air date", strconv.Quote(r.AirDate), c.year+"-…")
	}
	return out
}

// TestParseReleaseName_Independent measures accuracy on a sample written
// before the parser was read: a movie is right when its type, title and
// year are, an episode when its type, title, season and episodes are.
func TestParseReleaseName_Independent(t *testing.T) {
	cases := readIndependent(t)
	if len(cases) < 200 {
		t.Fatalf("only %d independent paths", len(cases))
	}
	var total, right [2]int // movies, episodes
	for _, c := range cases {
		kind := 0
		if c.videoType == "episode" {
			kind = 1
		}
		total[kind]++
		if m := independentMisses(c, ingest.ParseReleaseName(c.path)); len(m) > 0 {
			t.Logf("miss independent.tsv:%d %q: %s", c.line, c.path, strings.Join(m, "; "))
			continue
		}
		right[kind]++
	}
	for kind, name := range []string{"movies", "episodes"} {
		acc := float64(right[kind]) / float64(total[kind])
		t.Logf("%s: %d/%d right (%.1f%%)", name, right[kind], total[kind], 100*acc)
		if acc < 0.90 {
			t.Errorf("%s accuracy %.1f%% is below 90%%", name, 100*acc)
		}
	}
}
