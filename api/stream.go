package api

import (
	"github.com/metamesh/node/model"

	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"
)

// ErrStreamsBusy is a Streamer's error when every transcode slot is
// taken (503 with Retry-After).
var ErrStreamsBusy = errors.New("every transcode is busy")

// streamRetryAfter is the Retry-After of a 503 for ErrStreamsBusy.
const streamRetryAfter = 10

// streamStall cuts a player that reads nothing of a stream for this long:
// a paused page stops reading (it holds a minute ahead), so the stall of
// files (Options.Stall) would cut it; the page asks again from what it
// holds when it needs more.
const streamStall = 10 * time.Minute

// Streamer is a Backend that also makes streams of files a browser
// cannot play as they are (an optional interface, as PeerFiles is).
type Streamer interface {
	// Stream opens the stream req asks for, from req.Start: fragmented
	// MP4 as it is made, with its Content-Type (codecs included). It
	// reads until the stream is whole (io.EOF) or ctx ends; the last
	// reader of a stream being made that closes it stops it. Errors
	// wrap ErrStreamsBusy.
	Stream(ctx context.Context, req StreamRequest) (io.ReadCloser, string, error)
	// StreamStatus says what the browser is asked about for src and how
	// the latest stream of cid is made.
	StreamStatus(cid string, src StreamSource) StreamStatus
}

// StreamSource is what ffprobe said of a file (its document's
// fileinfo/formatName and the codecs of fileinfo/streamdetails' first
// video and audio).
type StreamSource struct {
	Container string `json:"container"`
	Video     string `json:"video,omitempty"`
	Audio     string `json:"audio,omitempty"`
}

// StreamRequest is one GET /api/stream/<cid>.
type StreamRequest struct {
	CID    string
	Source StreamSource
	// Video and Audio say whether the browser decodes the source's video
	// and audio codecs in fragmented MP4 (?video=1&audio=1).
	Video, Audio bool
	// Start is where the stream starts, in seconds (?start=).
	Start float64
	// Open opens the file's bytes (local, or a peer's over bitswap),
	// once for each read ffmpeg starts.
	Open func(ctx context.Context) (io.ReadSeekCloser, error)
}

// StreamStatus is the answer of GET /api/stream/<cid>/status.
type StreamStatus struct {
	CID    string       `json:"cid"`
	Source StreamSource `json:"source"`
	// VideoType and AudioType are the MIME types the page asks the
	// browser about (MediaSource.isTypeSupported): the codecs as
	// fragmented MP4 carries them; "" for a codec it does not carry as
	// it is (always transcoded) or a stream the file lacks.
	VideoType string `json:"videoType,omitempty"`
	AudioType string `json:"audioType,omitempty"`
	// Transcodes is how many ffmpeg processes make streams now, of Max
	// (--transcodes).
	Transcodes int `json:"transcodes"`
	Max        int `json:"max"`
	// Stream is the latest stream of the file; left out before any.
	Stream *StreamState `json:"stream,omitempty"`
}

// StreamState is how a stream is made (model.StreamState).
type StreamState = model.StreamState

// SlowNote is StreamState.Note of a stream made at speed (< 1).
func SlowNote(speed float64) string {
	return fmt.Sprintf("This machine converts the file for this browser at %.2g× the playing speed: it cannot keep up, so the film will stop now and then to wait for it (a faster machine, or a file this browser plays as it is, plays smoothly).", speed)
}

func (s *Server) routeStream() {
	s.routeCID("/api/stream", s.stream)
	s.mux.HandleFunc("GET /api/stream/{cid}/status", s.streamStatus)
}

// streamer is the backend's Streamer, or the error that says it has none,
// or that the caller may not start streams.
func (s *Server) streamer(r *http.Request) (Streamer, error) {
	st, ok := s.b.(Streamer)
	if !ok {
		return nil, fmt.Errorf("%w: this node makes no streams: ffmpeg is not on its PATH", ErrNotFound)
	}
	if s.caller(r).s != nil {
		return nil, &statusError{sentinel: ErrForbidden, msg: "streams converted for the browser are for the household's own browsers: send Authorization: Bearer <token>, or play GET /api/file/<cid>"}
	}
	return st, nil
}

