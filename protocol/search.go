package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/record"
)

// The search protocol, /metamesh/search/1.0.0: the asker writes one
// request, the answerer one response, each framed as the record protocol's
// messages (unsigned-varint length, then the body).
const (
	// SearchProtocolID is the libp2p protocol ID, and the envelope's
	// payload type.
	SearchProtocolID = "/metamesh/search/1.0.0"
	// SearchDomain is the envelope's signature domain.
	SearchDomain = "metamesh-search"
)

// Caps of the search protocol.
const (
	// MaxSearchRequest bounds a request body, in bytes.
	MaxSearchRequest = 4 << 10
	// MaxSearchQuery bounds the query text, in bytes.
	MaxSearchQuery = 256
	// MaxSearchHits bounds a request's limit, and so the hits of one
	// answer (an answer holds at most the request's limit).
	MaxSearchHits = 100
	// MaxSearchMessage bounds a response body (the envelope), in bytes.
	MaxSearchMessage = 1 << 20
	// MaxHitTitle and MaxHitFileType bound a hit's strings, in bytes.
	MaxHitTitle    = 1024
	MaxHitFileType = 64
)

// Sentinel errors of the search protocol (with ErrTooLarge, ErrBadFrame,
// ErrBadEnvelope, ErrBadSignature, ErrWrongSigner and the CID errors).
var (
	// ErrBadSearchRequest: a request body that is not valid UTF-8 holding
	// exactly {"q", "limit"} (each once, names case-sensitive, no other
	// field) with a query of 1..MaxSearchQuery bytes and an integer limit
	// of 1..MaxSearchHits.
	ErrBadSearchRequest = errors.New("malformed search request")
	// ErrMalformedHits: a search payload that is not a JSON list of valid
	// hits.
	ErrMalformedHits = errors.New("malformed search answer")
	// ErrWrongSearchPayloadType: a signed envelope whose payload type is
	// not SearchProtocolID.
	ErrWrongSearchPayloadType = errors.New("envelope payload type is not " + SearchProtocolID)
)

// SearchRequest is a request's body.
type SearchRequest struct {
	Q     string `json:"q"`
	Limit int    `json:"limit"`
}

// Validate checks the query (1..MaxSearchQuery bytes of UTF-8) and the
// limit (1..MaxSearchHits).
func (r SearchRequest) Validate() error {
	switch {
	case r.Q == "" || len(r.Q) > MaxSearchQuery:
		return fmt.Errorf("%w: query of %d bytes, want 1..%d", ErrBadSearchRequest, len(r.Q), MaxSearchQuery)
	case !utf8.ValidString(r.Q):
		return fmt.Errorf("%w: query is not UTF-8", ErrBadSearchRequest)
	case r.Limit < 1 || r.Limit > MaxSearchHits:
		return fmt.Errorf("%w: limit %d, want 1..%d", ErrBadSearchRequest, r.Limit, MaxSearchHits)
	}
	return nil
}

// WriteSearchRequest validates r and writes it, length-prefixed.
func WriteSearchRequest(w io.Writer, r SearchRequest) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("write search request: %w", err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("write search request: %w", err)
	}
	return writeMessage(w, b)
}

// ReadSearchRequest reads one request of at most MaxSearchRequest bytes
// (a longer prefix is ErrTooLarge before anything else is read), decodes
// it strictly and validates it. The body must be valid UTF-8 holding one
// JSON object with exactly the fields "q" (a string) and "limit" (an
// integer), each once, names case-sensitive, and nothing after it: as for
// records (decodeWire), encoding/json alone would match names
// case-insensitively, let a repeated field win silently and turn invalid
// UTF-8 into U+FFFD. Anything else is ErrBadSearchRequest.
func ReadSearchRequest(r io.Reader) (SearchRequest, error) {
	body, err := readMessage(r, MaxSearchRequest)
	if err != nil {
		return SearchRequest{}, fmt.Errorf("read search request: %w", err)
	}
	req, err := decodeSearchRequest(body)
	if err != nil {
		return SearchRequest{}, fmt.Errorf("read search request: %w", err)
	}
	if err := req.Validate(); err != nil {
		return SearchRequest{}, fmt.Errorf("read search request: %w", err)
	}
	return req, nil
}

