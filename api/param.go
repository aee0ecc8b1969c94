package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/metamesh/node/protocol"
)

// ParseCID reads a CID from a URL path segment: any valid CID (CIDv0,
// any multibase) normalised to its canonical form. Garbage is an error
// wrapping ErrBadRequest that says why.
func ParseCID(s string) (string, error) {
	c, err := protocol.Normalize(s)
	if err != nil {
		// go-cid prefixes every layer of its errors with "invalid cid: ";
		// protocol's message already says so once.
		msg := strings.ReplaceAll(err.Error(), "invalid cid: ", "")
		return "", badRequest("%s", msg)
	}
	return c, nil
}

// boolParam reads a boolean query parameter: absent, "0" or "false" is
// false, "1" or "true" is true; anything else is an error wrapping
// ErrBadRequest.
func boolParam(q url.Values, name string) (bool, error) {
	vs, ok := q[name]
	if !ok {
		return false, nil
	}
	if len(vs) > 1 {
		return false, badRequest("query parameter %q given %d times", name, len(vs))
	}
	switch vs[0] {
	case "1", "true":
		return true, nil
	case "0", "false":
		return false, nil
	}
	return false, badRequest("query parameter %s=%q: want 1, 0, true or false", name, vs[0])
}

// onlyParams refuses query parameters other than allowed, so a typo
// (?locl=1) is an error instead of being ignored.
func onlyParams(q url.Values, allowed ...string) error {
	for k := range q {
		if !slices.Contains(allowed, k) {
			if len(allowed) == 0 {
				return badRequest("unknown query parameter %q: this endpoint takes none", k)
			}
			return badRequest("unknown query parameter %q: this endpoint takes %s", k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// singleParams refuses query parameters other than allowed and any given
// more than once, naming it.
func singleParams(q url.Values, allowed ...string) error {
	for k, vals := range q {
		if !slices.Contains(allowed, k) {
			return badRequest("unknown parameter %q (want %s)", k, strings.Join(allowed, ", "))
		}
		if len(vals) > 1 {
			return badRequest("%s given %d times", k, len(vals))
		}
	}
	return nil
}

// badRequest is an error wrapping ErrBadRequest whose text is only the
// formatted message.
func badRequest(format string, args ...any) error {
	return &statusError{sentinel: ErrBadRequest, msg: fmt.Sprintf(format, args...)}
}

// cidRequest checks a /…/{cid} request: no query parameters but allowed,
// and a valid CID, which it returns in canonical form. On failure it has
// written the JSON error and returns false.
func cidRequest(w http.ResponseWriter, r *http.Request, allowed ...string) (string, bool) {
	if err := onlyParams(r.URL.Query(), allowed...); err != nil {
		writeError(w, err)
		return "", false
	}
	c, err := ParseCID(r.PathValue("cid"))
	if err != nil {
		writeError(w, err)
		return "", false
	}
	return c, true
}
