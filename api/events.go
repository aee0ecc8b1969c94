package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"
)

// Event is one entry of the node's event stream as GET /api/events sends
// it: CIDs, never the store's root IDs.
type Event struct {
	// ID is the stream ID, sent as the SSE id (Last-Event-ID resumes).
	ID   string `json:"id"`
	Type string `json:"type"`
	// Path and OldPath name the local path of a lifecycle event.
	Path    string `json:"path,omitempty"`
	OldPath string `json:"oldPath,omitempty"`
	// PathBytes and OldPathBytes are the exact names (base64) when Path or
	// OldPath is not valid UTF-8 (JSON then carries U+FFFD for each
	// invalid byte).
	PathBytes    []byte `json:"pathBytes,omitempty"`
	OldPathBytes []byte `json:"oldPathBytes,omitempty"`
	// CID is the canonical CID, when the event is sent, of the file the
	// event changed (for a path event, of the file the path holds, or for
	// a delete the file the path held); "" when the file is gone by then
	// (a purge, the source of a merge, a file's last path deleted).
	CID string `json:"cid,omitempty"`
	// Added and Removed are the CIDs a key-set event added and removed.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	// Into is the canonical CID of the file a merge folded CID into.
	Into      string `json:"into,omitempty"`
	Timestamp int64  `json:"timestamp"` // Unix milliseconds
}

// EventStream delivers events in stream order to one subscriber. It is not
// safe for concurrent use.
type EventStream interface {
	// Next returns the events after the position, waiting up to wait for
	// one; none (and no error) when wait passed. ErrEventsTrimmed means
	// events were lost to the capped stream; the position then moves to
	// the newest entry.
	Next(ctx context.Context, wait time.Duration) ([]Event, error)
	// Position is the ID of the last event delivered.
	Position() string
}

// ErrClosing is what EventStream.Next returns once the node is shutting
// down: the stream then ends without an error event.
var ErrClosing = errors.New("the node is shutting down")

// eventPoll bounds one wait for events, so a stream notices within it that
// its client went away (its subscriber slot is then free again).
const eventPoll = time.Second

var streamID = regexp.MustCompile(`^[0-9]{1,20}-[0-9]{1,20}$`)

// events streams the event feed as server-sent events: one event per
// entry (data: the Event as JSON, id: its stream ID), a "reset" event
// when the resume position was trimmed (the client reloads its state),
// and a comment every Heartbeat so proxies keep the stream open.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r.URL.Query()); err != nil {
		writeError(w, err)
		return
	}
	last := r.Header.Get("Last-Event-ID")
	if last != "" && !streamID.MatchString(last) {
		writeError(w, badRequest("Last-Event-ID %q is not an event ID (want <ms>-<seq>, an id this endpoint sent)", last))
		return
	}
	select {
	case s.subs <- struct{}{}:
		defer func() { <-s.subs }()
	default:
		writeError(w, &statusError{sentinel: ErrUnavailable,
			msg: fmt.Sprintf("too many event subscribers (at most %d); retry later", cap(s.subs))})
		return
	}
	ctx := r.Context()
	es, err := s.b.Events(ctx, last)
	if err != nil {
		writeError(w, err)
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 3000\n: events after %q\n\n", es.Position())
	_ = rc.Flush()
	quiet := time.Now() // since the last thing sent
	for {
		evs, err := es.Next(ctx, min(eventPoll, s.opts.Heartbeat))
		if ctx.Err() != nil || errors.Is(err, ErrClosing) {
			return
		}
		switch {
		case err == nil && len(evs) == 0 && time.Since(quiet) < s.opts.Heartbeat:
			continue
		case errors.Is(err, ErrEventsTrimmed):
			data, _ := json.Marshal(map[string]string{"reason": "events after the resume position were trimmed; reload the state, then follow from this id"})
			fmt.Fprintf(w, "id: %s\nevent: reset\ndata: %s\n\n", es.Position(), data)
		case err != nil:
			s.log.Warn("event stream", "err", err)
			data, _ := json.Marshal(map[string]string{"error": err.Error()})
			fmt.Fprintf(w, "event: error\ndata: %s\n\n", data)
			_ = rc.Flush()
			return // the client reconnects with Last-Event-ID
		case len(evs) == 0:
			fmt.Fprint(w, ": heartbeat\n\n")
		}
		for _, e := range evs {
			data, _ := json.Marshal(e)
			fmt.Fprintf(w, "id: %s\ndata: %s\n\n", e.ID, data)
		}
		if err := rc.Flush(); err != nil {
			return
		}
		quiet = time.Now()
	}
}
