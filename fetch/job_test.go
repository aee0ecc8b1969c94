package fetch_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/metamesh/node/fetch"
	"github.com/metamesh/node/ingest"
)

// node answers GET /api/file/<cid> for one file as the node's API does
// (http.ServeContent: Range, If-Range against the ETag, the file's name
// in Content-Disposition), a JSON 404 for any other CID; cut > 0 sends
// only that many bytes of a body, then nothing until the client leaves.
// It notes each request's Range.
type node struct {
	name  string
	bytes []byte
	h     ingest.FileHashes
	cut   int

	mu     sync.Mutex
	ranges []string
}

func newNode(t *testing.T) *node {
	t.Helper()
	n := &node{name: "Amélie (2001).mkv", bytes: make([]byte, 1<<20+12345)}
	rand.Read(n.bytes)
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, n.bytes, 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	if n.h, err = ingest.HashFile(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return n
}

func (n *node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	n.ranges = append(n.ranges, r.Header.Get("Range"))
	n.mu.Unlock()
	if r.URL.Path != "/api/file/"+n.h.Canonical {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(map[string]string{"error": "no one has it"})
		return
	}
	w.Header().Set("ETag", `"`+n.h.Canonical+`"`)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": n.name}))
	if n.cut == 0 {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(n.bytes))
		return
	}
	w.Header().Set("Content-Length", "1060921")
	w.Write(n.bytes[:n.cut])
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

// requested is every request's Range so far.
func (n *node) requested() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.ranges)
}

// job is a Job of c on the node at base, heard by a log.
func job(base, c string) (*fetch.Job, *log) {
	l := &log{}
	return &fetch.Job{
		CID:    c,
		Report: l,
		Request: func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/file/"+c, nil)
		},
	}, l
}

// log is a Reporter that keeps what it hears: the notes, and each pass
// as "what from/total: counted, ok".
type log struct {
	notes  []string
	passes []*pass
}

type pass struct {
	what        string
	from, total int64
	counted     int64
	finished    string // "ok", "cut short", or "" while it runs
}

func (l *log) Note(line string) { l.notes = append(l.notes, line) }

func (l *log) Progress(what string, from, total int64) fetch.Progress {
	p := &pass{what: what, from: from, total: total}
	l.passes = append(l.passes, p)
	return p
}

func (p *pass) Add(n int64) { p.counted += n }

func (p *pass) Finish(ok bool) {
	p.finished = "cut short"
	if ok {
		p.finished = "ok"
	}
}

// saved fails the test unless p holds want and nothing of a download's
// state is left beside it.
func saved(t *testing.T, p string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes (%v), not the node's file's %d", p, len(got), err, len(want))
	}
	for _, s := range []string{".part", ".etag.part", ".corrupt.part"} {
		if _, err := os.Stat(p + s); err == nil {
			t.Errorf("%s%s left beside the saved file", p, s)
		}
	}
}

// TestJob_ToFile: a download saved under the node's name, whole or
// resumed from FILE.part while the node's ETag is the saved one, with
// what the Reporter heard.
func TestJob_ToFile(t *testing.T) {
	n := newNode(t)
	srv := httptest.NewServer(n)
	t.Cleanup(srv.Close)
	const have = 300_000
	size := int64(len(n.bytes))
	etag := `"` + n.h.Canonical + `"`
	for _, tt := range []struct {
		name      string
		part      []byte
		etag      string // "" for no ETag file
		byName    bool   // the node's name for the file, learned from a first answer; else its path
		wantRange string // of the last request
		wantNote  string
		wantFrom  int64 // of the download's pass
	}{
		{"whole", nil, "", true, "", "", 0},
		{"the rest", n.bytes[:have], etag, false, "bytes=300000-", "resuming %s after 293.0 KiB", have},
		{"the rest, the node's name", n.bytes[:have], etag, true, "bytes=300000-", "resuming %s after 293.0 KiB", have},
		{"another ETag", make([]byte, have), `"other"`, false, "bytes=300000-", `the node's file is not the one %s.part began (its ETag is no longer "other"): starting over`, 0},
		{"no ETag", make([]byte, have), "", false, "", "no ETag saved with %s.part, so nothing says its bytes are the node's file's: starting over", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, n.name)
			if tt.part != nil {
				os.WriteFile(out+".part", tt.part, 0o644)
			}
			if tt.etag != "" {
				os.WriteFile(out+".etag.part", []byte(tt.etag+"\n"), 0o644)
			}
			output := out
			if tt.byName {
				output = dir
			}
			j, l := job(srv.URL, n.h.Canonical)
			got, err := j.ToFile(context.Background(), output)
			want := fetch.Result{Path: out, Size: size, Kind: fetch.KindIPFS}
			if err != nil || got != want {
				t.Fatalf("got %+v, %v; want %+v", got, err, want)
			}
			saved(t, out, n.bytes)
			if r := n.requested(); r[len(r)-1] != tt.wantRange {
				t.Errorf("requests' ranges %q; want the last %q", r, tt.wantRange)
			}
			wantNote := strings.ReplaceAll(tt.wantNote, "%s", out)
			if (wantNote == "") != (len(l.notes) == 0) || (wantNote != "" && !slices.Contains(l.notes, wantNote)) {
				t.Errorf("notes %q; want %q", l.notes, wantNote)
			}
			wantPasses := []pass{
				{what: n.name, from: tt.wantFrom, total: size, counted: size - tt.wantFrom, finished: "ok"},
				{what: "checking " + n.name, total: size, counted: size, finished: "ok"},
			}
			if len(l.passes) != 2 || *l.passes[0] != wantPasses[0] || *l.passes[1] != wantPasses[1] {
				t.Errorf("passes %+v; want %+v", l.passes, wantPasses)
			}
		})
	}
}

