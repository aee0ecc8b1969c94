package stremio_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/metamesh/node/node/stremio"
)

const aCID = "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"

func TestParseID(t *testing.T) {
	tests := []struct {
		in   string
		want stremio.ID
	}{
		{"tt0113277", stremio.ID{IMDb: "tt0113277"}},
		{"tt0903747:1:2", stremio.ID{IMDb: "tt0903747", Episode: true, Season: 1, Number: 2}},
		{"tt0903747:0:0", stremio.ID{IMDb: "tt0903747", Episode: true}},
		{"tt1234567890:99999:12", stremio.ID{IMDb: "tt1234567890", Episode: true, Season: 99999, Number: 12}},
		{"mm:" + aCID, stremio.ID{CID: aCID}},
		{"mm:show:lighthouse-keepers", stremio.ID{Show: "lighthouse keepers"}},
		{"mm:show:lighthouse-keepers:2:1", stremio.ID{Show: "lighthouse keepers", Episode: true, Season: 2, Number: 1}},
		{"mm:show:café-24", stremio.ID{Show: "café 24"}},
		{"mm:show:~3f3f3a21", stremio.ID{Show: "??:!"}},
		{"mm:show:~3f3f3a21:1:3", stremio.ID{Show: "??:!", Episode: true, Season: 1, Number: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := stremio.ParseID(tt.in)
			if err != nil {
				t.Fatalf("ParseID(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseID(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			if s := got.String(); s != tt.in {
				t.Errorf("%+v written %q, want %q", got, s, tt.in)
			}
		})
	}
}

func TestParseID_Refused(t *testing.T) {
	tests := map[string]string{
		"":                   "empty",
		"tt12":               "not an IMDb ID",
		"tt0113277x":         "not an IMDb ID",
		"nm0000001":          "want tt",
		"tt0903747:1":        "<season>:<episode>",
		"tt0903747:1:2:3":    "episode",
		"tt0903747:-1:2":     "season",
		"tt0903747:+1:2":     "season",
		"tt0903747:1:100000": "episode",
		"tt0903747:1:":       "episode",
		"tt0903747:":         "<season>:<episode>",
		"mm:QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG": "canonical form",
		"mm:" + aCID + ":1:2":                               "names no episode",
		"mm:":                                               "canonical form",
		"mm:show:":                                          "show key",
		"mm:show:a--b":                                      "show key",
		"mm:show:-a":                                        "show key",
		"mm:show:a.b":                                       "show key",
		"mm:show:~zz":                                       "hex",
		"mm:show:~":                                         "hex",
		"mm:show:~ff":                                       "hex",
		"mm:show:a:x:1":                                     "season",
		"tt0113277\xff":                                     "UTF-8",
		strings.Repeat("t", 2000):                           "bytes",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			_, err := stremio.ParseID(in)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("ParseID(%.40q) = %v, want an error saying %q", in, err, want)
			}
		})
	}
}

func TestShowID(t *testing.T) {
	for _, key := range []string{"lighthouse keepers", "the office us", "x", "??", "a  b", " a", "ä ö 1", "a:b"} {
		id := stremio.ShowID(key)
		got, err := stremio.ParseID(id)
		if err != nil || got.Show != key {
			t.Errorf("ShowID(%q) = %q, read back %+v, %v", key, id, got, err)
		}
	}
}

func TestParseExtra(t *testing.T) {
	tests := []struct {
		in   string
		want stremio.Extra
	}{
		{"", stremio.Extra{}},
		{"skip=100", stremio.Extra{Skip: 100}},
		{"search=game%20of%20thrones", stremio.Extra{Search: "game of thrones"}},
		{"search=a%26b%3Dc&skip=0", stremio.Extra{Search: "a&b=c"}},
		{"skip=20&search=heat", stremio.Extra{Search: "heat", Skip: 20}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := stremio.ParseExtra(tt.in)
			if err != nil || got != tt.want {
				t.Errorf("ParseExtra(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
	for in, want := range map[string]string{
		"skip=-1":                            "skip",
		"skip=+1":                            "skip",
		"skip=1048577":                       "skip",
		"skip=x":                             "skip",
		"skip=1&skip=2":                      "2 times",
		"genre=Drama":                        "search and skip",
		"search=":                            "search of 0 bytes",
		"search=%ff":                         "UTF-8",
		"search=%zz":                         "not name=value",
		"search=" + strings.Repeat("a", 257): "search of 257 bytes",
	} {
		if _, err := stremio.ParseExtra(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseExtra(%.40q) = %v, want an error saying %q", in, err, want)
		}
	}
}

// FuzzParse: the ID and extra parsers take any bytes a request carries
// without panicking, and what they accept is well formed and reads back
// the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"tt0113277", "tt0903747:1:2", "mm:" + aCID, "mm:show:a-b:1:2", "mm:show:~3f", "search=a%20b&skip=3", "skip=", "%", "mm:show:~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if id, err := stremio.ParseID(s); err == nil {
			n := 0
			for _, v := range []string{id.IMDb, id.CID, id.Show} {
				if v != "" {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("ParseID(%q) = %+v: want exactly one of IMDb, CID, Show", s, id)
			}
			again, err := stremio.ParseID(id.String())
			if err != nil || again != id {
				t.Fatalf("ParseID(%q) = %+v, written %q, read back %+v, %v", s, id, id.String(), again, err)
			}
			if id.Season < 0 || id.Number < 0 || id.Season > 99999 || id.Number > 99999 {
				t.Fatalf("ParseID(%q): season %d episode %d", s, id.Season, id.Number)
			}
		}
		if e, err := stremio.ParseExtra(s); err == nil {
			if e.Skip < 0 || e.Skip > stremio.MaxSkip || len(e.Search) > stremio.MaxSearch || !utf8.ValidString(e.Search) {
				t.Fatalf("ParseExtra(%q) = %+v", s, e)
			}
		}
	})
}
