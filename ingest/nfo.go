package ingest

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/metamesh/node/protocol"
)

// NFO files: the Kodi format Jellyfin, Emby, tinyMediaManager, Radarr and
// Sonarr write next to a video (<video name>.nfo, movie.nfo, tvshow.nfo,
// an episode's .nfo with one <episodedetails> per episode of the file),
// read into the schema's fields. An NFO that is only a link (Kodi accepts
// an IMDb or TMDB URL) gives the ID.

// MaxNFOSize bounds an NFO file, in bytes; a larger one is skipped.
const MaxNFOSize = 1 << 20

// NFOLanguage is the language key of an NFO's free text (titles/<lang>,
// plot/<lang>): an NFO says nothing of its language, and the tools that
// write NFOs fill them in the library's language, which the seeds' schema
// writes as eng.
const NFOLanguage = "eng"

// maxNFOGenres bounds the genres read from one NFO.
const maxNFOGenres = 32

// ErrBadNFO: an NFO that is not the Kodi format, or not one this reader
// takes (too large, nested too deep, an unknown encoding).
var ErrBadNFO = errors.New("not a readable NFO file")

// NFO is what one NFO file says: its kind ("movie", "tvshow",
// "episodedetails", or "url" for a link alone) and its fields in the
// schema's names (titles/eng, imdbid, genre/0, …). Episodes holds every
// episode of a multi-episode NFO, the first in Fields.
type NFO struct {
	Kind     string
	Fields   map[string]string
	Episodes []int
}

// nfoDoc is the part of the Kodi format that is read.
type nfoDoc struct {
	XMLName       xml.Name
	Title         string      `xml:"title"`
	OriginalTitle string      `xml:"originaltitle"`
	ShowTitle     string      `xml:"showtitle"`
	Year          string      `xml:"year"`
	Premiered     string      `xml:"premiered"`
	Aired         string      `xml:"aired"`
	Plot          string      `xml:"plot"`
	Genres        []string    `xml:"genre"`
	Rating        string      `xml:"rating"`
	Ratings       []nfoRating `xml:"ratings>rating"`
	MPAA          string      `xml:"mpaa"`
	UniqueIDs     []nfoID     `xml:"uniqueid"`
	ID            string      `xml:"id"`
	IMDbID        string      `xml:"imdbid"`
	TMDbID        string      `xml:"tmdbid"`
	TVDbID        string      `xml:"tvdbid"`
	Season        string      `xml:"season"`
	Episode       string      `xml:"episode"`
}

type nfoRating struct {
	Name    string `xml:"name,attr"`
	Default string `xml:"default,attr"`
	Value   string `xml:"value"`
}

type nfoID struct {
	Type  string `xml:"type,attr"`
	Value string `xml:",chardata"`
}

var (
	imdbURL  = regexp.MustCompile(`imdb\.com/(?:[a-z]{2}/)?title/(tt[0-9]{7,10})`)
	tmdbURL  = regexp.MustCompile(`themoviedb\.org/(?:movie|tv)/([0-9]{1,10})`)
	tvdbURL  = regexp.MustCompile(`thetvdb\.com/.*?(?:series|id)[=/]([0-9]{1,10})`)
	numberID = regexp.MustCompile(`^[0-9]{1,10}$`)
	dateISO  = regexp.MustCompile(`^([0-9]{4})-([0-9]{2})-([0-9]{2})`)
)

