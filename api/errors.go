package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/metamesh/node/model"
)

// Sentinel errors of the HTTP API's own; the errors a Backend returns
// for what a request asked are model's (api/model.go names them here).
var (
	// ErrRateLimited: a stranger asked for more federated work than its
	// limit allows (429 with Retry-After); a *RateLimitedError says more.
	ErrRateLimited = errors.New("rate limited")
	// ErrForbidden: a request this node's settings never serve (403).
	ErrForbidden = errors.New("forbidden")
	// ErrTooLarge: a request body, field name or value past its cap (413).
	ErrTooLarge = errors.New("too large")
	// ErrEventsTrimmed: the position an event stream resumes from was
	// trimmed from the capped event stream; the client must reload
	// (the SSE "reset" event).
	ErrEventsTrimmed = errors.New("events trimmed past the resume position")
)

// RateLimitedError refuses a stranger's federated request (strangers.go):
// it unwraps to ErrRateLimited (429, Retry-After: RetryAfter in whole
// seconds), or to ErrForbidden (403) when Limits.Rate is 0 and strangers
// get no federated work at all.
type RateLimitedError struct {
	What Federated
	// Client is the address, or IPv6 /64, the limit applies to.
	Client string
	// Shared is true when the client drew from the bucket that addresses
	// share while every bucket of their own is in use.
	Shared bool
	Limits StrangerLimits
	// RetryAfter is when the client's next token is there (0 with
	// Limits.Rate 0: never).
	RetryAfter time.Duration
}

func (e *RateLimitedError) Error() string {
	what, local := "federated lookups (GET /api/meta of a CID this node does not hold, which asks its peers)", "or ask with ?local=1 for what this node holds"
	if e.What == FederatedSearch {
		what, local = "federated searches (federated=1, which asks this node's peers)", "or search without federated=1 for this node's own hits"
	}
	if e.Limits.Rate == 0 {
		return fmt.Sprintf("%s are closed to clients without the bearer token on this node (--stranger-rate 0): send Authorization: Bearer <token>, %s", what, local)
	}
	shared := ""
	if e.Shared {
		shared = fmt.Sprintf("; more than %d addresses are active, so new ones share one limit", maxStrangers)
	}
	return fmt.Sprintf("%s from %s are limited to %g per second, %d at once, for clients without the bearer token (one limit per IPv4 address or IPv6 /64: --stranger-rate, --stranger-burst%s): retry in %d s, send Authorization: Bearer <token>, %s",
		what, e.Client, e.Limits.Rate, e.Limits.Burst, shared, retryAfterSeconds(e.RetryAfter), local)
}

// Unwrap makes errors.Is(err, ErrRateLimited) hold, or with Limits.Rate 0
// errors.Is(err, ErrForbidden).
func (e *RateLimitedError) Unwrap() error {
	if e.Limits.Rate == 0 {
		return ErrForbidden
	}
	return ErrRateLimited
}

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
	case errors.Is(err, model.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, model.ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, model.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, model.ErrUnavailable):
		return http.StatusServiceUnavailable
	case errors.Is(err, ErrRateLimited):
		return http.StatusTooManyRequests
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, model.ErrUnprocessable):
		return http.StatusUnprocessableEntity
	case errors.Is(err, model.ErrRefused):
		return http.StatusForbidden
	case errors.Is(err, model.ErrPeerFailed):
		return http.StatusBadGateway
	case errors.Is(err, model.ErrPeerTimeout):
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// writeError writes {"error": msg} with the status of err, plus
// "providers" for a NotFoundError and a Retry-After header for a
// RateLimitedError past its limit.
func writeError(w http.ResponseWriter, err error) {
	body := map[string]any{"error": err.Error()}
	if nf := (*model.NotFoundError)(nil); errors.As(err, &nf) {
		body["cid"] = nf.CID
		body["providers"] = append([]string{}, nf.Providers...)
	}
	if se := (*SourcesError)(nil); errors.As(err, &se) {
		body["providers"] = append([]Source{}, se.Providers...)
	}
	if rl := (*RateLimitedError)(nil); errors.As(err, &rl) && errors.Is(err, ErrRateLimited) {
		w.Header().Set("Retry-After", strconv.FormatInt(retryAfterSeconds(rl.RetryAfter), 10))
	}
	writeJSON(w, status(err), body)
}

// writeErrorCode writes {"error": msg} with an explicit status.
func writeErrorCode(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

// writeJSON answers v as indented JSON with code; a v that cannot be
// encoded (a NaN in a document built by hand) is a 500 saying why, not
// a status without its body.
func writeJSON(w http.ResponseWriter, code int, v any) {
	body, err := model.EncodeAnswer(v)
	if err != nil {
		code = http.StatusInternalServerError
		body, _ = model.EncodeAnswer(map[string]string{"error": "cannot encode the answer: " + err.Error()})
	}
	writeBody(w, code, body)
}

var (
	jsonType = []string{"application/json"}
	noSniff  = []string{"nosniff"}
)

// writeBody writes an encoded JSON answer.
func writeBody(w http.ResponseWriter, code int, body []byte) {
	h := w.Header()
	// An error written after a file handler set its headers must not keep
	// them; an answer's headers are otherwise its own two (the values
	// are shared: a header map is copied before it is written).
	if len(h) != 0 {
		for _, k := range []string{"Content-Disposition", "ETag", "Cache-Control", "Last-Modified"} {
			h.Del(k)
		}
	}
	h["Content-Type"] = jsonType
	h["X-Content-Type-Options"] = noSniff
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// logFailure logs what a request's backend call failed with: nothing for
// an answer to the client (a 4xx), Error for a failure of the node's (a
// 5xx), and Debug when the client went away first: the request's context
// ended (a federated lookup abandoned half way), nothing failed. A 503
// is a state the node said once when it began (Redis away, a library
// unavailable, a full data directory): each request it refuses is told
// at Debug, so a page of 50 thumbnails does not log 50 errors.
func (s *Server) logFailure(r *http.Request, what string, err error, args ...any) {
	args = append(args, "err", err)
	switch {
	case r.Context().Err() != nil:
		s.log.Debug(what+" abandoned: the client went away", args...)
	case status(err) == http.StatusServiceUnavailable:
		s.log.Debug(what+": unavailable", args...)
	case status(err) >= 500:
		s.log.Error(what, args...)
	}
}
