package ingest_test

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/metamesh/node/ingest"
)

// readTable reads a tab-separated table of testdata/names: each line not
// empty and not a comment has cols columns.
func readTable(t testing.TB, name string, cols int) (rows [][]string, lines []int) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "names", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		row := strings.Split(line, "\t")
		if len(row) != cols {
			t.Fatalf("%s:%d: want %d columns, got %d", name, n, cols, len(row))
		}
		rows, lines = append(rows, row), append(lines, n)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows, lines
}

// TestParseReleaseName_RealWorld measures the parser on the project's
// table of real-world release names, written by class (files in release
// folders with abbreviated names, language and site prefixes, multi-part
// films, episode forms, titles with numbers, title words that look like
// tags, shows qualified by a country or year) without reading the
// parser. It prints the films' and the episodes' figures, each of which
// must reach 95%, and each class's.
func TestParseReleaseName_RealWorld(t *testing.T) {
	for _, table := range []string{"realworld.tsv", "heldout2.tsv"} {
		t.Run(table, func(t *testing.T) { realWorld(t, table) })
	}
}

// realWorld measures the parser on one table of class, path, videoType,
// title, year, season and episode.
func realWorld(t *testing.T, table string) {
	rows, lines := readTable(t, table, 7)
	if len(rows) < 300 {
		t.Fatalf("only %d real-world names", len(rows))
	}
	var total, right [2]int // films, episodes
	classTotal, classRight := map[string]int{}, map[string]int{}
	for i, row := range rows {
		c := independentCase{path: row[1], videoType: row[2], title: row[3], year: row[4], season: row[5], episode: row[6], line: lines[i]}
		date := ""
		if len(c.year) == len("2006-01-02") {
			date, c.year = c.year, c.year[:4] // a date-based episode
		}
		kind := 0
		if c.videoType == "episode" {
			kind = 1
		}
		total[kind]++
		classTotal[row[0]]++
		r := ingest.ParseReleaseName(c.path)
		m := independentMisses(c, r)
		if date != "" && r.AirDate != date {
			m = append(m, "air date: got "+strconv.Quote(r.AirDate)+", want "+date)
		}
		if len(m) > 0 {
			t.Logf("miss %s:%d %s %q: %s", table, c.line, row[0], c.path, strings.Join(m, "; "))
			continue
		}
		right[kind]++
		classRight[row[0]]++
	}
	classes := make([]string, 0, len(classTotal))
	for c := range classTotal {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, c := range classes {
		t.Logf("class %s: %d/%d right", c, classRight[c], classTotal[c])
	}
	for kind, name := range []string{"films", "episodes"} {
		acc := float64(right[kind]) / float64(total[kind])
		t.Logf("%s: %d/%d right (%.1f%%)", name, right[kind], total[kind], 100*acc)
		if acc < 0.95 {
			t.Errorf("%s accuracy %.1f%% is below 95%%", name, 100*acc)
		}
	}
}

// TestParseReleaseName_Anime: anime release names (a [Group] first, a
// CRC, absolute episode numbers, a season as "S2", "Season 2" or "2nd
// Season", titles in Japanese script) and names that are no anime: the
// title, season, episode, release group and the anime mark of each.
func TestParseReleaseName_Anime(t *testing.T) {
	rows, lines := readTable(t, "anime.tsv", 6)
	if len(rows) < 60 {
		t.Fatalf("only %d anime names", len(rows))
	}
	for i, row := range rows {
		r := ingest.ParseReleaseName(row[0])
		var m []string
		check := func(what string, got, want any) {
			if got != want {
				m = append(m, what+": got "+strconv.Quote(toString(got))+", want "+strconv.Quote(toString(want)))
			}
		}
		check("title", normTitle(r.Title), normTitle(row[1]))
		check("season", r.Season, num(row[2], -1))
		check("episode", r.Episode, num(row[3], -1))
		check("anime", strconv.FormatBool(r.Anime), row[4])
		check("group", strings.ToLower(r.Group), strings.ToLower(row[5]))
		if len(m) > 0 {
			t.Errorf("anime.tsv:%d %q: %s", lines[i], row[0], strings.Join(m, "; "))
		}
	}
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return strconv.Itoa(v.(int))
}
