package store

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/protocol"
)

// The snapshot format (docs/schema.md, "Snapshots"): gzip'd JSON lines,
// a header, one line per root, a trailer with the count of root lines
// and the SHA-256 of every byte before it.
const (
	SnapshotFormat  = "metamesh-snapshot"
	SnapshotVersion = 1
	// MaxSnapshotLine bounds one line of a snapshot (a root with its
	// fields, members and paths), newline included.
	MaxSnapshotLine = 16 << 20
)

// ErrBadSnapshot: a snapshot that is not one this binary reads whole (a
// wrong header or version, a line that does not parse, a truncated or
// altered file). A *SnapshotError says which line.
var ErrBadSnapshot = errors.New("bad snapshot")

// SnapshotError is a snapshot refused at line Line (1 is the header).
// It unwraps to ErrBadSnapshot.
type SnapshotError struct {
	Line int
	Err  error
}

func (e *SnapshotError) Error() string {
	return fmt.Sprintf("snapshot line %d: %v", e.Line, e.Err)
}

// Unwrap returns ErrBadSnapshot.
func (e *SnapshotError) Unwrap() error { return ErrBadSnapshot }

// SnapshotHeader is a snapshot's first line.
type SnapshotHeader struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Created is when the export began (RFC 3339, UTC).
	Created string `json:"created"`
	// Peer is the exporting node's peer ID ("" when unknown).
	Peer string `json:"peer,omitempty"`
	// LocalOnly: peers' records were left out.
	LocalOnly bool `json:"localOnly,omitempty"`
	// Roots is the number of root lines when known before they were
	// written; the trailer always has it.
	Roots *int `json:"roots,omitempty"`
	// Members are the household's members (store.Members), whose watch
	// state root lines carry (SnapshotRoot.Watch).
	Members []string `json:"members,omitempty"`
}

// SnapshotOwn are the digests a local root computed from its own bytes:
// the midhash, and once confirmed the sha2-256 and IPFS CIDs.
type SnapshotOwn struct {
	Mid    string `json:"mid"`
	SHA256 string `json:"sha256,omitempty"`
	IPFS   string `json:"ipfs,omitempty"`
}

// SnapshotPath is one local path of a root as the path index held it.
type SnapshotPath struct {
	Path    string `json:"path"`
	Primary bool   `json:"primary,omitempty"`
	Size    int64  `json:"size"`
	MtimeNs int64  `json:"mtime"`
	Mid     string `json:"mid"`
	Hashed  bool   `json:"hashed,omitempty"`
	Link    bool   `json:"link,omitempty"`
}

// SnapshotRoot is one root line: every flat field of the root (schema
// fields and peers' origin/<peer>/… claims included), its key-set, the
// members learned from peers with the peers, the peers, its own digests
// and its local paths.
type SnapshotRoot struct {
	Root    RootID              `json:"root"`
	Fields  map[string]string   `json:"fields"`
	CIDs    []string            `json:"cids"`
	Own     *SnapshotOwn        `json:"own,omitempty"`
	Learned map[string][]string `json:"learned,omitempty"`
	Peers   []string            `json:"peers,omitempty"`
	Paths   []SnapshotPath      `json:"paths,omitempty"`
	// Edited are the fields whose values are the household's edits
	// (Document.Edited): an import keeps them edits.
	Edited []string `json:"edited,omitempty"`
	// Watch is how far each member watched the file (member → state),
	// each a member of the header's Members.
	Watch map[string]model.WatchState `json:"watch,omitempty"`
}

// Local reports whether the root is a local file (it has a filePath).
func (r SnapshotRoot) Local() bool { return r.Fields["filePath"] != "" }

// snapshotTrailer is the last line.
type snapshotTrailer struct {
	End    bool   `json:"end"`
	Roots  int    `json:"roots"`
	SHA256 string `json:"sha256"`
}

// snapshotWriter writes a snapshot line by line, hashing what it writes.
type snapshotWriter struct {
	gz    *gzip.Writer
	w     *bufio.Writer
	sum   hash.Hash
	roots int
}

func newSnapshotWriter(w io.Writer, h SnapshotHeader) (*snapshotWriter, error) {
	gz := gzip.NewWriter(w)
	sw := &snapshotWriter{gz: gz, w: bufio.NewWriterSize(gz, 64<<10), sum: sha256.New()}
	h.Format, h.Version = SnapshotFormat, SnapshotVersion
	return sw, sw.line(h, true)
}

// line writes v as one JSON line; hashed lines count into the trailer's
// SHA-256.
func (sw *snapshotWriter) line(v any, hashed bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if hashed {
		sw.sum.Write(b)
	}
	_, err = sw.w.Write(b)
	return err
}

func (sw *snapshotWriter) root(r SnapshotRoot) error {
	sw.roots++
	return sw.line(r, true)
}

