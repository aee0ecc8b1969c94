package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/multiformats/go-varint"
)

// A message of the record protocol is an unsigned varint (LEB128, minimal,
// as multiformats/unsigned-varint) holding the body's length in bytes,
// followed by the body. A stream carries one request from the asker, then
// one response from the answerer.

// WriteRequest writes the request for c: its canonical string form (any
// valid CID form is accepted and normalised, so that every answerer can
// read it), length-prefixed, in one Write.
func WriteRequest(w io.Writer, c string) error {
	n, err := Normalize(c)
	if err != nil {
		return fmt.Errorf("write request: %w", err)
	}
	if len(n) > MaxRequestCID {
		return fmt.Errorf("write request: %w: CID of %d bytes, at most %d", ErrTooLarge, len(n), MaxRequestCID)
	}
	return writeMessage(w, []byte(n))
}

// ReadRequest reads one request and returns the asked CID in canonical
// string form. It rejects a length prefix above MaxRequestCID before
// reading the body (ErrTooLarge), a broken frame (ErrBadFrame), an empty
// body (ErrEmptyCID), and a body that is not UTF-8 or not a valid CID
// (ErrInvalidCID), or whose canonical form is longer than MaxRequestCID
// (ErrInvalidCID and ErrTooLarge: no answerer could ask for it in turn).
// It reads nothing past the message.
func ReadRequest(r io.Reader) (string, error) {
	body, err := readMessage(r, MaxRequestCID)
	if err != nil {
		return "", fmt.Errorf("read request: %w", err)
	}
	if len(body) == 0 {
		return "", fmt.Errorf("read request: %w", ErrEmptyCID)
	}
	if !utf8.Valid(body) {
		return "", fmt.Errorf("read request: %w: not UTF-8", ErrInvalidCID)
	}
	c, err := Normalize(string(body))
	if err != nil {
		return "", fmt.Errorf("read request: %w", err)
	}
	return c, nil
}

// WriteResponse writes one response: envelope (from SealRecord), or, when
// envelope is empty, the zero-length "not found here" answer. An envelope
// above MaxRecordMessage is ErrTooLarge and nothing is written.
func WriteResponse(w io.Writer, envelope []byte) error {
	if len(envelope) > MaxRecordMessage {
		return fmt.Errorf("write response: %w: %d bytes, at most %d", ErrTooLarge, len(envelope), MaxRecordMessage)
	}
	return writeMessage(w, envelope)
}

// ReadResponse reads one response and returns its body, the envelope for
// OpenRecord, or (nil, nil) for a zero-length body: "not found here". It
// rejects a length prefix above MaxRecordMessage before allocating
// (ErrTooLarge) and a broken frame (ErrBadFrame; a stream that ends before
// any byte is ErrBadFrame wrapping io.EOF, not "not found"). It reads
// nothing past the message.
func ReadResponse(r io.Reader) ([]byte, error) {
	body, err := readMessage(r, MaxRecordMessage)
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if len(body) == 0 {
		return nil, nil
	}
	return body, nil
}

func writeMessage(w io.Writer, body []byte) error {
	size := varint.UvarintSize(uint64(len(body)))
	msg := make([]byte, size, size+len(body))
	varint.PutUvarint(msg, uint64(len(body)))
	msg = append(msg, body...)
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("write message: %w", err)
	}
	return nil
}

// errPrefixTooLong ends a length prefix that needs more bytes than the
// largest allowed length does.
var errPrefixTooLong = errors.New("length prefix too long")

// readMessage reads a length prefix of at most UvarintSize(limit) bytes,
// one byte at a time so that nothing past the message is consumed, then
// the body, which it grows as bytes arrive: a peer that announces a large
// body and sends little costs little memory.
func readMessage(r io.Reader, limit int) ([]byte, error) {
	br := &prefixReader{r: r, left: varint.UvarintSize(uint64(limit))}
	n, err := varint.ReadUvarint(br)
	switch {
	case errors.Is(err, errPrefixTooLong):
		return nil, fmt.Errorf("%w: length prefix longer than %d bytes (limit %d)", ErrTooLarge, br.read, limit)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("%w: length prefix: %w", ErrBadFrame, err)
	case errors.Is(err, varint.ErrNotMinimal), errors.Is(err, varint.ErrOverflow):
		return nil, fmt.Errorf("%w: length prefix: %w", ErrBadFrame, err)
	case err != nil:
		return nil, fmt.Errorf("length prefix: %w", err)
	case n > uint64(limit):
		return nil, fmt.Errorf("%w: length %d, at most %d", ErrTooLarge, n, limit)
	}
	const chunk = 64 << 10
	body := make([]byte, 0, min(int(n), chunk))
	for len(body) < int(n) {
		if len(body) == cap(body) {
			body = slices.Grow(body, min(int(n)-len(body), len(body)))
		}
		m, err := r.Read(body[len(body):min(cap(body), int(n))])
		body = body[:len(body)+m]
		if len(body) == int(n) {
			break
		}
		switch {
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("%w: body ends after %d of %d bytes: %w", ErrBadFrame, len(body), n, io.ErrUnexpectedEOF)
		case err != nil:
			return nil, fmt.Errorf("body: %w", err)
		}
	}
	return body, nil
}

// prefixReader gives varint.ReadUvarint one byte at a time from r, at most
// left bytes.
type prefixReader struct {
	r    io.Reader
	left int
	read int
	b    [1]byte
}

func (p *prefixReader) ReadByte() (byte, error) {
	if p.left == 0 {
		return 0, errPrefixTooLong
	}
	if _, err := io.ReadFull(p.r, p.b[:]); err != nil {
		return 0, err
	}
	p.left--
	p.read++
	return p.b[0], nil
}

// writeJSONRequest validates r and writes it as JSON, length-prefixed, in
// one Write: the request of the search and library protocols. what names
// the request in errors ("search request").
func writeJSONRequest[R interface{ Validate() error }](w io.Writer, what string, r R) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("write %s: %w", what, err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("write %s: %w", what, err)
	}
	return writeMessage(w, b)
}

// readJSONRequest reads one request of at most limit bytes (a longer
// prefix is ErrTooLarge before anything else is read) and hands its body
// to parse, which decodes it strictly and validates it. It reads nothing
// past the message; what names the request in errors.
func readJSONRequest[R any](r io.Reader, what string, limit int, parse func([]byte) (R, error)) (R, error) {
	body, err := readMessage(r, limit)
	if err != nil {
		var zero R
		return zero, fmt.Errorf("read %s: %w", what, err)
	}
	req, err := parse(body)
	if err != nil {
		var zero R
		return zero, fmt.Errorf("read %s: %w", what, err)
	}
	return req, nil
}
