package protocol

import (
	"fmt"
	"strings"

	"github.com/ipfs/go-cid"
)

// MaxCIDLength bounds the text of a CID accepted from untrusted input. The
// longest CID the node itself produces is well under 100 characters; the cap
// keeps hostile input from costing more than a small, fixed amount of work.
const MaxCIDLength = 512

// ParseStrict parses s only if it is the canonical string form: a CIDv1
// written in multibase base32 lower, exactly as String() would print it.
// This is the form of every stored key-set member, reverse-index key and
// wire CID.
func ParseStrict(s string) (cid.Cid, error) {
	c, err := decode(s)
	if err != nil {
		return cid.Undef, err
	}
	if c.Version() != 1 || c.String() != s {
		return cid.Undef, fmt.Errorf("%w: %q", ErrNotCanonicalForm, s)
	}
	return c, nil
}

// Normalize accepts any valid CID text (CIDv0 "Qm…", CIDv1 in any
// multibase) and returns its canonical string form. CIDv0 becomes the
// CIDv1 dag-pb CID of the same multihash.
//
// The canonical form is what crosses the wire and what the store keys, so
// it must fit MaxCIDLength as well: base32 takes more characters than
// base58 or base64, and a CID whose input fits the cap but whose canonical
// form does not is an error wrapping both ErrInvalidCID and ErrTooLarge.
func Normalize(s string) (string, error) {
	c, err := decode(strings.TrimSpace(s))
	if err != nil {
		return "", err
	}
	n := cid.NewCidV1(c.Type(), c.Hash()).String()
	if len(n) > MaxCIDLength {
		return "", fmt.Errorf("%w %q: %w: its canonical form (CIDv1, base32 lower) is %d characters, at most %d allowed", ErrInvalidCID, clip(s), ErrTooLarge, len(n), MaxCIDLength)
	}
	return n, nil
}

// IsCanonicalForm reports whether s is a CID in canonical string form.
func IsCanonicalForm(s string) bool {
	_, err := ParseStrict(s)
	return err == nil
}

func decode(s string) (cid.Cid, error) {
	switch {
	case s == "":
		return cid.Undef, ErrEmptyCID
	case len(s) > MaxCIDLength:
		return cid.Undef, fmt.Errorf("%w: %d characters, at most %d allowed", ErrInvalidCID, len(s), MaxCIDLength)
	}
	c, err := cid.Decode(s)
	if err != nil {
		return cid.Undef, fmt.Errorf("%w %q: %s", ErrInvalidCID, clip(s), describe(err))
	}
	return c, nil
}

// describe turns go-cid's terse errors into a hint a user can act on.
func describe(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "selected encoding not supported"), strings.Contains(msg, "multibase"):
		return "unknown multibase prefix or bad characters for its base (" + msg + ")"
	case strings.Contains(msg, "cid too short"):
		return "too short to be a CID"
	case strings.Contains(msg, "multihash"), strings.Contains(msg, "varint"):
		return "the bytes do not hold a valid multihash (" + msg + ")"
	}
	return msg
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
