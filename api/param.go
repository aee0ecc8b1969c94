package api

import (
	"fmt"

	"github.com/metamesh/node/protocol"
)

// ParseCID reads a CID from a URL path segment: any valid CID (CIDv0,
// any multibase) normalised to its canonical form. Garbage is an error
// wrapping ErrBadRequest that says why.
func ParseCID(s string) (string, error) {
	c, err := protocol.Normalize(s)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	return c, nil
}

// flag reads a boolean query parameter: "1", "true", "yes" are true.
func flag(v string) bool { return v == "1" || v == "true" || v == "yes" }