// ParseNFO reads one NFO file's bytes. Malformed or hostile XML (DTDs
// and entities of its own, more than maxNFODepth levels, an encoding
// other than UTF-8 or Latin-1, more than MaxNFOSize bytes) is
// ErrBadNFO: nothing of it is used.
func ParseNFO(data []byte) (NFO, error) {
	if len(data) > MaxNFOSize {
		return NFO{}, fmt.Errorf("%w: %d bytes, at most %d", ErrBadNFO, len(data), MaxNFOSize)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	utf16Doc := false
	if b, ok := fromUTF16(data); ok {
		data, utf16Doc = b, true // some tools write NFOs in UTF-16 with a byte-order mark
	}
	if err := checkNFOShape(data); err != nil {
		return NFO{}, err
	}
	start := bytes.IndexByte(data, '<')
	if start < 0 {
		return urlNFO(data)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	dec.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		if utf16Doc && strings.HasPrefix(strings.ToLower(label), "utf-16") {
			return in, nil // already read as UTF-16 above
		}
		return nfoCharset(label, in)
	}
	var docs []nfoDoc
	for len(docs) < maxEpisodes {
		var d nfoDoc
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if len(docs) > 0 {
				break // what follows the last element (Kodi allows a URL there)
			}
			return NFO{}, fmt.Errorf("%w: %v", ErrBadNFO, err)
		}
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		return NFO{}, fmt.Errorf("%w: no element", ErrBadNFO)
	}
	kind := docs[0].XMLName.Local
	switch kind {
	case "movie", "tvshow", "episodedetails":
	default:
		return NFO{}, fmt.Errorf("%w: a <%s> element, not <movie>, <tvshow> or <episodedetails>", ErrBadNFO, clipName(kind))
	}
	n := NFO{Kind: kind, Fields: map[string]string{}}
	docs[0].fields(n.Fields)
	if kind == "episodedetails" {
		for _, d := range docs {
			if d.XMLName.Local != "episodedetails" {
				continue
			}
			if e, err := strconv.Atoi(strings.TrimSpace(d.Episode)); err == nil && e >= 0 {
				n.Episodes = append(n.Episodes, e)
			}
		}
		if len(n.Episodes) < 2 {
			n.Episodes = nil
		}
	}
	// A link after the XML fills IDs the elements lack.
	if u, err := urlNFO(data); err == nil {
		for k, v := range u.Fields {
			if n.Fields[k] == "" {
				n.Fields[k] = v
			}
		}
	}
	return n, nil
}

// maxNFODepth bounds the nesting of an NFO's elements (Kodi's go 4 deep).
const maxNFODepth = 32

// checkNFOShape refuses, before any decoding, what an NFO never holds:
// a DTD (where entity tricks live) and elements nested past maxNFODepth.
func checkNFOShape(data []byte) error {
	if bytes.Contains(data, []byte("<!DOCTYPE")) || bytes.Contains(data, []byte("<!ENTITY")) {
		return fmt.Errorf("%w: a DTD", ErrBadNFO)
	}
	depth := 0
	for i := 0; i < len(data); i++ {
		if data[i] != '<' || i+1 >= len(data) {
			continue
		}
		switch c := data[i+1]; {
		case c == '/':
			depth--
		case c == '?' || c == '!':
		default:
			if j := bytes.IndexByte(data[i:], '>'); j > 0 && data[i+j-1] == '/' {
				continue // <empty/>
			}
			if depth++; depth > maxNFODepth {
				return fmt.Errorf("%w: elements nested more than %d deep", ErrBadNFO, maxNFODepth)
			}
		}
	}
	return nil
}

// fromUTF16 turns a document in UTF-16 with its byte-order mark (FF FE
// little-endian, FE FF big-endian) into UTF-8; false for anything else.
func fromUTF16(data []byte) ([]byte, bool) {
	var order binary.ByteOrder
	switch {
	case bytes.HasPrefix(data, []byte{0xff, 0xfe}):
		order = binary.LittleEndian
	case bytes.HasPrefix(data, []byte{0xfe, 0xff}):
		order = binary.BigEndian
	default:
		return nil, false
	}
	data = data[2:]
	units := make([]uint16, len(data)/2)
	for i := range units {
		units[i] = order.Uint16(data[2*i:])
	}
	out := make([]byte, 0, len(data))
	for _, r := range utf16.Decode(units) {
		out = utf8.AppendRune(out, r)
	}
	return out, true
}

// nfoCharset reads the encodings NFOs are written in: UTF-8 (the
// default, any spelling) and Latin-1 (ISO-8859-1, and Windows-1252 read
// as it).
func nfoCharset(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "utf-8", "utf8":
		return in, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "windows-1252", "cp1252":
		b, err := io.ReadAll(io.LimitReader(in, MaxNFOSize))
		if err != nil {
			return nil, err
		}
		out := make([]byte, 0, len(b)*2)
		for _, c := range b {
			out = utf8.AppendRune(out, rune(c))
		}
		return bytes.NewReader(out), nil
	}
	return nil, fmt.Errorf("encoding %q", clipName(label))
}

