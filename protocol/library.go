package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/record"
)

// The library protocol, /metamesh/library/1.0.0: a household asks a
// friend's household for one page of its list of films and shows; the
// answer is signed like a record (see doc.go).
const (
	// LibraryProtocolID is the protocol ID, and the envelope's payload
	// type of its answers.
	LibraryProtocolID = "/metamesh/library/1.0.0"
	// LibraryDomain is the envelope's signature domain.
	LibraryDomain = "metamesh-library"
)

// The views a library request asks for, and the kind of the entries each
// answers with.
const (
	LibraryFilms    = "films"    // entries of kind "film"
	LibraryShows    = "shows"    // entries of kind "show"
	LibrarySeasons  = "seasons"  // of one show: entries of kind "season"
	LibraryEpisodes = "episodes" // of one season of one show: kind "episode"
)

// Caps of the library protocol.
const (
	// MaxLibraryRequest bounds a request body, in bytes.
	MaxLibraryRequest = 4 << 10
	// MaxLibraryEntries bounds a request's limit, and so the entries of
	// one answer.
	MaxLibraryEntries = 100
	// MaxLibraryPage bounds a request's page.
	MaxLibraryPage = 1 << 20
	// MaxLibraryMessage bounds a response body (the envelope), in bytes.
	MaxLibraryMessage = 1 << 20
	// MaxLibraryShowKey bounds a show's key, in bytes.
	MaxLibraryShowKey = 1024
	// MaxLibraryQuery bounds the words of a request, in bytes.
	MaxLibraryQuery = 256
	// MaxLibraryCount bounds an answer's total, films and shows (and a
	// show's seasons and episodes).
	MaxLibraryCount = 1 << 30
)

// Sentinel errors of the library protocol (with ErrTooLarge, ErrBadFrame,
// ErrBadEnvelope, ErrBadSignature and ErrWrongSigner).
var (
	// ErrBadLibraryRequest: a request body that is not exactly the
	// request's JSON (LibraryRequest.Validate).
	ErrBadLibraryRequest = errors.New("malformed library request")
	// ErrMalformedLibrary: an answer's payload that is not exactly the
	// answer's JSON, or one of whose fields is out of its range.
	ErrMalformedLibrary = errors.New("malformed library answer")
	// ErrWrongLibraryPayloadType: a signed envelope whose payload type is
	// not LibraryProtocolID.
	ErrWrongLibraryPayloadType = errors.New("envelope payload type is not the library protocol's")
)

// LibraryRequest is a request's body.
type LibraryRequest struct {
	// View is one of LibraryFilms, LibraryShows, LibrarySeasons or
	// LibraryEpisodes.
	View string `json:"view"`
	// Show is a show's key (LibraryEntry.Show), with LibrarySeasons and
	// LibraryEpisodes only; Season, with LibraryEpisodes only.
	Show   string `json:"show,omitempty"`
	Season *int   `json:"season,omitempty"`
	// Q, when not empty, keeps the entries whose title holds every word
	// of it (see doc.go), with LibraryFilms and LibraryShows only.
	Q string `json:"q,omitempty"`
	// Page is 1..MaxLibraryPage, Limit 1..MaxLibraryEntries.
	Page  int `json:"page"`
	Limit int `json:"limit"`
}