// TestJob_ToFile_Refusals: a file in the way, the node's refusal, a
// node that does not answer, bytes that do not match the CID.
func TestJob_ToFile_Refusals(t *testing.T) {
	n := newNode(t)
	srv := httptest.NewServer(n)
	t.Cleanup(srv.Close)

	t.Run("a file in the way", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "here.mkv")
		os.WriteFile(out, []byte("mine"), 0o644)
		j, _ := job(srv.URL, n.h.Canonical)
		if _, err := j.ToFile(context.Background(), out); err == nil || !strings.Contains(err.Error(), "already exists: --force replaces it") {
			t.Errorf("got %v; want the file in the way", err)
		}
		j.Force = true
		if _, err := j.ToFile(context.Background(), out); err != nil {
			t.Fatal(err)
		}
		saved(t, out, n.bytes)
	})

	t.Run("no one has it", func(t *testing.T) {
		j, _ := job(srv.URL, n.h.SHA256)
		_, err := j.ToFile(context.Background(), t.TempDir())
		var refused *fetch.RefusedError
		if !errors.As(err, &refused) || refused.Answer.StatusCode != http.StatusNotFound || refused.Message != "no one has it" {
			t.Errorf("got %v; want the node's 404 in its words", err)
		}
	})

	t.Run("no node", func(t *testing.T) {
		gone := httptest.NewServer(n)
		gone.Close()
		j, _ := job(gone.URL, n.h.Canonical)
		var lost *fetch.UnreachableError
		if _, err := j.ToFile(context.Background(), t.TempDir()); !errors.As(err, &lost) {
			t.Errorf("got %v; want UnreachableError", err)
		}
	})

	// The node serves the file under a CID asked for that is not its.
	t.Run("bytes that do not match", func(t *testing.T) {
		dir := t.TempDir()
		other := newNode(t)
		j, _ := job(srv.URL, n.h.Canonical)
		j.CID = other.h.Canonical
		_, err := j.ToFile(context.Background(), dir)
		if err == nil || !strings.Contains(err.Error(), "do not match "+other.h.Canonical) {
			t.Fatalf("got %v; want the mismatch", err)
		}
		if _, err := os.Stat(filepath.Join(dir, n.name+".corrupt.part")); err != nil {
			t.Errorf("the bytes were not moved aside: %v", err)
		}
	})
}

// TestJob_Stall: a node that stops sending is given up after Stall, and
// what came stays in FILE.part with its ETag, for the resume.
func TestJob_Stall(t *testing.T) {
	n := newNode(t)
	n.cut = 100 << 10
	srv := httptest.NewServer(n)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	j, l := job(srv.URL, n.h.Canonical)
	j.Stall = time.Second
	_, err := j.ToFile(context.Background(), dir)
	out := filepath.Join(dir, n.name)
	want := "the node sent nothing for 1s after 100.0 KiB (--stall); " + out + ".part holds the 102400 bytes saved: the same command resumes"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v; want %q", err, want)
	}
	if len(l.passes) != 1 || l.passes[0].finished != "cut short" || l.passes[0].counted != 100<<10 {
		t.Errorf("passes %+v; want one cut short after 102400 bytes", l.passes)
	}
	if b, _ := os.ReadFile(out + ".etag.part"); string(b) != `"`+n.h.Canonical+`"`+"\n" {
		t.Errorf("ETag saved %q", b)
	}
}

// TestJob_ToStdout: the bytes written as they come and checked as they
// pass, by each of the file's CIDs; a damaged byte fails the check once
// all are out.
func TestJob_ToStdout(t *testing.T) {
	n := newNode(t)
	srv := httptest.NewServer(n)
	t.Cleanup(srv.Close)
	for _, tt := range []struct{ name, cid, kind string }{
		{"IPFS", n.h.IPFS, fetch.KindIPFS},
		{"sha2-256", n.h.SHA256, fetch.KindSHA256},
		{"midhash", n.h.Midhash, fetch.KindMidhash},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j, _ := job(srv.URL, n.h.Canonical)
			j.CID = tt.cid
			var w bytes.Buffer
			got, err := j.ToStdout(context.Background(), &w)
			want := fetch.Result{Size: int64(len(n.bytes)), Kind: tt.kind}
			if err != nil || got != want || !bytes.Equal(w.Bytes(), n.bytes) {
				t.Errorf("got %+v, %v, %d bytes; want %+v and the file", got, err, w.Len(), want)
			}
		})
	}
	t.Run("not the CID's bytes", func(t *testing.T) {
		other := newNode(t)
		j, _ := job(srv.URL, n.h.Canonical)
		j.CID = other.h.SHA256
		var w bytes.Buffer
		_, err := j.ToStdout(context.Background(), &w)
		if err == nil || !strings.Contains(err.Error(), "the 1060921 bytes written to stdout do not match "+other.h.SHA256) || w.Len() != len(n.bytes) {
			t.Errorf("got %v after %d bytes; want the mismatch after all", err, w.Len())
		}
	})
}