// urlNFO reads an NFO that is a link: an IMDb, TMDB or TVDB URL.
func urlNFO(data []byte) (NFO, error) {
	n := NFO{Kind: "url", Fields: map[string]string{}}
	if m := imdbURL.FindSubmatch(data); m != nil {
		n.Fields["imdbid"] = string(m[1])
	}
	if m := tmdbURL.FindSubmatch(data); m != nil {
		n.Fields["tmdbid"] = string(m[1])
	}
	if m := tvdbURL.FindSubmatch(data); m != nil {
		n.Fields["tvdbid"] = string(m[1])
	}
	if len(n.Fields) == 0 {
		return NFO{}, fmt.Errorf("%w: neither XML nor a link", ErrBadNFO)
	}
	return n, nil
}

// fields writes what d says into out, in the schema's names; for an
// episode the title is the episode's and showtitle the show's.
func (d *nfoDoc) fields(out map[string]string) {
	set := func(k, v string) {
		if v = cleanText(v); v != "" {
			out[k] = v
		}
	}
	if d.XMLName.Local == "episodedetails" {
		set("episodeTitle", d.Title)
		set("titles/"+NFOLanguage, d.ShowTitle)
	} else {
		set("titles/"+NFOLanguage, d.Title)
		set("originalTitle", d.OriginalTitle)
	}
	date := ""
	for _, v := range []string{d.Premiered, d.Aired} {
		if m := dateISO.FindStringSubmatch(strings.TrimSpace(v)); m != nil && date == "" {
			date = m[0]
		}
	}
	if date != "" {
		out["releasedate"] = date
	}
	year, err := strconv.Atoi(strings.TrimSpace(d.Year))
	if (err != nil || year < 1870 || year > 2200) && date != "" {
		year, _ = strconv.Atoi(date[:4])
	}
	if year >= 1870 && year <= 2200 {
		out["movieYear"] = strconv.Itoa(year)
	}
	if plot := strings.TrimSpace(d.Plot); plot != "" && len(plot) <= 64<<10 && utf8.ValidString(plot) {
		out["plot/"+NFOLanguage] = plot // its paragraphs kept
	}
	g := 0
	for _, v := range d.Genres {
		for _, part := range strings.Split(v, " / ") { // "Drama / Crime", as some tools write them
			if part = cleanText(part); part != "" && g < maxNFOGenres {
				out["genre/"+strconv.Itoa(g)] = part
				g++
			}
		}
	}
	if r, ok := nfoRatingValue(d); ok {
		out["rating"] = r
	}
	set("mpaa", d.MPAA)
	for _, id := range d.UniqueIDs {
		v := strings.TrimSpace(id.Value)
		switch strings.ToLower(id.Type) {
		case "imdb":
			setID(out, "imdbid", v)
		case "tmdb":
			setID(out, "tmdbid", v)
		case "tvdb":
			setID(out, "tvdbid", v)
		}
	}
	setID(out, "imdbid", d.IMDbID)
	setID(out, "tmdbid", d.TMDbID)
	setID(out, "tvdbid", d.TVDbID)
	if id := strings.TrimSpace(d.ID); protocol.ValidIMDbID(id) {
		setID(out, "imdbid", id) // the older <id>, an IMDb ID
	} else if d.XMLName.Local == "tvshow" {
		setID(out, "tvdbid", id) // a show's <id> is its TVDB ID in Kodi's older scraper
	} else {
		setID(out, "tmdbid", id)
	}
	if d.XMLName.Local == "episodedetails" {
		for _, kv := range [][2]string{{"season", d.Season}, {"episode", d.Episode}} {
			if n, err := strconv.Atoi(strings.TrimSpace(kv[1])); err == nil && n >= 0 && n <= 99999 {
				out[kv[0]] = strconv.Itoa(n)
			}
		}
	}
}