// stream answers GET /api/stream/<cid>?start=&video=&audio=.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	c, ok := cidRequest(w, r, "start", "video", "audio")
	if !ok {
		return
	}
	req, err := s.streamRequest(r, c)
	if err != nil {
		writeError(w, err)
		return
	}
	st, err := s.streamer(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if req.Source, err = s.streamSource(r, c); err != nil {
		s.logFailure(r, "stream", err, "cid", c)
		writeError(w, err)
		return
	}
	rc, ctype, err := st.Stream(r.Context(), req)
	if err != nil {
		if errors.Is(err, ErrStreamsBusy) {
			w.Header().Set("Retry-After", strconv.Itoa(streamRetryAfter))
			writeErrorCode(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		s.logFailure(r, "stream", err, "cid", c)
		writeError(w, err)
		return
	}
	defer rc.Close()
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	s.copyStream(w, r, rc)
}

// streamRequest reads the query of GET /api/stream/<cid>.
func (s *Server) streamRequest(r *http.Request, c string) (StreamRequest, error) {
	q := r.URL.Query()
	req := StreamRequest{CID: c}
	var err error
	if req.Video, err = boolParam(q, "video"); err != nil {
		return req, err
	}
	if req.Audio, err = boolParam(q, "audio"); err != nil {
		return req, err
	}
	if v := q.Get("start"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return req, badRequest("start=%q: want seconds into the file, a number ≥ 0", v)
		}
		req.Start = f
	}
	from := s.caller(r)
	req.Open = func(ctx context.Context) (io.ReadSeekCloser, error) {
		f, err := s.openFile(ctx, from, c)
		if err != nil {
			return nil, err
		}
		return f.Content, nil
	}
	return req, nil
}

// copyStream sends the stream as it is made, each chunk flushed and
// under a fresh write deadline (streamStall); a stream that fails
// halfway is cut, so the client sees it incomplete.
func (s *Server) copyStream(w http.ResponseWriter, r *http.Request, rc io.Reader) {
	ctl := http.NewResponseController(w)
	buf := make([]byte, 64<<10)
	for {
		n, err := rc.Read(buf)
		if n > 0 {
			_ = ctl.SetWriteDeadline(time.Now().Add(streamStall))
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			_ = ctl.Flush()
		}
		if err == io.EOF || r.Context().Err() != nil {
			return
		}
		if err != nil {
			s.log.Warn("stream cut short", "path", r.URL.Path, "err", err)
			panic(http.ErrAbortHandler)
		}
	}
}

// streamStatus answers GET /api/stream/<cid>/status.
func (s *Server) streamStatus(w http.ResponseWriter, r *http.Request) {
	c, ok := cidRequest(w, r)
	if !ok {
		return
	}
	st, err := s.streamer(r)
	if err != nil {
		writeError(w, err)
		return
	}
	src, err := s.streamSource(r, c)
	if err != nil {
		s.logFailure(r, "stream status", err, "cid", c)
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st.StreamStatus(c, src))
}

// streamSource is what ffprobe said of the file c names, from its
// document.
func (s *Server) streamSource(r *http.Request, c string) (StreamSource, error) {
	doc, err := s.b.Meta(r.Context(), c, false, s.caller(r))
	if err != nil {
		return StreamSource{}, err
	}
	fi := doc.Meta["fileinfo"]
	src := StreamSource{
		Container: metaAt(fi, "formatName"),
		Video:     metaAt(fi, "streamdetails", "video", "0", "codec"),
		Audio:     metaAt(fi, "streamdetails", "audio", "0", "codec"),
	}
	if src.Video == "" && src.Audio == "" {
		return src, fmt.Errorf("%w: %s has no video or audio stream ffprobe saw (fileinfo/streamdetails): nothing to stream", ErrUnprocessable, c)
	}
	return src, nil
}

// metaAt is the string at path under v: object keys, list indices.
func metaAt(v Value, path ...string) string {
	for _, p := range path {
		switch v.Kind {
		case KindObject:
			v = v.Object[p]
		case KindList:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(v.List) {
				return ""
			}
			v = v.List[i]
		default:
			return ""
		}
	}
	if v.Kind != KindString {
		return ""
	}
	return v.Str
}
