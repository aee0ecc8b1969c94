package ingest_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/metamesh/node/ingest"
)

// nameCase is one line of a testdata/names table.
type nameCase struct {
	rule, path string
	want       map[string]string // short keys, see fieldKeys
	line       int
}

// fieldKeys maps the short keys of the tables to field names; lists
// (lang, eps) are expanded by wantFields.
var fieldKeys = map[string]string{
	"title": "titles/eng", "rom": "titles/rom", "jpn": "titles/jpn", "anime": "anime", "crc": "release/crc32", "year": "movieYear", "type": "videoType", "s": "season", "e": "episode",
	"etitle": "episodeTitle", "date": "releasedate", "source": "release/source", "res": "release/resolution",
	"vcodec": "release/videoCodec", "acodec": "release/audioCodec", "edition": "release/edition",
	"group": "release/group", "part": "release/part", "cd": "release/cd", "country": "release/country",
	"recorded": "recorded",
}

// mustReadNames reads a table of tab-separated lines: rule, path, key=value…
func mustReadNames(tb testing.TB, name string) []nameCase {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", "names", name))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	var out []nameCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) < 3 {
			tb.Fatalf("%s:%d: want rule, path and at least one key=value", name, n)
		}
		c := nameCase{rule: cols[0], path: cols[1], want: map[string]string{}, line: n}
		for _, kv := range cols[2:] {
			k, v, ok := strings.Cut(kv, "=")
			if _, known := fieldKeys[k]; !ok || (!known && k != "lang" && k != "eps") {
				tb.Fatalf("%s:%d: bad expectation %q", name, n, kv)
			}
			c.want[k] = v
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// wantFields expands short keys into the fields they stand for; an empty
// value means the field must be absent.
func wantFields(want map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range want {
		switch k {
		case "lang", "eps":
			prefix := map[string]string{"lang": "release/languages/", "eps": "episodes/"}[k]
			var items []string
			if v != "" {
				items = strings.Split(v, ",")
			}
			for i, item := range items {
				out[prefix+strconv.Itoa(i)] = item
			}
			out[prefix+strconv.Itoa(len(items))] = ""
		default:
			out[fieldKeys[k]] = v
		}
	}
	return out
}

// mismatches lists the wanted fields that got differs in.
func mismatches(got, want map[string]string) []string {
	var out []string
	for k, v := range want {
		if got[k] != v {
			out = append(out, k+": got "+strconv.Quote(got[k])+", want "+strconv.Quote(v))
		}
	}
	return out
}

func TestParseReleaseName_Rules(t *testing.T) {
	cases := mustReadNames(t, "rules.tsv")
	if len(cases) < 300 {
		t.Fatalf("only %d rule cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.rule+"/"+c.path, func(t *testing.T) {
			got := ingest.ParseReleaseName(c.path).Fields()
			for _, m := range mismatches(got, wantFields(c.want)) {
				t.Errorf("rules.tsv:%d %q: %s", c.line, c.path, m)
			}
		})
	}
}

// TestParseReleaseName_HeldOut measures accuracy on paths written apart
// from the rules: title and year for movies, title, season and episode
// (or air date) for episodes.
func TestParseReleaseName_HeldOut(t *testing.T) {
	cases := mustReadNames(t, "heldout.tsv")
	if len(cases) < 100 {
		t.Fatalf("only %d held-out paths", len(cases))
	}
	var total, right [2]int // movies, episodes
	for _, c := range cases {
		kind := 0
		if c.want["type"] == "episode" {
			kind = 1
		}
		total[kind]++
		got := ingest.ParseReleaseName(c.path).Fields()
		if m := mismatches(got, wantFields(c.want)); len(m) > 0 {
			t.Logf("heldout.tsv:%d %q: %s", c.line, c.path, strings.Join(m, "; "))
			continue
		}
		right[kind]++
	}
	for kind, name := range []string{"movies", "episodes"} {
		if total[kind] == 0 {
			continue
		}
		acc := float64(right[kind]) / float64(total[kind])
		t.Logf("%s: %d/%d right (%.1f%%)", name, right[kind], total[kind], 100*acc)
		if acc < 0.90 {
			t.Errorf("%s accuracy %.1f%% is below 90%%", name, 100*acc)
		}
	}
}

func FuzzParseReleaseName(f *testing.F) {
	for _, s := range []string{"Show.Name.S01E05.1080p.WEB.x264.mkv", "Movie Title (2010).mkv", "", "(2010).mkv",
		"[Group] Show - 12 [1080p].mkv", "Show/Season 2/05 - Title.mkv", "S.H.I.E.L.D.S01E01-E03", "a/b/c/d/e/f/g.mkv",
		"Movie.2010.DDP5.1.H.264-GRP[site.com].mkv", "09.03.08.x-f2-y-x3-.avi"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := ingest.ParseReleaseName(s)
		switch r.VideoType {
		case "movie", "episode", "other", "unknown":
		default:
			t.Fatalf("videoType %q", r.VideoType)
		}
		// A path without a slash but with backslashes is a Windows one:
		// its file name is after the last backslash.
		sep := "/"
		if !strings.Contains(s, "/") && strings.Contains(s, `\`) {
			sep = `\`
		}
		file := s[strings.LastIndex(s, sep)+1:]
		if ext := strings.LastIndexByte(file, '.'); ext > 0 {
			file = file[:ext]
		}
		if strings.IndexFunc(file, unicode.IsLetter) >= 0 && r.Title == "" {
			t.Fatalf("no title for %q", s)
		}
		_ = r.Fields()
	})
}

// BenchmarkParseReleaseName parses a mix of the rule and held-out paths.
func BenchmarkParseReleaseName(b *testing.B) {
	var paths []string
	for _, table := range []string{"rules.tsv", "heldout.tsv"} {
		for _, c := range mustReadNames(b, table) {
			paths = append(paths, c.path)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = ingest.ParseReleaseName(paths[i%len(paths)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "names/s")
}
