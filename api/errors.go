package api

import (
	"encoding/json"
	"errors"
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
)

// status maps an error to its HTTP status code.
func status(err error) int {
	switch {
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, ErrUnavailable):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// writeError writes {"error": msg} with the status of err.
func writeError(w http.ResponseWriter, err error) {
	writeJSON(w, status(err), map[string]string{"error": err.Error()})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
