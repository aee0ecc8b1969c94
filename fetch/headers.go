package fetch

import (
	"mime"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What a download reads of the node's answer besides its bytes: the
// file's name (Content-Disposition) and the range it holds
// (Content-Range). Each is a parser of what a node, or whatever stands
// between it and the download, may send: FuzzFileName and
// FuzzContentRange run them on anything.

// fileName is the name to save the node's answer under: the base of the
// file name it gives (Content-Disposition), with every control
// character as "_", short enough for the names beside it; the CID c
// when it gives none, or none that stays in the directory ("", ".",
// "..").
func fileName(h http.Header, c string) string {
	_, params, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	name := params["filename"]
	name = name[strings.LastIndexAny(name, `/\`)+1:]
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '_'
		}
		return r
	}, name)
	if name == "" || name == "." || name == ".." {
		return c
	}
	return shortName(name, maxNameBytes-len(corruptSuffix))
}

// maxNameBytes is the longest file name most file systems take.
const maxNameBytes = 255

// shortName is name cut to at most n bytes, its extension kept, at a
// character's boundary.
func shortName(name string, n int) string {
	if len(name) <= n {
		return name
	}
	ext := filepath.Ext(name)
	if len(ext) > n/2 {
		ext = ""
	}
	stem := name[:n-len(ext)]
	for !utf8.ValidString(stem) {
		stem = stem[:len(stem)-1]
	}
	return stem + ext
}

// rangeStart is the first byte of a 206 answer's Content-Range
// ("bytes first-last/size").
func rangeStart(h http.Header) (int64, bool) {
	spec, ok := strings.CutPrefix(h.Get("Content-Range"), "bytes ")
	if !ok {
		return 0, false
	}
	first, _, ok := strings.Cut(spec, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(first, 10, 64)
	return n, err == nil
}

// unsatisfiedSize is the file's size a 416 answer gives
// (Content-Range: bytes */size).
func unsatisfiedSize(h http.Header) (int64, bool) {
	s, ok := strings.CutPrefix(h.Get("Content-Range"), "bytes */")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