// close writes the trailer and ends the gzip stream (the underlying
// writer is the caller's).
func (sw *snapshotWriter) close() error {
	t := snapshotTrailer{End: true, Roots: sw.roots, SHA256: hex.EncodeToString(sw.sum.Sum(nil))}
	if err := sw.line(t, false); err != nil {
		return err
	}
	if err := sw.w.Flush(); err != nil {
		return err
	}
	return sw.gz.Close()
}

// SnapshotReader reads a snapshot line by line, checking each; Next
// returns io.EOF after a trailer that matches what came before it.
type SnapshotReader struct {
	Header SnapshotHeader
	gz     *gzip.Reader
	r      *bufio.Reader
	sum    hash.Hash
	line   int
	roots  int
	done   bool
}

// NewSnapshotReader reads and checks the header of the snapshot r.
func NewSnapshotReader(r io.Reader) (*SnapshotReader, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, &SnapshotError{Line: 1, Err: fmt.Errorf("not a gzip stream: %v", err)}
	}
	gz.Multistream(false)
	sr := &SnapshotReader{gz: gz, r: bufio.NewReaderSize(gz, 64<<10), sum: sha256.New()}
	b, err := sr.next()
	if err != nil {
		return nil, err
	}
	if err := parseSnapshotHeader(b, &sr.Header); err != nil {
		return nil, &SnapshotError{Line: 1, Err: err}
	}
	sr.sum.Write(b)
	return sr, nil
}

// next reads the next line, newline included.
func (sr *SnapshotReader) next() ([]byte, error) {
	sr.line++
	var b []byte
	for {
		chunk, err := sr.r.ReadSlice('\n')
		b = append(b, chunk...)
		if len(b) > MaxSnapshotLine {
			return nil, &SnapshotError{Line: sr.line, Err: fmt.Errorf("line longer than %d bytes", MaxSnapshotLine)}
		}
		switch {
		case err == nil:
			return b, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return nil, &SnapshotError{Line: sr.line, Err: errors.New("file ends before the trailer (truncated)")}
		default:
			return nil, &SnapshotError{Line: sr.line, Err: err}
		}
	}
}

// Next returns the next root line; io.EOF once the trailer was read
// and found to match; a *SnapshotError for anything else.
func (sr *SnapshotReader) Next() (SnapshotRoot, error) {
	if sr.done {
		return SnapshotRoot{}, io.EOF
	}
	b, err := sr.next()
	if err != nil {
		return SnapshotRoot{}, err
	}
	if bytes.HasPrefix(b, []byte(`{"end":`)) {
		return SnapshotRoot{}, sr.trailer(b)
	}
	r, err := ParseSnapshotRoot(b)
	if err == nil {
		err = r.checkWatch(sr.Header.Members)
	}
	if err != nil {
		return SnapshotRoot{}, &SnapshotError{Line: sr.line, Err: err}
	}
	sr.sum.Write(b)
	sr.roots++
	return r, nil
}

func (sr *SnapshotReader) trailer(b []byte) error {
	var t snapshotTrailer
	if err := strictJSON(b, &t); err != nil || !t.End {
		return &SnapshotError{Line: sr.line, Err: fmt.Errorf("trailer does not parse: %v", err)}
	}
	if t.Roots != sr.roots {
		return &SnapshotError{Line: sr.line, Err: fmt.Errorf("trailer counts %d roots, the file has %d", t.Roots, sr.roots)}
	}
	if h := sr.Header.Roots; h != nil && *h != sr.roots {
		return &SnapshotError{Line: sr.line, Err: fmt.Errorf("header counts %d roots, the file has %d", *h, sr.roots)}
	}
	if got := hex.EncodeToString(sr.sum.Sum(nil)); got != t.SHA256 {
		return &SnapshotError{Line: sr.line, Err: fmt.Errorf("sha256 of lines 1-%d is %s, the trailer says %s (altered)", sr.line-1, got, t.SHA256)}
	}
	if _, err := sr.r.ReadByte(); !errors.Is(err, io.EOF) {
		return &SnapshotError{Line: sr.line + 1, Err: errors.New("data after the trailer")}
	}
	sr.done = true
	return io.EOF
}

// SHA256 is the trailer's digest, once Next returned io.EOF.
func (sr *SnapshotReader) SHA256() string { return hex.EncodeToString(sr.sum.Sum(nil)) }

// Roots is the number of root lines read so far.
func (sr *SnapshotReader) Roots() int { return sr.roots }

// strictJSON decodes one JSON object, refusing unknown fields.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

func parseSnapshotHeader(b []byte, h *SnapshotHeader) error {
	if err := strictJSON(b, h); err != nil {
		return fmt.Errorf("header does not parse: %v", err)
	}
	if h.Format != SnapshotFormat {
		return fmt.Errorf("format %q, want %q", h.Format, SnapshotFormat)
	}
	if h.Version != SnapshotVersion {
		return fmt.Errorf("version %d, this binary reads version %d", h.Version, SnapshotVersion)
	}
	if _, err := time.Parse(time.RFC3339Nano, h.Created); err != nil {
		return fmt.Errorf("created: %v", err)
	}
	for _, m := range h.Members {
		if err := model.CheckMemberName(m); err != nil {
			return fmt.Errorf("members: %v", err)
		}
	}
	return nil
}

