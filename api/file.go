package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// File is a local file opened for GET /api/file/<cid>.
type File struct {
	// Content is positioned at the start; the handler closes it.
	Content io.ReadSeekCloser
	// Name is the file's base name (Content-Disposition). It may be any
	// bytes the file system allows, UTF-8 or not.
	Name string
	// Size and ModTime are what was hashed (and checked again on open).
	Size    int64
	ModTime time.Time
	// MimeType as stored; "" sends application/octet-stream.
	MimeType string
	// CID is the canonical CID, the ETag.
	CID string
}

// file serves a local file's bytes with http.ServeContent: Range (single
// and multi), If-Range and If-None-Match against the ETag (the canonical
// CID, which names the bytes forever, so the answer is immutable). The
// errors ServeContent decides (416, 412) are answered as JSON like every
// other error; what it serves is passed through untouched.
func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	c, ok := cidRequest(w, r)
	if !ok {
		return
	}
	leave, ok := s.enterStream(w, r)
	if !ok {
		return
	}
	defer leave()
	f, err := s.openFile(r.Context(), s.caller(r), c)
	if err != nil {
		s.logFailure(r, "open file", err, "cid", c)
		writeError(w, err)
		return
	}
	defer f.Content.Close()
	s.serveFile(w, r, f, true)
}

// serveFile answers f's bytes (ranges, conditions, errors as JSON; see
// file). immutable says its URL names these bytes forever (a CID's):
// the answer may then be cached for good; else (a path of /dav/, which
// may name other bytes tomorrow) it is revalidated by its ETag.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, f *File, immutable bool) {
	c := f.CID
	h := w.Header()
	h.Set("ETag", `"`+f.CID+`"`)
	ct := f.MimeType
	if ct == "" {
		ct = "application/octet-stream"
	}
	h.Set("Content-Type", ct)
	h.Set("X-Content-Type-Options", "nosniff")
	// The bytes are the household's, not the API's: a stored HTML file
	// opened directly must not run script with the API's origin.
	h.Set("Content-Security-Policy", "sandbox")
	if immutable {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	h.Set("Content-Disposition", contentDisposition(f.Name))
	if msg := rangeProblem(r); msg != "" {
		h.Set("Content-Range", fmt.Sprintf("bytes */%d", f.Size))
		writeErrorCode(w, http.StatusRequestedRangeNotSatisfiable, fmt.Sprintf("Range %q: %s", r.Header.Get("Range"), msg))
		return
	}
	fw := &fileWriter{ResponseWriter: w, rc: http.NewResponseController(w), stall: s.opts.Stall}
	src := &readRecorder{ReadSeeker: f.Content}
	http.ServeContent(fw, r, f.Name, f.ModTime, src)
	if err := src.failed(); err != nil {
		// The bytes could not be read as they are (a local file that
		// changed since it was hashed, a peer's fetch that stalled):
		// before the first byte that is the answer; after it the stream
		// is cut, so the client sees it incomplete, never a complete
		// answer under an ETag that names other bytes.
		s.log.Warn("serve file: reading the file's bytes failed; the answer is cut short", "cid", c, "sent", fw.committed, "err", err)
		if fw.committed {
			panic(http.ErrAbortHandler)
		}
		for _, k := range []string{"ETag", "Cache-Control", "Content-Length", "Content-Range", "Accept-Ranges", "Last-Modified", "Content-Disposition", "Content-Type"} {
			h.Del(k)
		}
		if status(err) == http.StatusInternalServerError {
			err = fmt.Errorf("%w: reading the file's bytes failed: %v", ErrUnavailable, err)
		}
		writeError(w, err)
		return
	}
	if fw.code == 0 {
		fw.commit()
		return
	}
	switch fw.code {
	case http.StatusRequestedRangeNotSatisfiable:
		// ServeContent sets Content-Range: bytes */size only when no range
		// starts inside the file; it stays on the answer.
		if h.Get("Content-Range") != "" {
			writeErrorCode(w, fw.code, fmt.Sprintf("Range %q: no range starts inside the file's %d bytes", r.Header.Get("Range"), f.Size))
		} else {
			writeErrorCode(w, fw.code, fmt.Sprintf("Range %q is malformed: want bytes=first-last, bytes=first- or bytes=-length, comma-separated", r.Header.Get("Range")))
		}
	case http.StatusPreconditionFailed:
		writeErrorCode(w, fw.code, fmt.Sprintf(`a precondition (If-Match, If-Unmodified-Since) does not hold: the file's ETag is "%s"`, f.CID))
	default:
		msg := strings.TrimSpace(fw.body.String())
		if fw.code >= 500 {
			s.log.Error("serve file", "cid", c, "code", fw.code, "err", msg)
		}
		writeErrorCode(w, fw.code, "serving the file: "+msg)
	}
}

