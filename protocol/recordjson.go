package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// decodeWire reads the record JSON token by token, so that what it accepts
// reads the same in every implementation: encoding/json alone would match
// field names case-insensitively, let a repeated field or meta key win
// silently, and turn a null meta value into "". withName allows the
// optional "name" of 1.1.0.
func decodeWire(data []byte, withName bool) (wireRecord, error) {
	var w wireRecord
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := wantDelim(dec, '{'); err != nil {
		return w, err
	}
	seen := make(map[string]bool, 5)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return w, malformed(err)
		}
		key, _ := tok.(string) // an object's keys are strings
		if seen[key] {
			return w, fmt.Errorf("%w: field %q appears twice", ErrMalformedRecord, clip(key))
		}
		seen[key] = true
		switch key {
		case "cid":
			w.CID, err = wantString(dec, key)
		case "cids":
			w.CIDs, err = wantStrings(dec)
		case "meta":
			w.Meta, err = wantMeta(dec)
		case "name":
			if !withName {
				err = fmt.Errorf("%w: unknown field %q", ErrMalformedRecord, key)
				break
			}
			w.Name, err = wantString(dec, key)
		case "peer":
			w.Peer, err = wantString(dec, key)
		case "time":
			w.Time, err = wantString(dec, key)
		default:
			err = fmt.Errorf("%w: unknown field %q", ErrMalformedRecord, clip(key))
		}
		if err != nil {
			return w, err
		}
	}
	if err := wantDelim(dec, '}'); err != nil {
		return w, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return w, fmt.Errorf("%w: data after the record object", ErrMalformedRecord)
	}
	for _, f := range []string{"cid", "cids", "meta", "peer", "time"} {
		if !seen[f] {
			return w, fmt.Errorf("%w: field %q is missing", ErrMalformedRecord, f)
		}
	}
	return w, nil
}

func malformed(err error) error {
	return fmt.Errorf("%w: %w", ErrMalformedRecord, err)
}

func wantDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return malformed(err)
	}
	if tok != d {
		return fmt.Errorf("%w: want %q, got %v", ErrMalformedRecord, d, tok)
	}
	return nil
}

func wantString(dec *json.Decoder, field string) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", malformed(err)
	}
	s, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("%w: %s is not a string", ErrMalformedRecord, field)
	}
	return s, nil
}

func wantStrings(dec *json.Decoder) ([]string, error) {
	if err := wantDelim(dec, '['); err != nil {
		return nil, err
	}
	var out []string
	for dec.More() {
		if len(out) == MaxRecordCIDs {
			return nil, fmt.Errorf("%w: more than %d CIDs", ErrTooLarge, MaxRecordCIDs)
		}
		s, err := wantString(dec, "a member of cids")
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if err := wantDelim(dec, ']'); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: cids is empty", ErrMalformedRecord)
	}
	return out, nil
}

func wantMeta(dec *json.Decoder) (map[string]string, error) {
	if err := wantDelim(dec, '{'); err != nil {
		return nil, err
	}
	out := make(map[string]string)
	for dec.More() {
		if len(out) == MaxRecordMeta {
			return nil, fmt.Errorf("%w: more than %d meta entries", ErrTooLarge, MaxRecordMeta)
		}
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed(err)
		}
		k, _ := tok.(string)
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%w: meta key %q appears twice", ErrMalformedRecord, clip(k))
		}
		v, err := wantString(dec, fmt.Sprintf("meta value of %q", clip(k)))
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	if err := wantDelim(dec, '}'); err != nil {
		return nil, err
	}
	return out, nil
}
