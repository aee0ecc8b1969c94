package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/text/encoding/charmap"
)

// MaxSubtitle bounds the subtitle files GET /api/subtitle converts, in
// bytes (a film's SRT is some 100 KB).
const MaxSubtitle = 4 << 20

// Subtitle conversions are bounded: at most MaxSubtitleConversions run at
// once (a 4 MiB file takes some 30 MB while it is converted), a request
// beyond them waits up to Options.SubtitleWait for its turn, then is answered
// 503 with Retry-After; the last SubtitleCache bytes of WebVTT made are
// kept by CID, so a file converted once is served without a read.
const (
	MaxSubtitleConversions = 2
	DefaultSubtitleWait    = 30 * time.Second
	SubtitleCache          = 16 << 20
)

// ErrNotSubtitle: the file holds no SubRip or WebVTT cue.
var ErrNotSubtitle = errors.New("not a subtitle file (SubRip .srt or WebVTT .vtt)")

// subtitles is the Server's share of subtitle work: the conversion slots
// and the WebVTT kept. The zero value is ready (init, once).
type subtitles struct {
	once  sync.Once
	slots chan struct{}
	// converting counts the conversions running (a gauge, with a
	// Registerer).
	converting prometheus.Gauge
	mu         sync.Mutex
	kept       map[string][]byte // WebVTT by CID
	order      []string          // kept's CIDs, oldest first
	size       int               // kept's bytes
}

func (st *subtitles) init(reg prometheus.Registerer) {
	st.once.Do(func() {
		st.slots = make(chan struct{}, MaxSubtitleConversions)
		st.kept = map[string][]byte{}
		st.converting = prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "metamesh_api_subtitle_conversions",
			Help: "Subtitle files being converted to WebVTT now (GET /api/subtitle), at most " + strconv.Itoa(MaxSubtitleConversions) + ".",
		})
		if reg != nil {
			reg.MustRegister(st.converting)
		}
	})
}

// get returns the WebVTT kept for c.
func (st *subtitles) get(c string) ([]byte, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	vtt, ok := st.kept[c]
	return vtt, ok
}

// keep keeps vtt for c, forgetting the oldest kept beyond SubtitleCache.
func (st *subtitles) keep(c string, vtt []byte) {
	if len(vtt) > SubtitleCache/4 {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, ok := st.kept[c]; ok {
		return
	}
	st.kept[c] = vtt
	st.order = append(st.order, c)
	st.size += len(vtt)
	for st.size > SubtitleCache {
		old := st.order[0]
		st.order = st.order[1:]
		st.size -= len(st.kept[old])
		delete(st.kept, old)
	}
}

// errSubtitlesBusy is the 503 of a request that waited SubtitleWait for a
// conversion slot.
var errSubtitlesBusy error = &statusError{sentinel: ErrUnavailable, msg: "too many subtitle conversions at once; try again"}

// subtitle serves GET /api/subtitle/<cid>: a local subtitle file as
// WebVTT, the format browsers' <track> elements play, converted from
// SubRip on the fly. Like the file itself, the answer never changes.
func (s *Server) subtitle(w http.ResponseWriter, r *http.Request) {
	c, ok := cidRequest(w, r)
	if !ok {
		return
	}
	st := &s.subtitles
	st.init(s.opts.Registerer)
	vtt, ok := st.get(c)
	if !ok {
		var err error
		if vtt, err = s.convertSubtitle(r, c); err != nil {
			if errors.Is(err, errSubtitlesBusy) {
				w.Header().Set("Retry-After", "5")
			}
			writeError(w, err)
			return
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/vtt; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", `"`+c+`.vtt"`)
	w.Write(vtt)
}

// convertSubtitle reads the local file c and converts it, in one of the
// conversion slots (waiting up to Options.SubtitleWait for one), and keeps the
// result.
func (s *Server) convertSubtitle(r *http.Request, c string) ([]byte, error) {
	st := &s.subtitles
	wait := time.NewTimer(s.opts.SubtitleWait)
	defer wait.Stop()
	select {
	case st.slots <- struct{}{}:
	case <-wait.C:
		s.log.Warn("subtitle conversions busy: a request waited its turn too long", "cid", c, "waited", s.opts.SubtitleWait)
		return nil, errSubtitlesBusy
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	defer func() { <-st.slots }()
	if vtt, ok := st.get(c); ok { // converted while this one waited
		return vtt, nil
	}
	st.converting.Inc()
	defer st.converting.Dec()
	f, err := s.b.File(r.Context(), c)
	if err != nil {
		s.logFailure(r, "open subtitle", err, "cid", c)
		return nil, err
	}
	defer f.Content.Close()
	if f.Size > MaxSubtitle {
		return nil, fmt.Errorf("%w: %s is %d bytes; subtitles are converted up to %d MiB", ErrUnprocessable, c, f.Size, MaxSubtitle>>20)
	}
	src, err := io.ReadAll(io.LimitReader(f.Content, MaxSubtitle))
	if err != nil {
		return nil, fmt.Errorf("read subtitle %s: %w", c, err)
	}
	vtt, err := ToWebVTT(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrUnprocessable, c, err)
	}
	st.keep(c, vtt)
	return vtt, nil
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
