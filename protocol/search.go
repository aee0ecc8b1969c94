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

// The search protocol, /metamesh/search/1.0.0 and 1.1.0: the asker
// writes one request, the answerer one response, each framed as the record
// protocol's messages (unsigned-varint length, then the body). 1.1.0 hits
// also carry year, season, episode, episodeTitle and imdbid.
const (
	// SearchProtocolID is the libp2p protocol ID of 1.0.0, and the
	// envelope's payload type of its answers.
	SearchProtocolID = "/metamesh/search/1.0.0"
	// SearchProtocolV11 is the protocol ID and payload type of 1.1.0.
	SearchProtocolV11 = "/metamesh/search/1.1.0"
	// SearchProtocolV12 is the protocol ID and payload type of 1.2.0,
	// whose answer is an object: the household's name and 1.1.0's hits.
	SearchProtocolV12 = "/metamesh/search/1.2.0"
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
	// MaxHitTitle and MaxHitFileType bound a hit's strings, in bytes
	// (MaxHitTitle an episode title's too).
	MaxHitTitle    = 1024
	MaxHitFileType = 64
	// MaxHitNumber bounds a 1.1.0 hit's season and episode; a year is
	// 1..9999.
	MaxHitNumber = 99999
)

// SearchProtocols are the versions of the search protocol, newest first:
// the order an asker offers them in.
var SearchProtocols = []string{SearchProtocolV12, SearchProtocolV11, SearchProtocolID}

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
	// not the protocol version the stream speaks.
	ErrWrongSearchPayloadType = errors.New("envelope payload type is not the search protocol's")
	// ErrUnknownSearchVersion: a protocol ID that is none of
	// SearchProtocols.
	ErrUnknownSearchVersion = errors.New("unknown search protocol version")
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
	return writeJSONRequest(w, "search request", r)
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
	return readJSONRequest(r, "search request", MaxSearchRequest, parseSearchRequest)
}

