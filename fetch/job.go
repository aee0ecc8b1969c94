package fetch

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Job is one download of the file a CID names, from a node's
// GET /api/file/<cid>: saved to a file beside its resume state and
// checked before it takes its name (ToFile), or written out as it comes
// and checked as it passes (ToStdout).
type Job struct {
	// CID is the CID asked for, in canonical form (protocol.Normalize).
	CID string
	// Request makes the GET of the file on the node under ctx; the Job
	// adds the headers it needs (Range, If-Range, Accept-Encoding). An
	// error of it is returned as it is.
	Request func(ctx context.Context) (*http.Request, error)
	// Stall ends a download when the node sends nothing for this long
	// (no answer, then no byte); 0: never. There is no other time limit:
	// a file from peers may take minutes.
	Stall time.Duration
	// Force lets the download replace a regular file at its path, once
	// the new copy is checked.
	Force bool
	// Report hears the download's notes and progress; nil: nothing.
	Report Reporter
}

// Result is a download checked against the CID asked for.
type Result struct {
	Path string // where it was saved; "" for ToStdout
	Size int64  // its bytes
	Kind string // which of the file's CIDs the CID asked for is: KindIPFS, KindSHA256 or KindMidhash
}

// The kinds of a file's CIDs, as ingest.FileHashes names them. A match
// by KindMidhash checks the size and a sample of 1 MiB, not every byte.
const (
	KindIPFS    = "ipfs"
	KindSHA256  = "sha2-256"
	KindMidhash = "midhash256"
)

// The names of a download's state beside FILE. They end in .part, which
// the node never ingests (ingest.Skipped), so that saving into a library
// adds only the finished file to it.
const (
	partSuffix    = ".part"         // the bytes so far
	etagSuffix    = ".etag.part"    // the node's ETag for them, for If-Range
	corruptSuffix = ".corrupt.part" // bytes that did not match the CID
)

// download is a Job under way.
type download struct {
	*Job
	ctx    context.Context
	report Reporter // never nil
}

func (j *Job) start(ctx context.Context) *download {
	r := j.Report
	if r == nil {
		r = quiet{}
	}
	return &download{Job: j, ctx: ctx, report: r}
}

// ToFile saves the file at output and checks it, resuming what an
// earlier attempt there left. output is a file's path, a directory to
// save in under the node's name for the file, or "" for that name in the
// current directory. The bytes go to FILE.part, renamed FILE once they
// match the CID; an interrupted download keeps FILE.part and the node's
// ETag for it (FILE.etag.part), and the same call resumes it, asking only
// for the bytes after those, if the node's ETag is still the saved one.
// Bytes that do not match are moved to FILE.corrupt.part.
func (j *Job) ToFile(ctx context.Context, output string) (Result, error) {
	d := j.start(ctx)
	out, dir, err := outputPath(output)
	if err != nil {
		return Result{}, err
	}
	var have int64
	var etag string
	if out != "" {
		if err := d.mayWrite(out); err != nil {
			return Result{}, err
		}
		have, etag = partial(out)
	}
	a, err := d.get(have, etag)
	if err != nil {
		return Result{}, err
	}
	if out == "" {
		// The name is the node's: known only from its answer. A
		// download of it begun before is resumed with a request of its
		// own, if the node's file is still the one begun.
		out = filepath.Join(dir, fileName(a.Header, j.CID))
		if err := d.mayWrite(out); err != nil {
			a.close()
			return Result{}, err
		}
		if have, etag = partial(out); have > 0 && etag != "" && etag == a.Header.Get("ETag") {
			a.close()
			if a, err = d.get(have, etag); err != nil {
				return Result{}, err
			}
		}
	}
	size, err := d.save(a, out, have, etag)
	if err != nil {
		return Result{}, err
	}
	return d.check(out, size)
}

// outputPath is where output says to save: a file's path, or a directory
// (dir) in which the node's name for the file is the path, not known
// before its answer (out "").
func outputPath(output string) (out, dir string, err error) {
	switch fi, serr := os.Stat(output); {
	case output == "":
		return "", ".", nil
	case serr == nil && fi.IsDir():
		return "", output, nil
	}
	if fi, err := os.Stat(filepath.Dir(output)); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("-o %s: no directory %s to save it in", output, filepath.Dir(output))
	}
	return output, "", nil
}

// mayWrite refuses out when a file is there already, unless Force;
// and anything but a regular file even then: the rename at the end
// would put the download in place of a device, a FIFO or a symbolic
// link (-o /dev/null would replace /dev/null).
func (d *download) mayWrite(out string) error {
	fi, err := os.Lstat(out)
	switch {
	case err != nil:
		return nil
	case fi.IsDir():
		return fmt.Errorf("%s is a directory: -o names the file to save", out)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (%s), which get never replaces: -o names a file to save, -o - writes to stdout", out, fileKind(fi.Mode()))
	case !d.Force:
		return fmt.Errorf("%s already exists: --force replaces it (once the new copy is checked), or -o names another file", out)
	}
	return nil
}

// fileKind names what a file that is not regular is.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// partial is what an earlier download to out left: the size of
// out.part and the ETag saved with it ("" when there is none, and then
// the download cannot resume: only the ETag says the node still serves
// the bytes those were).
func partial(out string) (have int64, etag string) {
	fi, err := os.Stat(out + partSuffix)
	if err != nil || !fi.Mode().IsRegular() {
		return 0, ""
	}
	b, err := os.ReadFile(out + etagSuffix)
	if err != nil {
		return fi.Size(), ""
	}
	return fi.Size(), strings.TrimSpace(string(b))
}