// Validate checks a request: a known view; a show of 1..MaxLibraryShowKey
// bytes of UTF-8 exactly with seasons and episodes; a season of
// 0..MaxHitNumber exactly with episodes; words of at most MaxLibraryQuery
// bytes of UTF-8, with films and shows only; the page and the limit in
// range.
func (r LibraryRequest) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrBadLibraryRequest, fmt.Sprintf(format, a...))
	}
	perShow := r.View == LibrarySeasons || r.View == LibraryEpisodes
	switch {
	case r.View != LibraryFilms && r.View != LibraryShows && !perShow:
		return bad("view %q: want films, shows, seasons or episodes", clip(r.View))
	case perShow != (r.Show != ""):
		return bad("show is given exactly with seasons and episodes")
	case len(r.Show) > MaxLibraryShowKey || !utf8.ValidString(r.Show):
		return bad("show of %d bytes (at most %d, UTF-8)", len(r.Show), MaxLibraryShowKey)
	case (r.View == LibraryEpisodes) != (r.Season != nil):
		return bad("season is given exactly with episodes")
	case r.Season != nil && (*r.Season < 0 || *r.Season > MaxHitNumber):
		return bad("season %d, want 0..%d", *r.Season, MaxHitNumber)
	case r.Q != "" && perShow:
		return bad("q is given with films and shows only")
	case len(r.Q) > MaxLibraryQuery || !utf8.ValidString(r.Q):
		return bad("q of %d bytes (at most %d, UTF-8)", len(r.Q), MaxLibraryQuery)
	case r.Page < 1 || r.Page > MaxLibraryPage:
		return bad("page %d, want 1..%d", r.Page, MaxLibraryPage)
	case r.Limit < 1 || r.Limit > MaxLibraryEntries:
		return bad("limit %d, want 1..%d", r.Limit, MaxLibraryEntries)
	}
	return nil
}

// WriteLibraryRequest validates r and writes it, length-prefixed.
func WriteLibraryRequest(w io.Writer, r LibraryRequest) error {
	return writeJSONRequest(w, "library request", r)
}

// ReadLibraryRequest reads one request of at most MaxLibraryRequest bytes
// (a longer prefix is ErrTooLarge before anything else is read), decodes
// it strictly (ParseLibraryRequest) and validates it.
func ReadLibraryRequest(r io.Reader) (LibraryRequest, error) {
	return readJSONRequest(r, "library request", MaxLibraryRequest, ParseLibraryRequest)
}

// ParseLibraryRequest decodes a request body: valid UTF-8 holding one
// JSON object of the fields view, show, season, q, page and limit (each at
// most once, names case-sensitive, no other; view, page and limit
// required), nothing after it, and valid (LibraryRequest.Validate).
// Anything else is ErrBadLibraryRequest.
func ParseLibraryRequest(body []byte) (LibraryRequest, error) {
	var req LibraryRequest
	err := strictObject(body, []string{"view", "page", "limit"}, func(key string, tok json.Token) error {
		var ok bool
		switch key {
		case "view":
			req.View, ok = tok.(string)
		case "show":
			req.Show, ok = tok.(string)
		case "q":
			req.Q, ok = tok.(string)
		case "season":
			var n int
			n, ok = wholeNumber(tok)
			req.Season = &n
		case "page":
			req.Page, ok = wholeNumber(tok)
		case "limit":
			req.Limit, ok = wholeNumber(tok)
		default:
			return fmt.Errorf("unknown field %q", clip(key))
		}
		if !ok {
			return fmt.Errorf("%s is not of its type", key)
		}
		return nil
	})
	if err != nil {
		return LibraryRequest{}, fmt.Errorf("%w: %v", ErrBadLibraryRequest, err)
	}
	if err := req.Validate(); err != nil {
		return LibraryRequest{}, err
	}
	return req, nil
}