// decodeSearchRequest reads a request body token by token.
func decodeSearchRequest(body []byte) (SearchRequest, error) {
	var req SearchRequest
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrBadSearchRequest, fmt.Sprintf(format, a...))
	}
	if !utf8.Valid(body) {
		return req, bad("not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return req, bad("not a JSON object")
	}
	seen := make(map[string]bool, 2)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return req, bad("%v", err)
		}
		key, _ := tok.(string) // an object's keys are strings
		if seen[key] {
			return req, bad("field %q appears twice", clip(key))
		}
		seen[key] = true
		tok, err = dec.Token()
		if err != nil {
			return req, bad("%v", err)
		}
		switch key {
		case "q":
			q, ok := tok.(string)
			if !ok {
				return req, bad("q is not a string")
			}
			req.Q = q
		case "limit":
			n, ok := tok.(json.Number)
			if !ok {
				return req, bad("limit is not a number")
			}
			l, err := strconv.ParseInt(string(n), 10, 32)
			if err != nil {
				return req, bad("limit %q is not an integer of 1..%d", clip(string(n)), MaxSearchHits)
			}
			req.Limit = int(l)
		default:
			return req, bad("unknown field %q", clip(key))
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return req, bad("not a JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return req, bad("data after the object")
	}
	for _, f := range []string{"q", "limit"} {
		if !seen[f] {
			return req, bad("field %q is missing", f)
		}
	}
	return req, nil
}

// SearchHit is one hit of a search answer: a file the answerer holds.
type SearchHit struct {
	CID      string   `json:"cid"` // Canonical(CIDs)
	Title    string   `json:"title"`
	Size     int64    `json:"size"`
	FileType string   `json:"fileType"`
	CIDs     []string `json:"cids"` // sorted, no repeats, canonical form
}

// Validate checks a hit: 1..MaxRecordCIDs CIDs in canonical form, sorted
// without repeats, CID their canonical, a UTF-8 title of at most
// MaxHitTitle bytes, a fileType of at most MaxHitFileType, size ≥ 0.
func (h SearchHit) Validate() error {
	if len(h.CIDs) == 0 || len(h.CIDs) > MaxRecordCIDs {
		return fmt.Errorf("%w: %d cids, want 1..%d", ErrMalformedHits, len(h.CIDs), MaxRecordCIDs)
	}
	for i, c := range h.CIDs {
		if _, err := ParseStrict(c); err != nil {
			return fmt.Errorf("%w: cid %q: %w", ErrMalformedHits, clip(c), err)
		}
		if i > 0 && h.CIDs[i-1] >= c {
			return fmt.Errorf("%w: %w", ErrMalformedHits, ErrCIDsNotSorted)
		}
	}
	if h.CID != Canonical(h.CIDs) {
		return fmt.Errorf("%w: %w: %q", ErrMalformedHits, ErrWrongCanonical, clip(h.CID))
	}
	switch {
	case len(h.Title) > MaxHitTitle || !utf8.ValidString(h.Title):
		return fmt.Errorf("%w: title of %d bytes (at most %d, UTF-8)", ErrMalformedHits, len(h.Title), MaxHitTitle)
	case len(h.FileType) > MaxHitFileType || !utf8.ValidString(h.FileType):
		return fmt.Errorf("%w: fileType of %d bytes (at most %d, UTF-8)", ErrMalformedHits, len(h.FileType), MaxHitFileType)
	case h.Size < 0:
		return fmt.Errorf("%w: size %d", ErrMalformedHits, h.Size)
	}
	return nil
}

// NewSearchHit builds a hit from a key-set (any valid CID forms,
// normalised, sorted, de-duplicated) and cuts title and fileType to their
// caps at a rune boundary.
func NewSearchHit(cids []string, title string, size int64, fileType string) (SearchHit, error) {
	set := make([]string, 0, len(cids))
	for _, c := range cids {
		n, err := Normalize(c)
		if err != nil {
			return SearchHit{}, err
		}
		set = append(set, n)
	}
	slices.Sort(set)
	set = slices.Compact(set)
	h := SearchHit{CIDs: set, CID: Canonical(set), Title: cut(title, MaxHitTitle), Size: max(size, 0), FileType: cut(fileType, MaxHitFileType)}
	return h, h.Validate()
}