// parseSearchRequest decodes a request body strictly and validates it.
func parseSearchRequest(body []byte) (SearchRequest, error) {
	req, err := decodeSearchRequest(body)
	if err != nil {
		return SearchRequest{}, err
	}
	if err := req.Validate(); err != nil {
		return SearchRequest{}, err
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
// Year, Season, Episode, EpisodeTitle and IMDbID travel in 1.1.0 only
// (absent when unknown); a 1.0.0 answer leaves them out.
type SearchHit struct {
	CID          string   `json:"cid"` // Canonical(CIDs)
	Title        string   `json:"title"`
	Size         int64    `json:"size"`
	FileType     string   `json:"fileType"`
	CIDs         []string `json:"cids"` // sorted, no repeats, canonical form
	Year         int      `json:"year,omitempty"`
	Season       *int     `json:"season,omitempty"`
	Episode      *int     `json:"episode,omitempty"`
	EpisodeTitle string   `json:"episodeTitle,omitempty"`
	IMDbID       string   `json:"imdbid,omitempty"`
}

// hit10 is a hit of 1.0.0, exactly its five fields.
type hit10 struct {
	CID      string   `json:"cid"`
	Title    string   `json:"title"`
	Size     int64    `json:"size"`
	FileType string   `json:"fileType"`
	CIDs     []string `json:"cids"`
}

// Validate checks a hit: 1..MaxRecordCIDs CIDs in canonical form, sorted
// without repeats, CID their canonical, a UTF-8 title of at most
// MaxHitTitle bytes, a fileType of at most MaxHitFileType, size ≥ 0; and
// of 1.1.0's fields, a year of 1..9999, a season and an episode of
// 0..MaxHitNumber, a UTF-8 episodeTitle of at most MaxHitTitle bytes, an
// imdbid "tt" and 7 to 10 digits.
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
	number := func(p *int) bool { return p == nil || *p >= 0 && *p <= MaxHitNumber }
	switch {
	case len(h.Title) > MaxHitTitle || !utf8.ValidString(h.Title):
		return fmt.Errorf("%w: title of %d bytes (at most %d, UTF-8)", ErrMalformedHits, len(h.Title), MaxHitTitle)
	case len(h.FileType) > MaxHitFileType || !utf8.ValidString(h.FileType):
		return fmt.Errorf("%w: fileType of %d bytes (at most %d, UTF-8)", ErrMalformedHits, len(h.FileType), MaxHitFileType)
	case h.Size < 0:
		return fmt.Errorf("%w: size %d", ErrMalformedHits, h.Size)
	case h.Year < 0 || h.Year > 9999:
		return fmt.Errorf("%w: year %d", ErrMalformedHits, h.Year)
	case !number(h.Season) || !number(h.Episode):
		return fmt.Errorf("%w: season or episode outside 0..%d", ErrMalformedHits, MaxHitNumber)
	case len(h.EpisodeTitle) > MaxHitTitle || !utf8.ValidString(h.EpisodeTitle):
		return fmt.Errorf("%w: episodeTitle of %d bytes (at most %d, UTF-8)", ErrMalformedHits, len(h.EpisodeTitle), MaxHitTitle)
	case h.IMDbID != "" && !ValidIMDbID(h.IMDbID):
		return fmt.Errorf("%w: imdbid %q is not tt and 7 to 10 digits", ErrMalformedHits, clip(h.IMDbID))
	}
	return nil
}

// ValidIMDbID reports an IMDb title ID: "tt" and 7 to 10 digits.
func ValidIMDbID(s string) bool {
	if len(s) < 9 || len(s) > 12 || s[:2] != "tt" {
		return false
	}
	for i := 2; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
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

// searchPayload is the signed list of hits, of one protocol version.
type searchPayload struct {
	version string
	b       []byte
}

func (*searchPayload) Domain() string                   { return SearchDomain }
func (p *searchPayload) Codec() []byte                  { return []byte(p.version) }
func (p *searchPayload) MarshalRecord() ([]byte, error) { return p.b, nil }
func (p *searchPayload) UnmarshalRecord(b []byte) error {
	p.b = b
	return nil
}

// knownSearchVersion reports one of SearchProtocols.
func knownSearchVersion(v string) bool {
	return v == SearchProtocolID || v == SearchProtocolV11 || v == SearchProtocolV12
}

// SearchAnswer is what a peer answered: its household's name (1.2.0
// only; "" when it sent none) and its hits.
type SearchAnswer struct {
	Name string
	Hits []SearchHit
}

// answer12 is a 1.2.0 payload: {"name": …, "hits": […]}, name left out
// when empty.
type answer12 struct {
	Name string      `json:"name,omitempty"`
	Hits []SearchHit `json:"hits"`
}

// SealSearch is SealSearchAs for 1.0.0.
func SealSearch(hits []SearchHit, key crypto.PrivKey) ([]byte, error) {
	return SealSearchAs(SearchProtocolID, hits, key)
}

// SealSearchAs validates hits (at most MaxSearchHits) and signs their JSON
// list into a signed envelope, domain SearchDomain, payload type version
// (one of SearchProtocols): the body of a response on a stream of that
// version. A 1.0.0 list holds each hit's five fields of 1.0.0 alone. An
// envelope larger than MaxSearchMessage is ErrTooLarge.
func SealSearchAs(version string, hits []SearchHit, key crypto.PrivKey) ([]byte, error) {
	return SealSearchAnswer(version, SearchAnswer{Hits: hits}, key)
}

// SealSearchAnswer is SealSearchAs for a whole answer: in 1.2.0 the
// payload is the object {"name", "hits"} (name left out when empty); the
// older versions carry the hits alone. The name must pass CheckName.
func SealSearchAnswer(version string, a SearchAnswer, key crypto.PrivKey) ([]byte, error) {
	hits := a.Hits
	if key == nil {
		return nil, errors.New("seal search: no key")
	}
	if !knownSearchVersion(version) {
		return nil, fmt.Errorf("seal search: %w: %q", ErrUnknownSearchVersion, clip(version))
	}
	if len(hits) > MaxSearchHits {
		return nil, fmt.Errorf("seal search: %w: %d hits, at most %d", ErrTooLarge, len(hits), MaxSearchHits)
	}
	for _, h := range hits {
		if err := h.Validate(); err != nil {
			return nil, fmt.Errorf("seal search: %w", err)
		}
	}
	if err := CheckName(a.Name); err != nil {
		return nil, fmt.Errorf("seal search: %w", err)
	}
	var list any = hits
	switch {
	case version == SearchProtocolV12:
		if hits == nil {
			hits = []SearchHit{}
		}
		list = answer12{Name: a.Name, Hits: hits}
	case version == SearchProtocolID:
		old := make([]hit10, len(hits))
		for i, h := range hits {
			old[i] = hit10{CID: h.CID, Title: h.Title, Size: h.Size, FileType: h.FileType, CIDs: h.CIDs}
		}
		list = old
	case hits == nil:
		list = []SearchHit{}
	}
	b, err := json.Marshal(list)
	if err != nil {
		return nil, fmt.Errorf("seal search: %w", err)
	}
	env, err := record.Seal(&searchPayload{version: version, b: b}, key)
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

// OpenSearch is OpenSearchAs for 1.0.0.
func OpenSearch(envelope []byte, from peer.ID, limit int) ([]SearchHit, error) {
	return OpenSearchAs(SearchProtocolID, envelope, from, limit)
}

// OpenSearchAs verifies a response body received from peer from on a
// stream of protocol version (one of SearchProtocols), the answer to a
// request whose limit was limit, and returns its hits. It checks: the
// size cap (ErrTooLarge); the envelope (ErrBadEnvelope) and its signature
// for SearchDomain (ErrBadSignature); the payload type is version
// (ErrWrongSearchPayloadType); the signer is from (ErrWrongSigner); the
// payload is a JSON list of at most limit hits (ErrTooLarge: a peer that
// answers more than it was asked for is not trusted for any of them; a
// limit outside 1..MaxSearchHits counts as MaxSearchHits) with the fields
// of the version and no others (ErrMalformedHits): cid, title, size,
// fileType, cids, and in 1.1.0 also year, season, episode, episodeTitle,
// imdbid; each hit valid (SearchHit.Validate). On error no hit is
// returned.
func OpenSearchAs(version string, envelope []byte, from peer.ID, limit int) ([]SearchHit, error) {
	a, err := OpenSearchAnswer(version, envelope, from, limit)
	return a.Hits, err
}

// OpenSearchAnswer is OpenSearchAs for a whole answer. A 1.2.0 payload
// is one object holding "hits", the list of 1.1.0 hits, and optionally
// "name", a string, and no other field (ErrMalformedHits). The name is
// the peer's untrusted claim: it is returned cleaned (CleanName), never
// refused. On error the answer is empty.
func OpenSearchAnswer(version string, envelope []byte, from peer.ID, limit int) (SearchAnswer, error) {
	hits, name, err := openSearch(version, envelope, from, limit)
	if err != nil {
		return SearchAnswer{}, err
	}
	return SearchAnswer{Name: CleanName(name), Hits: hits}, nil
}

func openSearch(version string, envelope []byte, from peer.ID, limit int) ([]SearchHit, string, error) {
	if !knownSearchVersion(version) {
		return nil, "", fmt.Errorf("open search: %w: %q", ErrUnknownSearchVersion, clip(version))
	}
	if len(envelope) > MaxSearchMessage {
		return nil, "", fmt.Errorf("open search: %w: envelope of %d bytes, at most %d", ErrTooLarge, len(envelope), MaxSearchMessage)
	}
	payload := searchPayload{version: version}
	env, err := record.ConsumeTypedEnvelope(envelope, &payload)
	switch {
	case err != nil && env == nil:
		return nil, "", fmt.Errorf("open search: %w: %w", ErrBadEnvelope, err)
	case err != nil:
		return nil, "", fmt.Errorf("open search: %w: %w", ErrBadSignature, err)
	}
	if !bytes.Equal(env.PayloadType, []byte(version)) {
		return nil, "", fmt.Errorf("open search: %w: got %q on a %s stream", ErrWrongSearchPayloadType, clip(string(env.PayloadType)), version)
	}
	signer, err := peer.IDFromPublicKey(env.PublicKey)
	if err != nil {
		return nil, "", fmt.Errorf("open search: %w: %w", ErrBadEnvelope, err)
	}
	if signer != from {
		return nil, "", fmt.Errorf("open search: %w: signed by %s, received from %s", ErrWrongSigner, signer, from)
	}
	raw, name, err := searchList(version, payload.b)
	if err != nil {
		return nil, "", fmt.Errorf("open search: %w", err)
	}
	if limit < 1 || limit > MaxSearchHits {
		limit = MaxSearchHits
	}
	if len(raw) > limit {
		return nil, "", fmt.Errorf("open search: %w: %d hits, asked for at most %d", ErrTooLarge, len(raw), limit)
	}
	hits := make([]SearchHit, 0, len(raw))
	for _, m := range raw {
		var h SearchHit
		dec := json.NewDecoder(bytes.NewReader(m))
		dec.DisallowUnknownFields()
		var err error
		if version == SearchProtocolID {
			var old hit10
			err = dec.Decode(&old)
			h = SearchHit{CID: old.CID, Title: old.Title, Size: old.Size, FileType: old.FileType, CIDs: old.CIDs}
		} else {
			err = dec.Decode(&h)
		}
		if err != nil {
			return nil, "", fmt.Errorf("open search: %w: %v", ErrMalformedHits, err)
		}
		if err := h.Validate(); err != nil {
			return nil, "", fmt.Errorf("open search: %w", err)
		}
		hits = append(hits, h)
	}
	return hits, name, nil
}

// searchList splits a payload of version into its hits, undecoded, and
// the name a 1.2.0 answer carries.
func searchList(version string, payload []byte) ([]json.RawMessage, string, error) {
	var raw []json.RawMessage
	if version != SearchProtocolV12 {
		if err := json.Unmarshal(payload, &raw); err != nil {
			return nil, "", fmt.Errorf("%w: %v", ErrMalformedHits, err)
		}
		return raw, "", nil
	}
	var a struct {
		Name *string            `json:"name"`
		Hits *[]json.RawMessage `json:"hits"`
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrMalformedHits, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, "", fmt.Errorf("%w: data after the answer", ErrMalformedHits)
	}
	if a.Hits == nil {
		return nil, "", fmt.Errorf("%w: no \"hits\"", ErrMalformedHits)
	}
	var name string
	if a.Name != nil {
		name = *a.Name
	}
	return *a.Hits, name, nil
}