// strictObject reads body, valid UTF-8 holding one JSON object of scalar
// fields and nothing after it, token by token, handing each field to
// field; a field given twice, or one of required missing, is an error.
func strictObject(body []byte, required []string, field func(key string, tok json.Token) error) error {
	if !utf8.Valid(body) {
		return errors.New("not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("not a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string) // an object's keys are strings
		if seen[key] {
			return fmt.Errorf("field %q appears twice", clip(key))
		}
		seen[key] = true
		if tok, err = dec.Token(); err != nil {
			return err
		}
		if _, delim := tok.(json.Delim); delim {
			return fmt.Errorf("%s is not of its type", clip(key))
		}
		if err := field(key, tok); err != nil {
			return err
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return errors.New("not a JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the object")
	}
	for _, f := range required {
		if !seen[f] {
			return fmt.Errorf("field %q is missing", f)
		}
	}
	return nil
}

// wholeNumber is tok as an int32, when it is a JSON integer.
func wholeNumber(tok json.Token) (int, bool) {
	n, ok := tok.(json.Number)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(string(n), 10, 32)
	return int(v), err == nil
}

// LibraryEntry is one entry of an answer: a film, a show, a season of a
// show or an episode, each with the fields doc.go gives its kind.
type LibraryEntry struct {
	Kind         string `json:"kind"`
	CID          string `json:"cid,omitempty"`
	Title        string `json:"title"`
	Year         int    `json:"year,omitempty"`
	Show         string `json:"show,omitempty"`
	Season       *int   `json:"season,omitempty"`
	Episode      *int   `json:"episode,omitempty"`
	EpisodeTitle string `json:"episodeTitle,omitempty"`
	Size         int64  `json:"size,omitempty"`
	Poster       string `json:"poster,omitempty"`
	Seasons      int    `json:"seasons,omitempty"`
	Episodes     int    `json:"episodes,omitempty"`
}

// entryKinds are the kinds of each view's entries.
var entryKinds = map[string]string{LibraryFilms: "film", LibraryShows: "show", LibrarySeasons: "season", LibraryEpisodes: "episode"}

// Validate checks an entry of an answer to view: its kind the view's;
// a title of at most MaxHitTitle bytes of UTF-8 (an episode title too);
// a cid in canonical form, required of films and episodes, absent from
// shows and seasons; a poster in canonical form or absent; a year of
// 0..9999; a show key (required but on films, absent on them) of
// 1..MaxLibraryShowKey bytes of UTF-8; a season (required on seasons and
// episodes, absent elsewhere) and an episode (required on episodes,
// absent elsewhere) of 0..MaxHitNumber; a size ≥ 0 on films and
// episodes only; seasons on shows only and episodes on shows and seasons
// only, 0..MaxLibraryCount.
func (e LibraryEntry) Validate(view string) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s entry: %s", ErrMalformedLibrary, clip(e.Kind), fmt.Sprintf(format, a...))
	}
	kind, ok := entryKinds[view]
	if !ok || e.Kind != kind {
		return bad("kind in a %q answer", clip(view))
	}
	file := kind == "film" || kind == "episode"
	number := func(p *int) bool { return p == nil || *p >= 0 && *p <= MaxHitNumber }
	count := func(n int) bool { return n >= 0 && n <= MaxLibraryCount }
	switch {
	case len(e.Title) > MaxHitTitle || !utf8.ValidString(e.Title) || len(e.EpisodeTitle) > MaxHitTitle || !utf8.ValidString(e.EpisodeTitle):
		return bad("title of %d bytes (at most %d, UTF-8)", len(e.Title), MaxHitTitle)
	case file != (e.CID != ""):
		return bad("cid is given exactly on films and episodes")
	case e.CID != "" && !canonical(e.CID):
		return bad("cid %q is not a CID in canonical form", clip(e.CID))
	case e.Poster != "" && !canonical(e.Poster):
		return bad("poster %q is not a CID in canonical form", clip(e.Poster))
	case e.Year < 0 || e.Year > 9999:
		return bad("year %d", e.Year)
	case (kind == "film") != (e.Show == ""):
		return bad("show is given on all but films")
	case len(e.Show) > MaxLibraryShowKey || !utf8.ValidString(e.Show):
		return bad("show of %d bytes (at most %d, UTF-8)", len(e.Show), MaxLibraryShowKey)
	case (kind == "season" || kind == "episode") != (e.Season != nil), (kind == "episode") != (e.Episode != nil):
		return bad("season or episode where its kind has none, or missing")
	case !number(e.Season) || !number(e.Episode):
		return bad("season or episode outside 0..%d", MaxHitNumber)
	case e.EpisodeTitle != "" && kind != "episode":
		return bad("episodeTitle on an entry that is no episode")
	case e.Size < 0 || (e.Size != 0 && !file):
		return bad("size %d", e.Size)
	case !count(e.Seasons) || (e.Seasons != 0 && kind != "show"):
		return bad("seasons %d", e.Seasons)
	case !count(e.Episodes) || (e.Episodes != 0 && kind != "show" && kind != "season"):
		return bad("episodes %d", e.Episodes)
	}
	return nil
}

// canonical reports a CID in canonical string form.
func canonical(c string) bool {
	_, err := ParseStrict(c)
	return err == nil
}