// enterStream counts a file stream of r's client when it is a stranger
// (--public-read), who holds at most maxStrangerStreams at once: each
// holds a descriptor and a goroutine. Past them it answers 429 and
// reports false; else leave ends the stream's count.
func (s *Server) enterStream(w http.ResponseWriter, r *http.Request) (leave func(), ok bool) {
	c := s.caller(r)
	if c.s == nil {
		return func() {}, true
	}
	if !s.streams.enter(c.key) {
		writeErrorCode(w, http.StatusTooManyRequests, fmt.Sprintf("at most %d files at once from one address without the token: finish a download first", maxStrangerStreams))
		return nil, false
	}
	return func() { s.streams.leave(c.key) }, true
}

// maxStrangerStreams caps the /api/file answers one stranger's address
// (an IPv4 address, an IPv6 /64) receives at once.
const maxStrangerStreams = 4

// streamCount counts the file streams open per stranger's address.
type streamCount struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *streamCount) enter(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	if c.n[key] >= maxStrangerStreams {
		return false
	}
	c.n[key]++
	return true
}

func (c *streamCount) leave(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[key]--; c.n[key] <= 0 {
		delete(c.n, key)
	}
}

// maxRanges caps the ranges of one request: 12,000 ranges of "0-0" would
// turn 48 KB of request into a 1.6 MB multipart answer.
const maxRanges = 32

// rangeProblem is why r's Range cannot be served ("" when it can, or
// when http.ServeContent decides): more than maxRanges ranges, or a
// suffix of zero bytes ("-0", which names no byte). A Range with If-Range
// is left to ServeContent, which may serve the whole file instead.
func rangeProblem(r *http.Request) string {
	rng := r.Header.Get("Range")
	if rng == "" || r.Header.Get("If-Range") != "" {
		return ""
	}
	spec, ok := strings.CutPrefix(rng, "bytes=")
	if !ok {
		return ""
	}
	n := 0
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n++
		if strings.HasPrefix(part, "-") && strings.TrimLeft(part[1:], "0") == "" {
			return "a suffix of 0 bytes names no byte"
		}
	}
	if n > maxRanges {
		return fmt.Sprintf("%d ranges, at most %d", n, maxRanges)
	}
	return ""
}

// readRecorder is the file's bytes as http.ServeContent reads them,
// keeping the first error a read gave (io.EOF aside): ServeContent
// drops it.
type readRecorder struct {
	io.ReadSeeker
	mu  sync.Mutex // a multipart answer reads on ServeContent's goroutine
	err error
}

func (r *readRecorder) Read(p []byte) (int, error) {
	n, err := r.ReadSeeker.Read(p)
	if err != nil && err != io.EOF {
		r.mu.Lock()
		if r.err == nil {
			r.err = err
		}
		r.mu.Unlock()
	}
	return n, err
}

func (r *readRecorder) failed() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// fileWriter is the ResponseWriter http.ServeContent writes to: a success
// (200, 206, 304) goes through once its first byte is read (commit), so
// that a file whose first block cannot be read is answered with an error
// instead; an error status and its text/plain body are held back in code
// and body for the handler to answer as JSON.
type fileWriter struct {
	http.ResponseWriter
	code    int // the error status held back; 0 while passing through
	body    bytes.Buffer
	started bool // a status or bytes went through
	// pending is the success status held until the first byte;
	// committed once it went to the client.
	pending   int
	committed bool
	// Every write must go out within stall of its start: a client that
	// stops reading is cut, a slow one that keeps reading is not (the
	// deadline is renewed for each chunk).
	rc    *http.ResponseController
	stall time.Duration
}

