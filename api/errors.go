package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Sentinel errors a Backend returns; the API maps them to status codes.
var (
	// ErrNotFound: no such CID (404).
	ErrNotFound = errors.New("not found")
	// ErrBadRequest: malformed input (400).
	ErrBadRequest = errors.New("bad request")
	// ErrUnavailable: a dependency (Redis) cannot be reached (503).
	ErrUnavailable = errors.New("unavailable")
	// ErrConflict: the file is known but cannot be served under its
	// identity now: its sha2-256 is not confirmed yet, or it changed on
	// disk since it was hashed (409).
	ErrConflict = errors.New("conflict")
	// ErrEventsTrimmed: the position an event stream resumes from was
	// trimmed from the capped event stream; the client must reload
	// (the SSE "reset" event).
	ErrEventsTrimmed = errors.New("events trimmed past the resume position")
)

// NotFoundError is a 404 that names the peers known to have the file: a
// CID known only from peers is not served (fetching from peers is out of
// scope), but the client learns where to ask.
type NotFoundError struct {
	CID       string
	Providers []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("CID %s is known only from peers; this node has no local copy to serve", e.CID)
}

// Unwrap makes errors.Is(err, ErrNotFound) hold.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// statusError carries a sentinel for the status and a message of its own.
type statusError struct {
	sentinel error
	msg      string
}

func (e *statusError) Error() string { return e.msg }
func (e *statusError) Unwrap() error { return e.sentinel }

// status maps an error to its HTTP status code.
func status(err error) int {
	switch {
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, ErrConflict):
		return http.StatusConflict
	case errors.Is(err, ErrUnavailable):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// writeError writes {"error": msg} with the status of err, plus
// "providers" for a NotFoundError.
func writeError(w http.ResponseWriter, err error) {
	body := map[string]any{"error": err.Error()}
	if nf := (*NotFoundError)(nil); errors.As(err, &nf) {
		body["cid"] = nf.CID
		body["providers"] = append([]string{}, nf.Providers...)
	}
	writeJSON(w, status(err), body)
}

// writeErrorCode writes {"error": msg} with an explicit status.
func writeErrorCode(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	// An error written after a file handler set its headers must not keep
	// them.
	h.Del("Content-Disposition")
	h.Del("ETag")
	h.Del("Cache-Control")
	h.Del("Last-Modified")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
