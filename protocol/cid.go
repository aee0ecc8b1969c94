package protocol

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multibase"
	"github.com/multiformats/go-multihash"
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
		return cid.Undef, fmt.Errorf("%w %q: %s", ErrInvalidCID, clip(s), WhyNotCID(s))
	}
	return c, nil
}

// describe turns go-cid's terse errors into a hint a user can act on.

// WhyNotCID says, in words a user can act on, why s is not a CID (go-cid's
// own reasons name decoders and varints and repeat "invalid cid:").
func WhyNotCID(s string) string {
	if len(s) > MaxCIDLength {
		return fmt.Sprintf("%d characters, and a CID has at most %d", len(s), MaxCIDLength)
	}
	if strings.HasPrefix(s, "Qm") { // a CIDv0: base58btc, no multibase prefix
		if len(s) != 46 {
			return fmt.Sprintf("a CIDv0 (Qm…) is 46 characters, this one %d", len(s))
		}
		if _, err := multihash.FromB58String(s); err != nil {
			return "a CIDv0 (Qm…) is base58btc, and this one is not"
		}
	}
	prefix, _ := utf8.DecodeRuneInString(s)
	base, known := multibase.EncodingToStr[multibase.Encoding(prefix)]
	_, data, err := multibase.Decode(s)
	switch {
	case !known:
		return fmt.Sprintf("%q is not a multibase prefix: a CIDv1 starts with one (b for base32, z for base58btc, f for hex…), a CIDv0 with Qm", string(prefix))
	case err != nil:
		return fmt.Sprintf("the text after the multibase prefix %q is not valid %s", string(prefix), base)
	case len(data) < 4: // version, codec, hash function, digest length
		return "too short to be a CID"
	}
	if _, err := cid.Cast(data); err != nil {
		msg := err.Error()
		for strings.HasPrefix(msg, "invalid cid: ") {
			msg = strings.TrimPrefix(msg, "invalid cid: ")
		}
		switch {
		case strings.Contains(msg, "version number"):
			return fmt.Sprintf("its %s text does not start with a CID version (%s)", base, msg)
		case strings.Contains(msg, "length greater than remaining"):
			return "its digest is shorter than its multihash says (cut short or altered?)"
		}
		return fmt.Sprintf("its %s text does not hold a CID: %s", base, msg)
	}
	return "not a CID"
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
