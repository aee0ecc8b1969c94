package fetch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/protocol"
)

// check hashes out.part as metamesh hash does and, when the CID asked
// for is one of its CIDs, renames it out. Bytes that do not match are
// moved aside to out.corrupt.part, so that the next attempt starts anew
// instead of resuming them.
func (d *download) check(out string, size int64) (Result, error) {
	part := out + partSuffix
	p := d.report.Progress("checking "+filepath.Base(out), 0, size)
	h, err := ingest.HashFileReporting(d.ctx, part, p.Add)
	p.Finish(err == nil)
	if err != nil {
		if d.ctx.Err() != nil {
			return Result{}, fmt.Errorf("interrupted while checking %s (%w): the same command checks it again", part, context.Cause(d.ctx))
		}
		return Result{}, err
	}
	kind, ok := matchCID(h, d.CID)
	if !ok {
		bad := out + corruptSuffix
		if err := os.Rename(part, bad); err != nil {
			return Result{}, err
		}
		_ = os.Remove(out + etagSuffix)
		return Result{}, fmt.Errorf("the %d bytes saved do not match %s: %s; they are in %s (delete it), and the same command downloads the file anew", size, d.CID, cidsText(h), bad)
	}
	if err := d.mayWrite(out); err != nil {
		return Result{}, err // a file came in the way while this one downloaded
	}
	if err := os.Rename(part, out); err != nil {
		return Result{}, err
	}
	_ = os.Remove(out + etagSuffix)
	return Result{Path: out, Size: size, Kind: kind}, nil
}

// matchCID reports which of the file's CIDs h is c (canonical form).
func matchCID(h ingest.FileHashes, c string) (kind string, ok bool) {
	for _, k := range []struct{ kind, cid string }{{KindIPFS, h.IPFS}, {KindSHA256, h.SHA256}, {KindMidhash, h.Midhash}} {
		if n, err := protocol.Normalize(k.cid); err == nil && n == c {
			return k.kind, true
		}
	}
	return "", false
}

// cidsText lists the CIDs of bytes that matched no CID asked for.
func cidsText(h ingest.FileHashes) string {
	if h.SHA256 == "" {
		return "their CIDs could not all be computed"
	}
	s := fmt.Sprintf("their CIDs are %s (ipfs), %s (sha2-256)", h.IPFS, h.SHA256)
	if h.Midhash != "" {
		s += fmt.Sprintf(", %s (midhash256)", h.Midhash)
	}
	return s
}

// ToStdout writes the file's bytes to stdout as they come, with no
// resume, hashing them on the way (ingest.StreamHasher); a mismatch is
// said once they are all out. Its errors call stdout so: it is what the
// bytes went to. The Result's Size is the bytes written.
func (j *Job) ToStdout(ctx context.Context, stdout io.Writer) (Result, error) {
	d := j.start(ctx)
	a, err := d.get(0, "")
	if err != nil {
		return Result{}, err
	}
	defer a.close()
	if a.StatusCode != http.StatusOK {
		return Result{}, fmt.Errorf("the node answered a request for the whole file with %s", a.Status)
	}
	sh := ingest.NewStreamHasher(ctx, a.ContentLength)
	p := d.report.Progress(fileName(a.Header, j.CID), 0, a.ContentLength)
	n, err := io.CopyBuffer(io.MultiWriter(stdout, sh), onRead{a.body, p.Add}, make([]byte, copyBuffer))
	p.Finish(err == nil)
	if err == nil && a.ContentLength >= 0 && n != a.ContentLength {
		err = fmt.Errorf("the node's answer ended after %d of %d bytes", n, a.ContentLength)
	}
	h, herr := sh.Sum()
	if err != nil {
		return Result{}, fmt.Errorf("%w (%d bytes written to stdout)", d.cutShort(a, err), n)
	}
	if herr != nil {
		return Result{}, herr
	}
	kind, ok := matchCID(h, j.CID)
	switch {
	case !ok && h.Midhash == "" && protocol.Rank(j.CID) == int(protocol.TierMidhash):
		return Result{}, fmt.Errorf("the %d bytes written to stdout could not be checked: %s is a midhash, which needs the file's size first, and the node did not send it (its IPFS or sha2-256 CID can be checked: %s)", n, j.CID, cidsText(h))
	case !ok:
		return Result{}, fmt.Errorf("the %d bytes written to stdout do not match %s: %s", n, j.CID, cidsText(h))
	}
	return Result{Size: n, Kind: kind}, nil
}