// setID sets an ID field once (uniqueid first, then the older elements),
// when v has its shape.
func setID(out map[string]string, k, v string) {
	v = strings.TrimSpace(v)
	if out[k] != "" || v == "" {
		return
	}
	if k == "imdbid" && protocol.ValidIMDbID(v) || k != "imdbid" && numberID.MatchString(v) {
		out[k] = v
	}
}

// nfoRatingValue is <rating>, or the default of <ratings> (else the
// first), as a number of 0..10.
func nfoRatingValue(d *nfoDoc) (string, bool) {
	v := d.Rating
	for i, r := range d.Ratings {
		if i == 0 || strings.EqualFold(r.Default, "true") {
			v = r.Value
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 0 || f > 10 || f != f {
		return "", false
	}
	return strconv.FormatFloat(f, 'f', -1, 64), true
}

// cleanText trims s, folds its runs of white space to single spaces and
// cuts it to 64 KiB: what a field holds.
func cleanText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 64<<10 {
		s = s[:64<<10]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}

// clipName shortens an element or label for an error message.
func clipName(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// NFOReader reads the NFO files that describe a video into its fields
// (store.Flatten layout): <video name>.nfo beside it, else movie.nfo in
// its folder; and the nearest tvshow.nfo in its folder or the two above
// (inside its library), whose show-level fields an episode's own NFO
// overrides. A show's IDs go under show/ (show/imdbid, …): an episode's
// imdbid is its own. An NFO that cannot be read is left out, its error
// returned beside what the others gave.
type NFOReader struct{}

// Name implements Extractor.
func (NFOReader) Name() string { return "nfo" }

// Extract implements Extractor. Only video files get fields.
func (NFOReader) Extract(_ context.Context, s *Subject) (map[string]string, error) {
	if s.FileType != "video" {
		return nil, nil
	}
	out := map[string]string{}
	var errs []error
	read := func(path string) (NFO, bool) {
		n, err := readNFO(s.Library, path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err) // it names the file
			}
			return NFO{}, false
		}
		return n, true
	}
	dir := filepath.Dir(s.Path)
	for d, k := dir, 0; k < 3; d, k = filepath.Dir(d), k+1 {
		if s.Library != "" && !within(s.Library, d) {
			break
		}
		if n, ok := read(filepath.Join(d, "tvshow.nfo")); ok {
			for f, v := range n.Fields {
				switch f {
				case "imdbid", "tmdbid", "tvdbid":
					out["show/"+f] = v
				case "releasedate":
				default:
					out[f] = v
				}
			}
			break
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	stem := strings.TrimSuffix(filepath.Base(s.Path), filepath.Ext(s.Path))
	n, ok := read(filepath.Join(dir, stem+".nfo"))
	if !ok {
		n, ok = read(filepath.Join(dir, "movie.nfo"))
	}
	if ok {
		if hasGenre(n.Fields) {
			for f := range out {
				if strings.HasPrefix(f, "genre/") {
					delete(out, f) // the episode's or film's own genres, not merged with the show's
				}
			}
		}
		for f, v := range n.Fields {
			out[f] = v
		}
		for i, e := range n.Episodes {
			out["episodes/"+strconv.Itoa(i)] = strconv.Itoa(e)
		}
	}
	return out, errors.Join(errs...)
}

func hasGenre(f map[string]string) bool {
	for k := range f {
		if strings.HasPrefix(k, "genre/") {
			return true
		}
	}
	return false
}

// readNFO reads and parses the NFO file at path, inside the library lib
// (the library boundary, OpenInLibrary; any regular file when lib is ""),
// at most MaxNFOSize bytes.
func readNFO(lib, path string) (NFO, error) {
	open := func() (*os.File, os.FileInfo, error) { return OpenInLibrary(lib, path) }
	if lib == "" {
		open = func() (*os.File, os.FileInfo, error) { return openRegular(path) }
	}
	f, _, err := open()
	if err != nil {
		return NFO{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxNFOSize+1))
	if err != nil {
		return NFO{}, fmt.Errorf("%s: %w", path, err)
	}
	n, err := ParseNFO(data)
	if err != nil {
		return NFO{}, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// isNFO reports an NFO file's path.
func isNFO(path string) bool { return strings.EqualFold(filepath.Ext(path), ".nfo") }