// stallChunk is how much goes out under one write deadline.
const stallChunk = 256 << 10

// renew moves the write deadline stall from now.
func (w *fileWriter) renew() {
	if w.rc != nil && w.stall > 0 {
		_ = w.rc.SetWriteDeadline(time.Now().Add(w.stall))
	}
}

func (w *fileWriter) WriteHeader(code int) {
	if !w.started && code >= 400 {
		w.code = code
		return
	}
	if code >= 200 {
		w.started = true
		if !w.committed {
			w.pending = code
			return
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// commit sends the success status held back.
func (w *fileWriter) commit() {
	if w.committed {
		return
	}
	w.committed = true
	if w.pending != 0 {
		w.ResponseWriter.WriteHeader(w.pending)
	}
}

func (w *fileWriter) Write(b []byte) (int, error) {
	if w.code != 0 {
		if w.body.Len() < 1024 {
			w.body.Write(b)
		}
		return len(b), nil
	}
	w.started = true
	w.commit()
	w.renew()
	return w.ResponseWriter.Write(b)
}

func (w *fileWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.code != 0 {
		return io.Copy(io.Discard, r)
	}
	w.started = true
	var total int64
	if !w.committed {
		// The status goes out with the first byte read: a read that
		// fails first leaves the answer to the handler.
		first := make([]byte, 32<<10)
		n, err := r.Read(first)
		for n == 0 && err == nil {
			n, err = r.Read(first)
		}
		if n == 0 {
			if err == io.EOF {
				err = nil
			}
			return 0, err
		}
		m, werr := w.Write(first[:n])
		total += int64(m)
		if werr != nil || err != nil {
			if err == io.EOF {
				err = nil
			}
			return total, errors.Join(werr, err)
		}
	}
	readFrom := func(src io.Reader) (int64, error) { return io.Copy(writerOnly{w.ResponseWriter}, src) }
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		readFrom = rf.ReadFrom
	}
	// In chunks, each under a fresh deadline; a chunk of a file stays one
	// level of io.LimitedReader over it, which net keeps as sendfile.
	inner, left := r, int64(-1)
	if lr, ok := r.(*io.LimitedReader); ok {
		inner, left = lr.R, lr.N
	}
	for left != 0 {
		n := int64(stallChunk)
		if left > 0 {
			n = min(n, left)
		}
		w.renew()
		m, err := readFrom(&io.LimitedReader{R: inner, N: n})
		total += m
		if left > 0 {
			left -= m
		}
		if err != nil || m < n {
			return total, err
		}
	}
	return total, nil
}

// writerOnly hides a writer's other methods (io.Copy then copies).
type writerOnly struct{ w io.Writer }

func (o writerOnly) Write(b []byte) (int, error) { return o.w.Write(b) }

func (w *fileWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// contentDisposition is "inline" with the file name (RFC 6266): an ASCII
// filename= every client reads, and, when that is not the name itself,
// filename*= (RFC 8187) with the name as UTF-8, its invalid bytes (a name
// that is not UTF-8) replaced by U+FFFD, so the header never labels other
// bytes as UTF-8.
func contentDisposition(name string) string {
	if name == "" {
		return "inline"
	}
	fallback := asciiName(name)
	d := mime.FormatMediaType("inline", map[string]string{"filename": fallback})
	if d == "" {
		return "inline"
	}
	if fallback == name {
		return d
	}
	return d + "; filename*=UTF-8''" + extValue(strings.ToValidUTF8(name, "\uFFFD"))
}

// asciiName is name in printable ASCII: accents dropped (é → e), and
// every other byte outside it, quotes and backslashes replaced by "_".
func asciiName(name string) string {
	var b strings.Builder
	for _, r := range norm.NFKD.String(strings.ToValidUTF8(name, "\uFFFD")) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r < ' ' || r > '~' || r == '"' || r == '\\':
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// extValue percent-encodes valid UTF-8 s as an RFC 8187 value-chars: every
// byte but attr-char.
func extValue(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < utf8.RuneSelf && isAttrChar(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// isAttrChar reports an RFC 8187 attr-char: ALPHA, DIGIT and
// !#$&+-.^_`|~.
func isAttrChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}
