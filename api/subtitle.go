package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// MaxSubtitle bounds the subtitle files GET /api/subtitle converts, in
// bytes (a film's SRT is some 100 KB).
const MaxSubtitle = 4 << 20

// ErrNotSubtitle: the file holds no SubRip or WebVTT cue.
var ErrNotSubtitle = errors.New("not a subtitle file (SubRip .srt or WebVTT .vtt)")

// subtitle serves GET /api/subtitle/<cid>: a local subtitle file as
// WebVTT, the format browsers' <track> elements play, converted from
// SubRip on the fly. Like the file itself, the answer never changes.
func (s *Server) subtitle(w http.ResponseWriter, r *http.Request) {
	c, ok := cidRequest(w, r)
	if !ok {
		return
	}
	f, err := s.b.File(r.Context(), c)
	if err != nil {
		s.logFailure(r, "open subtitle", err, "cid", c)
		writeError(w, err)
		return
	}
	defer f.Content.Close()
	if f.Size > MaxSubtitle {
		writeError(w, fmt.Errorf("%w: %s is %d bytes; subtitles are converted up to %d MiB", ErrUnprocessable, c, f.Size, MaxSubtitle>>20))
		return
	}
	src, err := io.ReadAll(io.LimitReader(f.Content, MaxSubtitle))
	if err != nil {
		writeError(w, fmt.Errorf("read subtitle %s: %w", c, err))
		return
	}
	vtt, err := ToWebVTT(src)
	if err != nil {
		writeError(w, fmt.Errorf("%w: %s: %w", ErrUnprocessable, c, err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/vtt; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", `"`+c+`.vtt"`)
	w.Write(vtt)
}

// srtTime is a SubRip or WebVTT time: hours (optional in WebVTT),
// minutes, seconds, and milliseconds after a comma or a dot.
var srtTime = regexp.MustCompile(`^(?:(\d{1,3}):)?(\d{1,2}):(\d{1,2})[,.](\d{1,3})$`)

// fontTag is an SRT <font …> tag, which WebVTT has not.
var fontTag = regexp.MustCompile(`(?i)</?font[^>]*>`)

// ToWebVTT converts a SubRip file (or a WebVTT one, cleaned the same
// way) to WebVTT: UTF-8 (a file that is not is read as Windows-1252,
// which most older SRT files are), a byte-order mark dropped, times
// written HH:MM:SS.mmm, <font> tags dropped (<i>, <b>, <u> kept), cue
// settings and numbers left out. Blocks without a valid time line are
// skipped; a file with no cue at all is ErrNotSubtitle.
func ToWebVTT(src []byte) ([]byte, error) {
	if !utf8.Valid(src) {
		dec, err := charmap.Windows1252.NewDecoder().Bytes(src)
		if err != nil {
			return nil, ErrNotSubtitle
		}
		src = dec
	}
	text := strings.TrimPrefix(string(src), "\ufeff")
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	var out bytes.Buffer
	out.WriteString("WEBVTT\n")
	cues := 0
	for _, block := range strings.Split(text, "\n\n") {
		lines := strings.Split(strings.Trim(block, "\n"), "\n")
		// A cue's time line is its first or, after a number (SRT) or an
		// identifier (WebVTT), its second.
		at := -1
		for i := 0; i < len(lines) && i < 2; i++ {
			if strings.Contains(lines[i], "-->") {
				at = i
				break
			}
		}
		if at < 0 {
			continue
		}
		start, end, ok := cueTimes(lines[at])
		if !ok {
			continue
		}
		var body []string
		for _, l := range lines[at+1:] {
			l = strings.TrimRight(fontTag.ReplaceAllString(l, ""), " \t")
			if l == "" {
				continue
			}
			// "-->" ends a cue's text in WebVTT.
			body = append(body, strings.ReplaceAll(l, "-->", "--&gt;"))
		}
		if len(body) == 0 {
			continue
		}
		fmt.Fprintf(&out, "\n%s --> %s\n%s\n", start, end, strings.Join(body, "\n"))
		cues++
	}
	if cues == 0 {
		return nil, ErrNotSubtitle
	}
	return out.Bytes(), nil
}

// cueTimes reads a time line "00:01:02,500 --> 00:01:04,000 X1:…" as
// its start and end in WebVTT's form; false when either is no time or
// the cue ends before it starts.
func cueTimes(line string) (string, string, bool) {
	a, b, _ := strings.Cut(line, "-->")
	fields := strings.Fields(b)
	if len(fields) == 0 {
		return "", "", false
	}
	start, ms1, ok1 := vttTime(strings.TrimSpace(a))
	end, ms2, ok2 := vttTime(fields[0])
	if !ok1 || !ok2 || ms2 < ms1 {
		return "", "", false
	}
	return start, end, true
}

// vttTime writes a time as HH:MM:SS.mmm, and its milliseconds.
func vttTime(s string) (string, int64, bool) {
	m := srtTime.FindStringSubmatch(s)
	if m == nil {
		return "", 0, false
	}
	num := func(x string) int64 {
		var n int64
		for _, c := range x {
			n = n*10 + int64(c-'0')
		}
		return n
	}
	h, mi, se := num(m[1]), num(m[2]), num(m[3])
	frac := m[4]
	for len(frac) < 3 {
		frac += "0"
	}
	ms := num(frac)
	if mi > 59 || se > 59 {
		return "", 0, false
	}
	total := ((h*60+mi)*60+se)*1000 + ms
	return fmt.Sprintf("%02d:%02d:%02d.%03d", h, mi, se, ms), total, true
}