// cut shortens s to at most n bytes of valid UTF-8.
func cut(s string, n int) string {
	s = string([]rune(s)) // invalid bytes become U+FFFD
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// searchPayload is the signed list of hits.
type searchPayload []byte

func (*searchPayload) Domain() string                   { return SearchDomain }
func (*searchPayload) Codec() []byte                    { return []byte(SearchProtocolID) }
func (p *searchPayload) MarshalRecord() ([]byte, error) { return *p, nil }
func (p *searchPayload) UnmarshalRecord(b []byte) error {
	*p = b
	return nil
}

// SealSearch validates hits (at most MaxSearchHits) and signs their JSON
// list into a signed envelope, domain SearchDomain, payload type
// SearchProtocolID: the body of a response. An envelope larger than
// MaxSearchMessage is ErrTooLarge.
func SealSearch(hits []SearchHit, key crypto.PrivKey) ([]byte, error) {
	if key == nil {
		return nil, errors.New("seal search: no key")
	}
	if len(hits) > MaxSearchHits {
		return nil, fmt.Errorf("seal search: %w: %d hits, at most %d", ErrTooLarge, len(hits), MaxSearchHits)
	}
	for _, h := range hits {
		if err := h.Validate(); err != nil {
			return nil, fmt.Errorf("seal search: %w", err)
		}
	}
	if hits == nil {
		hits = []SearchHit{}
	}
	b, err := json.Marshal(hits)
	if err != nil {
		return nil, fmt.Errorf("seal search: %w", err)
	}
	p := searchPayload(b)
	env, err := record.Seal(&p, key)
	if err != nil {
		return nil, fmt.Errorf("seal search: %w", err)
	}
	out, err := env.Marshal()
	if err != nil {
		return nil, fmt.Errorf("seal search: %w", err)
	}
	if len(out) > MaxSearchMessage {
		return nil, fmt.Errorf("seal search: %w: envelope of %d bytes, at most %d", ErrTooLarge, len(out), MaxSearchMessage)
	}
	return out, nil
}

// OpenSearch verifies a response body received from peer from, the answer
// to a request whose limit was limit, and returns its hits. It checks: the
// size cap (ErrTooLarge); the envelope (ErrBadEnvelope) and its signature
// for SearchDomain (ErrBadSignature); the payload type
// (ErrWrongSearchPayloadType); the signer is from (ErrWrongSigner); the
// payload is a JSON list of at most limit hits (ErrTooLarge: a peer that
// answers more than it was asked for is not trusted for any of them; a
// limit outside 1..MaxSearchHits counts as MaxSearchHits) with the fields
// cid, title, size, fileType, cids and no others (ErrMalformedHits), each
// valid (SearchHit.Validate). On error no hit is returned.
func OpenSearch(envelope []byte, from peer.ID, limit int) ([]SearchHit, error) {
	if len(envelope) > MaxSearchMessage {
		return nil, fmt.Errorf("open search: %w: envelope of %d bytes, at most %d", ErrTooLarge, len(envelope), MaxSearchMessage)
	}
	var payload searchPayload
	env, err := record.ConsumeTypedEnvelope(envelope, &payload)
	switch {
	case err != nil && env == nil:
		return nil, fmt.Errorf("open search: %w: %w", ErrBadEnvelope, err)
	case err != nil:
		return nil, fmt.Errorf("open search: %w: %w", ErrBadSignature, err)
	}
	if !bytes.Equal(env.PayloadType, []byte(SearchProtocolID)) {
		return nil, fmt.Errorf("open search: %w: got %q", ErrWrongSearchPayloadType, clip(string(env.PayloadType)))
	}
	signer, err := peer.IDFromPublicKey(env.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("open search: %w: %w", ErrBadEnvelope, err)
	}
	if signer != from {
		return nil, fmt.Errorf("open search: %w: signed by %s, received from %s", ErrWrongSigner, signer, from)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(payload, &raw); err != nil {
		return nil, fmt.Errorf("open search: %w: %v", ErrMalformedHits, err)
	}
	if limit < 1 || limit > MaxSearchHits {
		limit = MaxSearchHits
	}
	if len(raw) > limit {
		return nil, fmt.Errorf("open search: %w: %d hits, asked for at most %d", ErrTooLarge, len(raw), limit)
	}
	hits := make([]SearchHit, 0, len(raw))
	for _, m := range raw {
		var h SearchHit
		dec := json.NewDecoder(bytes.NewReader(m))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&h); err != nil {
			return nil, fmt.Errorf("open search: %w: %v", ErrMalformedHits, err)
		}
		if err := h.Validate(); err != nil {
			return nil, fmt.Errorf("open search: %w", err)
		}
		hits = append(hits, h)
	}
	return hits, nil
}
