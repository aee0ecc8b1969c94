package fetch

import (
	"fmt"
	"net/http"
)

// RefusedError is the node's answer when it is not the file's bytes (a
// 404: no one has the file; a 400: not a CID it takes; ...), in the
// node's words.
type RefusedError struct {
	Answer  *http.Response // the node's answer, its body read and closed
	Message string         // its JSON {"error": ...}; "" when it said nothing
}

func (e *RefusedError) Error() string {
	if e.Message == "" {
		return e.Answer.Status
	}
	return fmt.Sprintf("%s (HTTP %d)", e.Message, e.Answer.StatusCode)
}

// UnreachableError is a request the node did not answer for want of a
// connection. A download that the stall guard or the caller's context
// ended is said as such, never as this.
type UnreachableError struct {
	Err error // the HTTP client's
}

func (e *UnreachableError) Error() string {
	return "cannot reach the node: " + e.Err.Error()
}

func (e *UnreachableError) Unwrap() error { return e.Err }
