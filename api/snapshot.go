package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"strings"
)

// snapshotPath is the route of GET and POST /api/snapshot: bearer token
// or loopback only (access.go).
const snapshotPath = "/api/snapshot"

// MaxSnapshotUpload bounds the body of POST /api/snapshot.
const MaxSnapshotUpload = 8 << 30

// Snapshotter is a Backend that exports and imports snapshots of the
// household's metadata (an optional interface, as AnswerCache is).
type Snapshotter interface {
	// ExportSnapshot writes the snapshot to w as it reads the store;
	// localOnly leaves peers' records out.
	ExportSnapshot(ctx context.Context, w io.Writer, localOnly bool) error
	// ImportSnapshot reads the snapshot that open returns (it may call
	// open more than once) and applies it as opts say. A snapshot that
	// does not check out whole returns an error wrapping ErrBadRequest
	// that names the line, and nothing is written.
	ImportSnapshot(ctx context.Context, open func() (io.ReadCloser, error), opts SnapshotImport) (SnapshotReport, error)
}

// SnapshotImport are the options of POST /api/snapshot.
type SnapshotImport struct {
	// Replace makes the store hold exactly the snapshot's roots; else
	// the snapshot is merged (the store's values are kept).
	Replace bool
	// DryRun counts and writes nothing.
	DryRun bool
	// MapPath rewrites paths under Old to New ([Old, New] pairs).
	MapPath [][2]string
}

// SnapshotReport is the answer of POST /api/snapshot.
type SnapshotReport struct {
	Mode      string `json:"mode"`
	DryRun    bool   `json:"dryRun"`
	Roots     int    `json:"roots"`
	Added     int    `json:"added"`
	Changed   int    `json:"changed"`
	Unchanged int    `json:"unchanged"`
	Removed   int    `json:"removed"`
	SHA256    string `json:"sha256"`
}

// routeSnapshot registers GET and POST /api/snapshot.
func (s *Server) routeSnapshot() {
	s.mux.HandleFunc("GET "+snapshotPath, s.exportSnapshot)
	s.mux.HandleFunc("POST "+snapshotPath, s.importSnapshot)
}

func (s *Server) snapshotter(w http.ResponseWriter) (Snapshotter, bool) {
	sn, ok := s.b.(Snapshotter)
	if !ok {
		writeErrorCode(w, http.StatusNotFound, "this node does not export or import snapshots")
	}
	return sn, ok
}

func (s *Server) exportSnapshot(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := onlyParams(q, "local_only"); err != nil {
		writeError(w, err)
		return
	}
	localOnly, err := boolParam(q, "local_only")
	if err != nil {
		writeError(w, err)
		return
	}
	sn, ok := s.snapshotter(w)
	if !ok {
		return
	}
	sw := &startedWriter{w: w}
	err = sn.ExportSnapshot(r.Context(), sw, localOnly)
	if err != nil && !sw.started {
		writeError(w, err)
		return
	}
	if err != nil {
		// The status is sent: the file ends without its trailer, which
		// every reader of it refuses as truncated.
		s.logFailure(r, "snapshot export", err)
	}
}

// startedWriter sets the export's headers before its first byte and
// says whether one was written.
type startedWriter struct {
	w       http.ResponseWriter
	started bool
}

func (sw *startedWriter) Write(b []byte) (int, error) {
	if !sw.started {
		sw.started = true
		h := sw.w.Header()
		h.Set("Content-Type", "application/gzip")
		h.Set("Content-Disposition", `attachment; filename="metamesh-snapshot.jsonl.gz"`)
		sw.w.WriteHeader(http.StatusOK)
	}
	return sw.w.Write(b)
}

func (s *Server) importSnapshot(w http.ResponseWriter, r *http.Request) {
	opts, err := snapshotParams(r)
	if err != nil {
		writeError(w, err)
		return
	}
	sn, ok := s.snapshotter(w)
	if !ok {
		return
	}
	f, err := spool(http.MaxBytesReader(w, r.Body, MaxSnapshotUpload))
	if err != nil {
		writeError(w, err)
		return
	}
	defer func() { _ = os.Remove(f) }()
	rep, err := sn.ImportSnapshot(r.Context(), func() (io.ReadCloser, error) { return os.Open(f) }, opts)
	if err != nil {
		s.logFailure(r, "snapshot import", err)
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// snapshotParams reads mode, dry_run and map_path (repeatable,
// OLD=NEW, both absolute).
func snapshotParams(r *http.Request) (SnapshotImport, error) {
	q := r.URL.Query()
	var o SnapshotImport
	if err := onlyParams(q, "mode", "dry_run", "map_path"); err != nil {
		return o, err
	}
	switch m := q.Get("mode"); m {
	case "", "merge":
	case "replace":
		o.Replace = true
	default:
		return o, badRequest("mode %q: want merge or replace", m)
	}
	var err error
	if o.DryRun, err = boolParam(q, "dry_run"); err != nil {
		return o, err
	}
	for _, m := range q["map_path"] {
		oldP, newP, ok := strings.Cut(m, "=")
		if !ok || !path.IsAbs(oldP) || !path.IsAbs(newP) {
			return o, badRequest("map_path %q: want OLD=NEW, both absolute paths", m)
		}
		o.MapPath = append(o.MapPath, [2]string{path.Clean(oldP), path.Clean(newP)})
	}
	return o, nil
}

// spool copies the body to a temporary file, which an import reads
// twice (checked whole, then applied), and returns its name.
func spool(body io.Reader) (string, error) {
	f, err := os.CreateTemp("", "metamesh-snapshot-*")
	if err != nil {
		return "", fmt.Errorf("snapshot upload: %w", err)
	}
	_, err = io.Copy(f, body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		if mb := (*http.MaxBytesError)(nil); errors.As(err, &mb) {
			return "", badRequest("snapshot larger than %d bytes", mb.Limit)
		}
		return "", badRequest("snapshot upload: %v", err)
	}
	return f.Name(), nil
}