// checkWatch checks a root line's watch state: each of a member the
// header lists, with a position and duration a player could have sent.
func (r SnapshotRoot) checkWatch(members []string) error {
	for m, w := range r.Watch {
		if !slices.Contains(members, m) {
			return fmt.Errorf("root %s: watch of %q, who is not among the header's members", r.Root, m)
		}
		if err := (model.WatchUpdate{Position: w.Position, Duration: w.Duration}).Check(); err != nil {
			return fmt.Errorf("root %s: watch of %q: %v", r.Root, m, err)
		}
	}
	return nil
}

// ParseSnapshotRoot parses and checks one root line: a root ID, member
// CIDs in canonical form, field names of the open schema (schema fields
// and origin/<peer>/… included), learned members and own digests among
// the members, absolute clean paths.
func ParseSnapshotRoot(b []byte) (SnapshotRoot, error) {
	var r SnapshotRoot
	if err := strictJSON(b, &r); err != nil {
		return r, fmt.Errorf("root line does not parse: %v", err)
	}
	return r, r.check()
}

func (r SnapshotRoot) check() error {
	if len(r.Root) != 26 {
		return fmt.Errorf("root %q is not a root ID", r.Root)
	}
	if len(r.CIDs) == 0 {
		return fmt.Errorf("root %s has no CIDs", r.Root)
	}
	members := make(map[string]bool, len(r.CIDs))
	for _, c := range r.CIDs {
		if _, err := protocol.ParseStrict(c); err != nil {
			return fmt.Errorf("root %s: cid %q: %v", r.Root, c, err)
		}
		members[c] = true
	}
	for f := range r.Fields {
		if err := snapshotField(f); err != nil {
			return fmt.Errorf("root %s: %v", r.Root, err)
		}
	}
	for c, ps := range r.Learned {
		if !members[c] || len(ps) == 0 {
			return fmt.Errorf("root %s: learned %q is not a member or names no peer", r.Root, c)
		}
		for _, p := range ps {
			if err := checkPeer(p); err != nil {
				return fmt.Errorf("root %s: learned %s: %v", r.Root, c, err)
			}
		}
	}
	for _, p := range r.Peers {
		if err := checkPeer(p); err != nil {
			return fmt.Errorf("root %s: peers: %v", r.Root, err)
		}
	}
	if o := r.Own; o != nil {
		for _, c := range []string{o.Mid, o.SHA256, o.IPFS} {
			if c != "" && !members[c] {
				return fmt.Errorf("root %s: own digest %q is not a member", r.Root, c)
			}
		}
		if o.Mid == "" || (o.SHA256 == "") != (o.IPFS == "") {
			return fmt.Errorf("root %s: own digests incomplete", r.Root)
		}
	}
	return r.checkPaths()
}

func (r SnapshotRoot) checkPaths() error {
	primaries := 0
	for _, p := range r.Paths {
		if !path.IsAbs(p.Path) || path.Clean(p.Path) != p.Path || strings.ContainsRune(p.Path, 0) {
			return fmt.Errorf("root %s: path %q is not absolute and clean", r.Root, p.Path)
		}
		if _, err := protocol.ParseStrict(p.Mid); err != nil {
			return fmt.Errorf("root %s: path %s: mid: %v", r.Root, p.Path, err)
		}
		if p.Primary {
			primaries++
			if r.Fields["filePath"] != p.Path {
				return fmt.Errorf("root %s: primary path %s is not its filePath", r.Root, p.Path)
			}
		}
	}
	// A local root whose primary the path index lost (fsck reports it)
	// is exported without it: its duplicates, if any, carry it.
	if primaries > 1 || (len(r.Paths) > 0 && r.Own == nil) {
		return fmt.Errorf("root %s: paths need at most one primary and the root's own digests", r.Root)
	}
	return nil
}

// snapshotField checks a field name of a root line: a field of the open
// schema, a schema field (filePath, sizeByte, mtime) or a peer's claim
// origin/<peer>/<field>.
func snapshotField(f string) error {
	switch f {
	case "filePath", "sizeByte", "mtime":
		return nil
	}
	if rest, ok := strings.CutPrefix(f, OriginPrefix+"/"); ok {
		peer, field, ok := strings.Cut(rest, "/")
		if !ok {
			return fmt.Errorf("field %q: origin/<peer>/<field> wanted", f)
		}
		if err := checkPeer(peer); err != nil {
			return fmt.Errorf("field %q: %v", f, err)
		}
		if field == "sizeByte" {
			return nil
		}
		return ValidField(field)
	}
	return ValidField(f)
}
