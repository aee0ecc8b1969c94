package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// answer is the node's answer to a GET of the file, its body read
// under the stall guard.
type answer struct {
	*http.Response
	body  io.Reader
	guard *stallGuard
}

func (a *answer) close() {
	a.Body.Close()
	a.guard.stop()
}

// copyBuffer is the size of the reads a download's bytes pass in.
const copyBuffer = 256 << 10

// get asks the node for the file: from byte from on, if the node's
// ETag is still etag, when from > 0 and etag is known (If-Range: the
// node answers the whole file otherwise). An answer that is not the
// file's bytes is returned as the node's error.
func (d *download) get(from int64, etag string) (*answer, error) {
	ctx, guard := newStallGuard(d.ctx, d.Stall)
	req, err := d.Request(ctx)
	if err != nil {
		guard.stop()
		return nil, err
	}
	// The bytes as the file holds them: no gzip for the transport to
	// undo, which would hide the file's length.
	req.Header.Set("Accept-Encoding", "identity")
	if from > 0 && etag != "" {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", from))
		req.Header.Set("If-Range", etag)
	}
	// No client timeout: a file from peers may take minutes; the stall
	// guard ends a download that stops.
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		defer guard.stop()
		if cause := guard.cause(); cause != nil {
			return nil, cause
		}
		if d.ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted (%w)", context.Cause(d.ctx))
		}
		return nil, &UnreachableError{Err: err}
	}
	guard.answered()
	a := &answer{Response: resp, body: guard.reader(resp.Body), guard: guard}
	switch resp.StatusCode {
	case http.StatusOK, http.StatusPartialContent, http.StatusRequestedRangeNotSatisfiable:
		return a, nil
	}
	defer a.close()
	return nil, refusal(a)
}

// refusal is the node's refusal in its own words, its JSON
// {"error": ...}.
func refusal(a *answer) error {
	raw, _ := io.ReadAll(io.LimitReader(a.body, 1<<20))
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return fmt.Errorf("the node answered %s with something that is not JSON", a.Status)
	}
	return &RefusedError{Answer: a.Response, Message: e.Error}
}

// save writes the node's answer a to out.part: appended to the have
// bytes there when a is the rest of them (206), else from the start
// (200), with the node's ETag beside for a later resume. etag is the one
// saved with the have bytes. It returns the file's size. A download cut
// short keeps what it saved.
func (d *download) save(a *answer, out string, have int64, etag string) (int64, error) {
	defer a.close()
	part := out + partSuffix
	from := int64(0)
	switch a.StatusCode {
	case http.StatusRequestedRangeNotSatisfiable:
		// Asked for the bytes after the end: out.part may hold them all
		// (a download stopped while it was checked).
		if total, ok := unsatisfiedSize(a.Header); ok && total == have {
			d.note("%s already holds all %d bytes", part, have)
			return have, nil
		}
		a.close()
		d.note("%s holds %d bytes, more than the node's file: starting over", part, have)
		b, err := d.get(0, "")
		if err != nil {
			return 0, err
		}
		return d.save(b, out, 0, "")
	case http.StatusPartialContent:
		if start, ok := rangeStart(a.Header); !ok || start != have {
			return 0, fmt.Errorf("the node answered bytes=%d- with the range %q", have, a.Header.Get("Content-Range"))
		}
		from = have
		d.note("resuming %s after %s", out, BytesText(have))
	default:
		d.startingOver(part, have, etag)
	}
	return d.write(a, out, from)
}

// startingOver says why the have bytes of part, saved with etag, are
// not resumed: the node sent the whole file.
func (d *download) startingOver(part string, have int64, etag string) {
	switch {
	case have > 0 && etag != "":
		d.note("the node's file is not the one %s began (its ETag is no longer %s): starting over", part, etag)
	case have > 0:
		d.note("no ETag saved with %s, so nothing says its bytes are the node's file's: starting over", part)
	}
}

// write copies a's body into out.part from byte from on, and returns the
// file's size once the node sent all it said it would.
func (d *download) write(a *answer, out string, from int64) (int64, error) {
	part := out + partSuffix
	f, err := openPart(part, from, a.Header.Get("ETag"))
	if err != nil {
		return 0, err
	}
	total := from + a.ContentLength
	if a.ContentLength < 0 {
		total = -1
	}
	p := d.report.Progress(filepath.Base(out), from, total)
	n, err := io.CopyBuffer(f, onRead{a.body, p.Add}, make([]byte, copyBuffer))
	p.Finish(err == nil)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	size := from + n
	if err == nil && total >= 0 && size != total {
		err = fmt.Errorf("the node's answer ended after %d of %d bytes", size, total)
	}
	if err != nil {
		return 0, fmt.Errorf("%w; %s holds the %d bytes saved: the same command resumes", d.cutShort(a, err), part, size)
	}
	return size, nil
}

// cutShort is why a download stopped: the stall guard, the caller's
// context (the user's interrupt), or what the connection said.
func (d *download) cutShort(a *answer, err error) error {
	if cause := a.guard.cause(); cause != nil {
		return cause
	}
	if d.ctx.Err() != nil {
		return fmt.Errorf("interrupted (%w)", context.Cause(d.ctx))
	}
	return fmt.Errorf("the download stopped: %w", err)
}

// openPart opens out.part to write from byte from on: from 0, emptied,
// with etag saved beside it (or no ETag file, when the node sent none:
// such bytes cannot resume); else at its end, which must be from.
func openPart(part string, from int64, etag string) (*os.File, error) {
	if from > 0 {
		return appendPart(part, from)
	}
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	out := strings.TrimSuffix(part, partSuffix)
	if etag == "" {
		err = os.Remove(out + etagSuffix)
		if errors.Is(err, os.ErrNotExist) {
			err = nil
		}
	} else {
		err = os.WriteFile(out+etagSuffix, []byte(etag+"\n"), 0o644)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// appendPart opens part to write after its from bytes.
func appendPart(part string, from int64) (*os.File, error) {
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != from {
		f.Close()
		return nil, fmt.Errorf("%s changed while the download began (another metamesh get on it?)", part)
	}
	return f, nil
}