// LibraryAnswer is one page of a household's list: its name, what was
// asked, and the page.
type LibraryAnswer struct {
	// Name is the household's name ("" for none).
	Name string `json:"name,omitempty"`
	// View is the request's; Show, ShowTitle and Season say which show
	// and season a seasons or episodes page lists (ShowTitle "" when the
	// household holds no such show).
	View      string `json:"view"`
	Show      string `json:"show,omitempty"`
	ShowTitle string `json:"showTitle,omitempty"`
	Season    *int   `json:"season,omitempty"`
	// Page is the request's; Pages how many pages of the request's limit
	// the list has, Total its entries (after the request's words).
	Page  int `json:"page"`
	Pages int `json:"pages"`
	Total int `json:"total"`
	// Films and Shows count the household's whole list.
	Films int `json:"films"`
	Shows int `json:"shows"`
	// Entries are the page's, at most the request's limit (never null on
	// the wire).
	Entries []LibraryEntry `json:"entries"`
}

// Validate checks an answer to req: the name (CheckName), the view, show
// and season req asked, the page req asked, counts of 0..MaxLibraryCount
// with pages the total's at req's limit, at most req.Limit entries (and
// no more than the total), each valid for the view.
func (a LibraryAnswer) Validate(req LibraryRequest) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrMalformedLibrary, fmt.Sprintf(format, args...))
	}
	if err := CheckName(a.Name); err != nil {
		return bad("%v", err)
	}
	sameSeason := (a.Season == nil) == (req.Season == nil) && (a.Season == nil || *a.Season == *req.Season)
	ok := func(n int) bool { return n >= 0 && n <= MaxLibraryCount }
	switch {
	case a.View != req.View || a.Show != req.Show || !sameSeason:
		return bad("answers view %q, show %q, when asked view %q, show %q", clip(a.View), clip(a.Show), clip(req.View), clip(req.Show))
	case a.ShowTitle != "" && req.Show == "", len(a.ShowTitle) > MaxHitTitle || !utf8.ValidString(a.ShowTitle):
		return bad("showTitle of %d bytes", len(a.ShowTitle))
	case a.Page != req.Page:
		return bad("page %d, asked %d", a.Page, req.Page)
	case !ok(a.Total) || !ok(a.Films) || !ok(a.Shows):
		return bad("count outside 0..%d", MaxLibraryCount)
	case a.Pages != (a.Total+req.Limit-1)/req.Limit:
		return bad("%d pages for %d entries of %d a page", a.Pages, a.Total, req.Limit)
	case len(a.Entries) > req.Limit:
		return fmt.Errorf("%w: %d entries, asked for at most %d", ErrTooLarge, len(a.Entries), req.Limit)
	case len(a.Entries) > a.Total:
		return bad("%d entries in a list of %d", len(a.Entries), a.Total)
	}
	for _, e := range a.Entries {
		if err := e.Validate(req.View); err != nil {
			return err
		}
	}
	return nil
}

// libraryPayload is the signed answer, carried unparsed.
type libraryPayload struct{ b []byte }

func (*libraryPayload) Domain() string                   { return LibraryDomain }
func (*libraryPayload) Codec() []byte                    { return []byte(LibraryProtocolID) }
func (p *libraryPayload) MarshalRecord() ([]byte, error) { return p.b, nil }
func (p *libraryPayload) UnmarshalRecord(b []byte) error {
	p.b = b
	return nil
}

// SealLibrary validates a as the answer to req and signs its JSON into a
// signed envelope, domain LibraryDomain, payload type LibraryProtocolID:
// the body of a response. An envelope larger than MaxLibraryMessage is
// ErrTooLarge.
func SealLibrary(req LibraryRequest, a LibraryAnswer, key crypto.PrivKey) ([]byte, error) {
	if key == nil {
		return nil, errors.New("seal library: no key")
	}
	if a.Entries == nil {
		a.Entries = []LibraryEntry{}
	}
	if err := a.Validate(req); err != nil {
		return nil, fmt.Errorf("seal library: %w", err)
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("seal library: %w", err)
	}
	env, err := record.Seal(&libraryPayload{b: b}, key)
	if err != nil {
		return nil, fmt.Errorf("seal library: %w", err)
	}
	out, err := env.Marshal()
	if err != nil {
		return nil, fmt.Errorf("seal library: %w", err)
	}
	if len(out) > MaxLibraryMessage {
		return nil, fmt.Errorf("seal library: %w: envelope of %d bytes, at most %d", ErrTooLarge, len(out), MaxLibraryMessage)
	}
	return out, nil
}

