package fetch

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

const someCID = "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"

// TestFileName: the node's name for a file is saved under its base
// name only, never outside the directory and with no control character.
func TestFileName(t *testing.T) {
	long := strings.Repeat("é", 200) + ".mkv"
	for _, tt := range []struct{ disposition, want string }{
		{`inline; filename="film.mkv"`, "film.mkv"},
		{`inline; filename="Ame_lie.mkv"; filename*=UTF-8''Am%C3%A9lie.mkv`, "Amélie.mkv"},
		{`inline; filename="../../.bashrc"`, ".bashrc"},
		{`inline; filename="/etc/passwd"`, "passwd"},
		{`inline; filename="a\\b.mkv"`, "b.mkv"},
		{`inline; filename*=UTF-8''..%2F..%2Fx`, "x"},
		{`inline; filename*=UTF-8''a%1B%5B2Jb`, "a_[2Jb"},
		{`inline; filename=".."`, someCID},
		{`inline; filename="dir/"`, someCID},
		{`inline`, someCID},
		{``, someCID},
		{`inline; filename*=UTF-8''` + strings.Repeat("%C3%A9", 200) + ".mkv", long[:238] + ".mkv"},
	} {
		t.Run(tt.disposition, func(t *testing.T) {
			h := http.Header{}
			if tt.disposition != "" {
				h.Set("Content-Disposition", tt.disposition)
			}
			if got := fileName(h, someCID); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestShortName: a name too long for a file system is cut at a
// character's boundary, its extension kept unless it is most of the name.
func TestShortName(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    int
		want string
	}{
		{"film.mkv", 8, "film.mkv"},
		{"films.mkv", 8, "film.mkv"},
		{"ééé.mkv", 9, "éé.mkv"}, // the third é would be cut in two
		{"a.verylongext", 8, "a.verylo"},
		{"noextension", 4, "noex"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := shortName(tt.name, tt.n); got != tt.want {
				t.Errorf("shortName(%q, %d) = %q, want %q", tt.name, tt.n, got, tt.want)
			}
		})
	}
}

// TestRangeStart: the first byte of a 206 answer's Content-Range.
func TestRangeStart(t *testing.T) {
	for _, tt := range []struct {
		header string
		want   int64
		ok     bool
	}{
		{"bytes 300000-1060920/1060921", 300000, true},
		{"bytes 0-0/1", 0, true},
		{"bytes 5-9/*", 5, true},
		{"bytes */1060921", 0, false},
		{"bytes -5/10", 0, false},
		{"bytes=300000-", 0, false},
		{"items 1-2/3", 0, false},
		{"bytes x-2/3", 0, false},
		{"", 0, false},
	} {
		t.Run(tt.header, func(t *testing.T) {
			got, ok := rangeStart(http.Header{"Content-Range": {tt.header}})
			if got != tt.want || ok != tt.ok {
				t.Errorf("got %d, %v; want %d, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestUnsatisfiedSize: the file's size a 416 answer gives.
func TestUnsatisfiedSize(t *testing.T) {
	for _, tt := range []struct {
		header string
		want   int64
		ok     bool
	}{
		{"bytes */1060921", 1060921, true},
		{"bytes */0", 0, true},
		{"bytes */", 0, false},
		{"bytes 0-1/2", 0, false},
		{"bytes */12a", 0, false},
		{"", 0, false},
	} {
		t.Run(tt.header, func(t *testing.T) {
			got, ok := unsatisfiedSize(http.Header{"Content-Range": {tt.header}})
			if got != tt.want || ok != tt.ok {
				t.Errorf("got %d, %v; want %d, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// FuzzFileName: whatever Content-Disposition a node sends, the name is
// the CID or a base name that stays in its directory, has no control
// character, is UTF-8 and leaves room for the longest suffix beside it.
func FuzzFileName(f *testing.F) {
	for _, s := range []string{
		`inline; filename="film.mkv"`,
		`attachment; filename*=UTF-8''..%2F..%2Fx`,
		`inline; filename*=UTF-8''a%1B%5B2Jb`,
		`inline; filename="a\\b.mkv"`,
		`inline; filename*=UTF-8''` + strings.Repeat("%C3%A9", 200) + ".mkv",
		"inline; filename=\"\xff\xfe.mkv\"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, disposition string) {
		got := fileName(http.Header{"Content-Disposition": {disposition}}, someCID)
		if got == someCID {
			return
		}
		switch {
		case got == "" || got == "." || got == "..":
			t.Fatalf("%q: name %q leaves the directory", disposition, got)
		case strings.ContainsAny(got, `/\`):
			t.Fatalf("%q: name %q has a separator", disposition, got)
		case strings.ContainsFunc(got, unicode.IsControl):
			t.Fatalf("%q: name %q has a control character", disposition, got)
		case !utf8.ValidString(got):
			t.Fatalf("%q: name %q is not UTF-8", disposition, got)
		case len(got)+len(corruptSuffix) > maxNameBytes:
			t.Fatalf("%q: name of %d bytes, no room for %s", disposition, len(got), corruptSuffix)
		}
	})
}

// FuzzContentRange: whatever Content-Range a node sends, a start or size
// read from it is the number it holds, written back as the node would.
func FuzzContentRange(f *testing.F) {
	for _, s := range []string{"bytes 300000-1060920/1060921", "bytes */1060921", "bytes 5-9/*", "bytes +5-9/10", "bytes -1/2", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		h := http.Header{"Content-Range": {header}}
		if n, ok := rangeStart(h); ok {
			if n < 0 {
				t.Fatalf("%q: start %d", header, n)
			}
			if again, ok := rangeStart(http.Header{"Content-Range": {fmt.Sprintf("bytes %d-%d/*", n, n)}}); !ok || again != n {
				t.Fatalf("%q: start %d read back as %d, %v", header, n, again, ok)
			}
		}
		if n, ok := unsatisfiedSize(h); ok {
			if again, ok := unsatisfiedSize(http.Header{"Content-Range": {fmt.Sprintf("bytes */%d", n)}}); !ok || again != n {
				t.Fatalf("%q: size %d read back as %d, %v", header, n, again, ok)
			}
		}
	})
}
