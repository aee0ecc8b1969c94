package model

import (
	"errors"
	"fmt"
)

// Sentinel errors the layers return for what a request asked: callers
// test them with errors.Is, and the HTTP API maps each to its status
// (api/errors.go).
var (
	// ErrNotFound: no such CID (404).
	ErrNotFound = errors.New("not found")
	// ErrBadRequest: malformed input (400).
	ErrBadRequest = errors.New("bad request")
	// ErrUnavailable: a dependency (Redis) cannot be reached, or the
	// library of a file that went away (ingest.LibraryUnavailableError,
	// "library unavailable: /media/films", unwraps to it) (503).
	ErrUnavailable = errors.New("unavailable")
	// ErrConflict: the file is known but cannot be served under its
	// identity now: its sha2-256 is not confirmed yet, or it changed on
	// disk since it was hashed (409).
	ErrConflict = errors.New("conflict")
	// ErrUnprocessable: the file is there but is not what the request
	// needs: no image to make a thumbnail of, no subtitle to convert (422).
	ErrUnprocessable = errors.New("unprocessable")
	// ErrRefused: a peer refused what was asked of it on the household's
	// behalf, as it is free to (a friend's household that does not show
	// its list to this one) (403).
	ErrRefused = errors.New("refused by the peer")
	// ErrPeerFailed: a peer asked on the household's behalf failed to
	// answer, or answered what did not verify (502).
	ErrPeerFailed = errors.New("the peer failed")
	// ErrPeerTimeout: a peer asked on the household's behalf did not
	// answer in time (504).
	ErrPeerTimeout = errors.New("the peer did not answer in time")
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
