package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/protocol"
)

func newGetCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "get CID [-o FILE]",
		Short: "Save a file the running node serves, by its CID, and check its bytes against the CID",
		Long: `Save the bytes of the file a CID names, as the running node serves them
(GET /api/file/<cid>), then hash what was saved as metamesh hash does and
check that the CID asked for is one of its CIDs.

Without -o the file takes the name the node gives it (its base name only),
in the current directory; -o names the file, or a directory to save it in
under the node's name; -o - writes the bytes to stdout, checked as they
pass. An existing file is never replaced without --force (and with it, only
once the new copy has been checked).

The bytes go to FILE.part, renamed FILE once checked. An interrupted
download (Ctrl-C, a lost connection, a node that sent nothing for --stall)
keeps FILE.part and the node's ETag for it in FILE.etag.part; the same
command resumes it, asking only for the bytes after those it holds, and
only if the node's ETag is still the saved one (If-Range): otherwise the
node sends the whole file and the download starts over, saying so.

Bytes that do not match the CID are moved to FILE.corrupt.part (the node
ingests no name ending in .part) and the same command then downloads the
file anew. The names end in .part so that a node whose library holds the
directory leaves them alone.

The download has no time limit: a file from peers may take minutes. It
gives up only when the node sends nothing for --stall. A progress bar
(bytes, rate, time left) shows on a terminal, else a line every 10 s;
--quiet prints nothing but errors.

Exit status 0 once the file is saved and checked, 2 for an argument that
is not a CID, 3 when no one has the file (the node's 404), 1 otherwise
(bytes that do not match the CID, a download cut short, a file in the
way).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := getCID(args[0])
			if err != nil {
				return err
			}
			j := newGetJob(cmd, c)
			if out, _ := cmd.Flags().GetString("output"); out == "-" {
				return j.toStdout()
			}
			return j.toFile()
		},
	}
	apiTokenFlag(c)
	apiAddrFlag(c)
	c.Flags().StringP("output", "o", "", "the file to save to, a directory to save in under the node's name for the file, or - for stdout (default: the node's name, here)")
	c.Flags().Bool("force", false, "replace a file already there (once the new copy is checked)")
	c.Flags().BoolP("quiet", "q", false, "print nothing but errors")
	c.Flags().Duration("stall", time.Minute, "give up when the node sends nothing for this long (0: never); there is no other time limit")
	return c
}

// getCID is the CID get was given, in canonical form. Anything else is
// refused with exit status 2, in the words lookup uses, and a file's name
// with how to learn its CIDs.
func getCID(arg string) (string, error) {
	c, err := protocol.Normalize(arg)
	if err == nil {
		return c, nil
	}
	if fi, serr := os.Stat(arg); serr == nil && arg != "" && !fi.IsDir() {
		return "", &exitError{code: 2, err: fmt.Errorf("%s is a file here, and get takes a CID (metamesh hash %s prints the file's CIDs)", arg, arg)}
	}
	return "", &exitError{code: 2, err: fmt.Errorf("%w (metamesh search finds a file's CID)", badCID(arg, err))}
}

// The names of a download's state beside FILE. They end in .part, which
// the node never ingests (ingest.Skipped), so that saving into a library
// adds only the finished file to it.
const (
	partSuffix    = ".part"         // the bytes so far
	etagSuffix    = ".etag.part"    // the node's ETag for them, for If-Range
	corruptSuffix = ".corrupt.part" // bytes that did not match the CID
)

// progressEvery is how often a download or a check says how far it got
// when stderr is not a terminal.
const progressEvery = 10 * time.Second

// getJob is one metamesh get of the CID c (canonical form).
type getJob struct {
	cmd   *cobra.Command
	ctx   context.Context
	c     string
	force bool
	quiet bool
	stall time.Duration
	out   string // -o as given
}

func newGetJob(cmd *cobra.Command, c string) *getJob {
	j := &getJob{cmd: cmd, ctx: cmd.Context(), c: c}
	j.force, _ = cmd.Flags().GetBool("force")
	j.quiet, _ = cmd.Flags().GetBool("quiet")
	j.stall, _ = cmd.Flags().GetDuration("stall")
	j.out, _ = cmd.Flags().GetString("output")
	return j
}

// say prints a line about the download on stderr, unless --quiet.
func (j *getJob) say(format string, a ...any) {
	if !j.quiet {
		fmt.Fprintf(j.cmd.ErrOrStderr(), format+"\n", a...)
	}
}

// toFile saves the file at its path, resuming what an earlier attempt
// left, and checks it.
func (j *getJob) toFile() error {
	out, dir, err := j.outputPath()
	if err != nil {
		return err
	}
	var have int64
	var etag string
	if out != "" {
		if err := j.mayWrite(out); err != nil {
			return err
		}
		have, etag = partial(out)
	}
	a, err := j.fetch(have, etag)
	if err != nil {
		return err
	}
	if out == "" {
		// The name is the node's: known only from its answer. A
		// download of it begun before is resumed with a request of its
		// own, if the node's file is still the one begun.
		out = filepath.Join(dir, fileName(a.Header, j.c))
		if err := j.mayWrite(out); err != nil {
			a.close()
			return err
		}
		if have, etag = partial(out); have > 0 && etag != "" && etag == a.Header.Get("ETag") {
			a.close()
			if a, err = j.fetch(have, etag); err != nil {
				return err
			}
		}
	}
	size, err := j.save(a, out, have, etag)
	if err != nil {
		return err
	}
	return j.check(out, size)
}

// outputPath is where -o says to save: a file's path, or a directory
// (dir) in which the node's name for the file is the path, not known
// before its answer (out "").
func (j *getJob) outputPath() (out, dir string, err error) {
	switch fi, serr := os.Stat(j.out); {
	case j.out == "":
		return "", ".", nil
	case serr == nil && fi.IsDir():
		return "", j.out, nil
	}
	if fi, err := os.Stat(filepath.Dir(j.out)); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("-o %s: no directory %s to save it in", j.out, filepath.Dir(j.out))
	}
	return j.out, "", nil
}

// mayWrite refuses out when a file is there already, unless --force;
// and anything but a regular file even then: the rename at the end
// would put the download in place of a device, a FIFO or a symbolic
// link (-o /dev/null would replace /dev/null).
func (j *getJob) mayWrite(out string) error {
	fi, err := os.Lstat(out)
	switch {
	case err != nil:
		return nil
	case fi.IsDir():
		return fmt.Errorf("%s is a directory: -o names the file to save", out)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (%s), which get never replaces: -o names a file to save, -o - writes to stdout", out, fileKind(fi.Mode()))
	case !j.force:
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

// fetch asks the node for the file: from byte from on, if the node's
// ETag is still etag, when from > 0 and etag is known (If-Range: the
// node answers the whole file otherwise). An answer that is not the
// file's bytes is returned as the node's error.
func (j *getJob) fetch(from int64, etag string) (*answer, error) {
	ctx, guard := newStallGuard(j.ctx, j.stall)
	req, base, where, err := apiRequest(ctx, j.cmd, "/api/file/"+url.PathEscape(j.c))
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
		if j.ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted (%w)", context.Cause(j.ctx))
		}
		return nil, unreachable(base, where, err)
	}
	guard.answered()
	a := &answer{Response: resp, body: guard.reader(resp.Body), guard: guard}
	switch resp.StatusCode {
	case http.StatusOK, http.StatusPartialContent, http.StatusRequestedRangeNotSatisfiable:
		return a, nil
	}
	defer a.close()
	return nil, j.nodeError(a)
}

// nodeError is the node's refusal in its own words, its JSON
// {"error": ...}, with the exit status lookup gives it.
func (j *getJob) nodeError(a *answer) error {
	raw, _ := io.ReadAll(io.LimitReader(a.body, 1<<20))
	var e struct {
		Error string `json:"error"`
	}
	if err := decodeJSON(raw, &e); err != nil {
		return fmt.Errorf("the node answered %s with something that is not JSON", a.Status)
	}
	return answerError(a.Response, e.Error)
}

// save writes the node's answer a to out.part: appended to the have
// bytes there when a is the rest of them (206), else from the start
// (200), with the node's ETag beside for a later resume. etag is the one
// saved with the have bytes. It returns the file's size. A download cut
// short keeps what it saved.
func (j *getJob) save(a *answer, out string, have int64, etag string) (int64, error) {
	defer a.close()
	part := out + partSuffix
	from := int64(0)
	switch a.StatusCode {
	case http.StatusRequestedRangeNotSatisfiable:
		// Asked for the bytes after the end: out.part may hold them all
		// (a download stopped while it was checked).
		if total, ok := unsatisfiedSize(a.Header); ok && total == have {
			j.say("%s already holds all %d bytes", part, have)
			return have, nil
		}
		a.close()
		j.say("%s holds %d bytes, more than the node's file: starting over", part, have)
		b, err := j.fetch(0, "")
		if err != nil {
			return 0, err
		}
		return j.save(b, out, 0, "")
	case http.StatusPartialContent:
		if start, ok := rangeStart(a.Header); !ok || start != have {
			return 0, fmt.Errorf("the node answered bytes=%d- with the range %q", have, a.Header.Get("Content-Range"))
		}
		from = have
		j.say("resuming %s after %s", out, bytesText(have))
	default:
		switch {
		case have > 0 && etag != "":
			j.say("the node's file is not the one %s began (its ETag is no longer %s): starting over", part, etag)
		case have > 0:
			j.say("no ETag saved with %s, so nothing says its bytes are the node's file's: starting over", part)
		}
	}
	f, err := j.openPart(part, from, a.Header.Get("ETag"))
	if err != nil {
		return 0, err
	}
	total := from + a.ContentLength
	if a.ContentLength < 0 {
		total = -1
	}
	p := j.newProgress(filepath.Base(out), from, total)
	n, err := io.CopyBuffer(f, p.reader(a.body), make([]byte, 256<<10))
	p.finish(err == nil)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	size := from + n
	if err == nil && total >= 0 && size != total {
		err = fmt.Errorf("the node's answer ended after %d of %d bytes", size, total)
	}
	if err != nil {
		return 0, fmt.Errorf("%w; %s holds the %d bytes saved: the same command resumes", j.cutShort(a, err), part, size)
	}
	return size, nil
}

// cutShort is why a download stopped: the stall guard, the user's
// interrupt, or what the connection said.
func (j *getJob) cutShort(a *answer, err error) error {
	if cause := a.guard.cause(); cause != nil {
		return cause
	}
	if j.ctx.Err() != nil {
		return fmt.Errorf("interrupted (%w)", context.Cause(j.ctx))
	}
	return fmt.Errorf("the download stopped: %w", err)
}

// openPart opens out.part to write from byte from on: from 0, emptied,
// with etag saved beside it (or no ETag file, when the node sent none:
// such bytes cannot resume); else at its end, which must be from.
func (j *getJob) openPart(part string, from int64, etag string) (*os.File, error) {
	out := strings.TrimSuffix(part, partSuffix)
	if from > 0 {
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
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
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

// rangeStart is the first byte of a 206 answer's Content-Range
// ("bytes first-last/size").
func rangeStart(h http.Header) (int64, bool) {
	spec, ok := strings.CutPrefix(h.Get("Content-Range"), "bytes ")
	if !ok {
		return 0, false
	}
	first, _, ok := strings.Cut(spec, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(first, 10, 64)
	return n, err == nil
}

// unsatisfiedSize is the file's size a 416 answer gives
// (Content-Range: bytes */size).
func unsatisfiedSize(h http.Header) (int64, bool) {
	s, ok := strings.CutPrefix(h.Get("Content-Range"), "bytes */")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// check hashes out.part as metamesh hash does and, when the CID asked
// for is one of its CIDs, renames it out. Bytes that do not match are
// moved aside to out.corrupt.part, so that the next attempt starts anew
// instead of resuming them.
func (j *getJob) check(out string, size int64) error {
	part := out + partSuffix
	p := j.newProgress("checking "+filepath.Base(out), 0, size)
	h, err := ingest.HashFileReporting(j.ctx, part, p.add)
	p.finish(err == nil)
	if err != nil {
		if j.ctx.Err() != nil {
			return fmt.Errorf("interrupted while checking %s (%w): the same command checks it again", part, context.Cause(j.ctx))
		}
		return err
	}
	kind, ok := matchCID(h, j.c)
	if !ok {
		bad := out + corruptSuffix
		if err := os.Rename(part, bad); err != nil {
			return err
		}
		_ = os.Remove(out + etagSuffix)
		return fmt.Errorf("the %d bytes saved do not match %s: %s; they are in %s (delete it), and the same command downloads the file anew", size, j.c, cidsText(h), bad)
	}
	if err := j.mayWrite(out); err != nil {
		return err // a file came in the way while this one downloaded
	}
	if err := os.Rename(part, out); err != nil {
		return err
	}
	_ = os.Remove(out + etagSuffix)
	if !j.quiet {
		fmt.Fprintf(j.cmd.OutOrStdout(), "saved %s (%d bytes, CID verified%s)\n", out, size, kindNote(kind))
	}
	return nil
}

// matchCID reports which of the file's CIDs h is c (canonical form):
// "midhash256", "sha2-256" or "ipfs".
func matchCID(h ingest.FileHashes, c string) (kind string, ok bool) {
	for _, k := range []struct{ kind, cid string }{{"ipfs", h.IPFS}, {"sha2-256", h.SHA256}, {"midhash256", h.Midhash}} {
		if n, err := protocol.Normalize(k.cid); err == nil && n == c {
			return k.kind, true
		}
	}
	return "", false
}

// kindNote says what a match by midhash checked: the size and a sample,
// not every byte.
func kindNote(kind string) string {
	if kind == "midhash256" {
		return "; a midhash checks the size and 1 MiB of the middle: the IPFS or sha2-256 CID checks every byte"
	}
	return ""
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

// toStdout writes the file's bytes to stdout, as they come, hashing
// them on the way; a mismatch is said once they are all out.
func (j *getJob) toStdout() error {
	a, err := j.fetch(0, "")
	if err != nil {
		return err
	}
	defer a.close()
	if a.StatusCode != http.StatusOK {
		return fmt.Errorf("the node answered a request for the whole file with %s", a.Status)
	}
	sh := newStreamHasher(j.ctx, a.ContentLength)
	p := j.newProgress(fileName(a.Header, j.c), 0, a.ContentLength)
	n, err := io.CopyBuffer(io.MultiWriter(rawStdout(j.cmd), sh), p.reader(a.body), make([]byte, 256<<10))
	p.finish(err == nil)
	if err == nil && a.ContentLength >= 0 && n != a.ContentLength {
		err = fmt.Errorf("the node's answer ended after %d of %d bytes", n, a.ContentLength)
	}
	h, herr := sh.sum()
	if err != nil {
		return fmt.Errorf("%w (%d bytes written to stdout)", j.cutShort(a, err), n)
	}
	if herr != nil {
		return herr
	}
	kind, ok := matchCID(h, j.c)
	switch {
	case !ok && h.Midhash == "" && protocol.Rank(j.c) == int(protocol.TierMidhash):
		return fmt.Errorf("the %d bytes written to stdout could not be checked: %s is a midhash, which needs the file's size first, and the node did not send it (its IPFS or sha2-256 CID can be checked: %s)", n, j.c, cidsText(h))
	case !ok:
		return fmt.Errorf("the %d bytes written to stdout do not match %s: %s", n, j.c, cidsText(h))
	}
	j.say("wrote %d bytes to stdout (CID verified%s)", n, kindNote(kind))
	return nil
}

// rawStdout is where the bytes of -o - go: stdout as it is, not through
// the escaper of what the commands print (a film is all control
// characters).
func rawStdout(cmd *cobra.Command) io.Writer {
	if e, ok := cmd.OutOrStdout().(controlEscaper); ok {
		return e.w
	}
	return cmd.OutOrStdout()
}

// fileName is the name to save the node's answer under: the base of the
// file name it gives (Content-Disposition), with every control
// character as "_", short enough for the names beside it; the CID when
// it gives none, or none that stays in the directory ("", ".", "..").
func fileName(h http.Header, c string) string {
	_, params, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	name := params["filename"]
	name = name[strings.LastIndexAny(name, `/\`)+1:]
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '_'
		}
		return r
	}, name)
	if name == "" || name == "." || name == ".." {
		return c
	}
	return shortName(name, maxNameBytes-len(corruptSuffix))
}

// maxNameBytes is the longest file name most file systems take.
const maxNameBytes = 255

// shortName is name cut to at most n bytes, its extension kept, at a
// character's boundary.
func shortName(name string, n int) string {
	if len(name) <= n {
		return name
	}
	ext := filepath.Ext(name)
	if len(ext) > n/2 {
		ext = ""
	}
	stem := name[:n-len(ext)]
	for !utf8.ValidString(stem) {
		stem = stem[:len(stem)-1]
	}
	return stem + ext
}

// stallGuard ends a download when the node sends nothing for d (no
// answer, then no byte): the only limit on its time, since a file that
// comes from peers may come slowly for minutes but must not hang
// forever. d 0 never ends it.
type stallGuard struct {
	d       time.Duration
	timer   *time.Timer
	cancel  context.CancelCauseFunc
	got     atomic.Int64
	started atomic.Bool           // the node answered
	fired   atomic.Pointer[error] // why the guard ended the download
}

func newStallGuard(parent context.Context, d time.Duration) (context.Context, *stallGuard) {
	ctx, cancel := context.WithCancelCause(parent)
	g := &stallGuard{d: d, cancel: cancel}
	if d > 0 {
		g.timer = time.AfterFunc(d, func() {
			err := g.stalled()
			g.fired.Store(&err)
			cancel(err)
		})
	}
	return ctx, g
}

// stalled is the error of a download that stopped, said with how far it
// got.
func (g *stallGuard) stalled() error {
	if !g.started.Load() {
		return fmt.Errorf("the node did not answer in %s (--stall)", g.d)
	}
	return fmt.Errorf("the node sent nothing for %s after %s (--stall)", g.d, bytesText(g.got.Load()))
}

// answered notes that the node answered: the wait for bytes begins.
func (g *stallGuard) answered() {
	g.started.Store(true)
	g.progress()
}

func (g *stallGuard) progress() {
	if g.timer != nil {
		g.timer.Reset(g.d)
	}
}

// cause is the stall error when the guard ended the download, else nil.
func (g *stallGuard) cause() error {
	if e := g.fired.Load(); e != nil {
		return *e
	}
	return nil
}

func (g *stallGuard) stop() {
	if g.timer != nil {
		g.timer.Stop()
	}
	g.cancel(nil)
}

// reader is r with every byte read restarting the guard's wait.
func (g *stallGuard) reader(r io.Reader) io.Reader {
	return onRead{r, func(n int64) { g.got.Add(n); g.progress() }}
}

// onRead is r telling fn how many bytes each Read returned.
type onRead struct {
	r  io.Reader
	fn func(n int64)
}

func (o onRead) Read(b []byte) (int, error) {
	n, err := o.r.Read(b)
	if n > 0 {
		o.fn(int64(n))
	}
	return n, err
}

// progress shows a download or a check on stderr: a bar on a terminal
// (bytes, rate, time left), else a plain line every progressEvery;
// nothing with --quiet.
type progress struct {
	what         string
	w            io.Writer // nil: quiet
	bar          *progressbar.ProgressBar
	from, total  int64 // total -1: unknown
	done         int64
	start, shown time.Time
}

// newProgress reports what, of total bytes (-1: unknown) of which from
// were there before (a resumed download: the rate and the time left are
// those of the rest).
func (j *getJob) newProgress(what string, from, total int64) *progress {
	p := &progress{what: what, from: from, total: total, done: from, start: time.Now()}
	p.shown = p.start
	if j.quiet {
		return p
	}
	p.w = j.cmd.ErrOrStderr()
	if f, ok := p.w.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		return p
	}
	max, desc := int64(-1), what
	if total >= 0 {
		max = total - from
	}
	if from > 0 {
		desc += fmt.Sprintf(" (the %s after %s)", bytesText(max), bytesText(from))
	}
	w := p.w
	p.bar = progressbar.NewOptions64(max, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(desc),
		progressbar.OptionShowBytes(true), progressbar.OptionShowCount(), progressbar.OptionShowTotalBytes(true), progressbar.OptionUseIECUnits(true),
		progressbar.OptionSetPredictTime(true), progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))
	return p
}

func (p *progress) add(n int64) {
	p.done += n
	switch {
	case p.w == nil:
	case p.bar != nil:
		_ = p.bar.Add64(n)
	case time.Since(p.shown) >= progressEvery:
		p.shown = time.Now()
		fmt.Fprintln(p.w, p.line())
	}
}

// line is how far it got, for a log: "film.mkv: 1.2 GiB of 4.4 GiB
// (27%), 11.3 MB/s".
func (p *progress) line() string {
	s := p.what + ": " + bytesText(p.done)
	if p.total > 0 {
		s += fmt.Sprintf(" of %s (%d%%)", bytesText(p.total), p.done*100/p.total)
	}
	if t := time.Since(p.start).Seconds(); t > 0 {
		s += fmt.Sprintf(", %.1f MB/s", float64(p.done-p.from)/t/1e6)
	}
	return s
}

// finish ends the bar: full when all went well, else where it stopped.
func (p *progress) finish(ok bool) {
	if p.bar == nil {
		return
	}
	if ok {
		_ = p.bar.Finish()
		return
	}
	_ = p.bar.Exit()
}

// reader is r counted into the progress.
func (p *progress) reader(r io.Reader) io.Reader { return onRead{r, p.add} }

// streamHasher computes a file's CIDs from its bytes as they pass
// (written to it in order), for bytes that are not kept: sha2-256 and
// the IPFS CID over a pipe to the hasher, the midhash from its sample
// (which needs the size first: without it there is no midhash).
type streamHasher struct {
	pw     *io.PipeWriter
	done   chan streamSums
	size   int64 // -1: unknown
	off    int64 // the midhash sample's offset
	sample []byte
	n      int64
}

type streamSums struct {
	n         int64
	sha, ipfs string
	err       error
}

func newStreamHasher(ctx context.Context, size int64) *streamHasher {
	pr, pw := io.Pipe()
	s := &streamHasher{pw: pw, done: make(chan streamSums, 1), size: size}
	if size >= 0 {
		off, n := protocol.MidhashSample(size)
		s.off, s.sample = off, make([]byte, 0, n)
	}
	go func() {
		var r streamSums
		r.n, r.sha, r.ipfs, r.err = ingest.FullHash(ctx, pr)
		pr.CloseWithError(errors.Join(r.err, io.ErrClosedPipe)) // a hasher that stopped takes no more
		s.done <- r
	}()
	return s
}

func (s *streamHasher) Write(b []byte) (int, error) {
	if s.sample != nil {
		lo, hi := max(s.off, s.n), min(s.off+int64(cap(s.sample)), s.n+int64(len(b)))
		if lo < hi {
			s.sample = append(s.sample, b[lo-s.n:hi-s.n]...)
		}
	}
	s.n += int64(len(b))
	return s.pw.Write(b)
}

// sum ends the stream and returns its CIDs.
func (s *streamHasher) sum() (ingest.FileHashes, error) {
	s.pw.Close()
	r := <-s.done
	if r.err != nil {
		return ingest.FileHashes{}, r.err
	}
	h := ingest.FileHashes{Size: r.n, SHA256: r.sha, IPFS: r.ipfs}
	if s.sample != nil && r.n == s.size {
		c, err := protocol.Midhash256(sampleAt{off: s.off, b: s.sample}, s.size)
		if err != nil {
			return ingest.FileHashes{}, err
		}
		h.Midhash = c.String()
	}
	return h, nil
}

// sampleAt is the midhash sample of a file, read where it lies in it.
type sampleAt struct {
	off int64
	b   []byte
}

func (s sampleAt) ReadAt(p []byte, off int64) (int, error) {
	if off < s.off || off > s.off+int64(len(s.b)) {
		return 0, fmt.Errorf("midhash sample: offset %d outside %d+%d", off, s.off, len(s.b))
	}
	n := copy(p, s.b[off-s.off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