// OpenLibrary verifies a response body received from peer from, the
// answer to req, and returns the answer. It checks: the size cap
// (ErrTooLarge); the envelope (ErrBadEnvelope) and its signature for
// LibraryDomain (ErrBadSignature); the payload type
// (ErrWrongLibraryPayloadType); the signer is from (ErrWrongSigner); the
// payload is one JSON object of the answer's fields and no other, with
// "view", "page", "pages", "total", "films", "shows" and "entries"
// required, nothing after it (ErrMalformedLibrary); and the answer is
// valid for req (LibraryAnswer.Validate, after the name is cleaned:
// CleanName). On error the answer is the zero value.
func OpenLibrary(envelope []byte, from peer.ID, req LibraryRequest) (LibraryAnswer, error) {
	a, err := openLibrary(envelope, from, req)
	if err != nil {
		return LibraryAnswer{}, fmt.Errorf("open library: %w", err)
	}
	return a, nil
}

func openLibrary(envelope []byte, from peer.ID, req LibraryRequest) (LibraryAnswer, error) {
	if err := req.Validate(); err != nil {
		return LibraryAnswer{}, err
	}
	if len(envelope) > MaxLibraryMessage {
		return LibraryAnswer{}, fmt.Errorf("%w: envelope of %d bytes, at most %d", ErrTooLarge, len(envelope), MaxLibraryMessage)
	}
	var payload libraryPayload
	env, err := record.ConsumeTypedEnvelope(envelope, &payload)
	switch {
	case err != nil && env == nil:
		return LibraryAnswer{}, fmt.Errorf("%w: %w", ErrBadEnvelope, err)
	case err != nil:
		return LibraryAnswer{}, fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	if !bytes.Equal(env.PayloadType, []byte(LibraryProtocolID)) {
		return LibraryAnswer{}, fmt.Errorf("%w: got %q", ErrWrongLibraryPayloadType, clip(string(env.PayloadType)))
	}
	signer, err := peer.IDFromPublicKey(env.PublicKey)
	if err != nil {
		return LibraryAnswer{}, fmt.Errorf("%w: %w", ErrBadEnvelope, err)
	}
	if signer != from {
		return LibraryAnswer{}, fmt.Errorf("%w: signed by %s, received from %s", ErrWrongSigner, signer, from)
	}
	a, err := decodeLibraryAnswer(payload.b)
	if err != nil {
		return LibraryAnswer{}, err
	}
	a.Name = CleanName(a.Name)
	if err := a.Validate(req); err != nil {
		return LibraryAnswer{}, err
	}
	return a, nil
}

// decodeLibraryAnswer reads an answer's payload: one object, no unknown
// field, the required ones present, nothing after it.
func decodeLibraryAnswer(b []byte) (LibraryAnswer, error) {
	if !utf8.Valid(b) {
		return LibraryAnswer{}, fmt.Errorf("%w: not UTF-8", ErrMalformedLibrary)
	}
	var present map[string]json.RawMessage
	if err := json.Unmarshal(b, &present); err != nil {
		return LibraryAnswer{}, fmt.Errorf("%w: %v", ErrMalformedLibrary, err)
	}
	for _, f := range []string{"view", "page", "pages", "total", "films", "shows", "entries"} {
		if v, ok := present[f]; !ok || string(v) == "null" {
			return LibraryAnswer{}, fmt.Errorf("%w: field %q is missing", ErrMalformedLibrary, f)
		}
	}
	var a LibraryAnswer
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return LibraryAnswer{}, fmt.Errorf("%w: %v", ErrMalformedLibrary, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return LibraryAnswer{}, fmt.Errorf("%w: data after the answer", ErrMalformedLibrary)
	}
	return a, nil
}
