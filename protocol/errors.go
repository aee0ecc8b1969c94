package protocol

import "errors"

// Sentinel errors. Callers test them with errors.Is; the wrapped message
// says which input was rejected and why.
var (
	// ErrEmptyCID is returned for an empty CID string.
	ErrEmptyCID = errors.New("empty CID")
	// ErrInvalidCID is returned for text that does not decode as a CID.
	ErrInvalidCID = errors.New("invalid CID")
	// ErrNotCanonicalForm is returned by ParseStrict for a valid CID that is
	// not written as CIDv1 in multibase base32 lower.
	ErrNotCanonicalForm = errors.New("CID is not in canonical form (CIDv1, base32 lower)")
)
