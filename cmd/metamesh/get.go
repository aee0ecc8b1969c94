package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/metamesh/node/fetch"
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
			return newGetRun(cmd).save(c)
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

// getRun is one metamesh get: its flags, and where the node that serves
// the file was found (for the error when it does not answer). It is the
// download's fetch.Reporter, printing on stderr.
type getRun struct {
	cmd        *cobra.Command
	quiet      bool
	out        string // -o as given
	base, from string // the node's address, and what named it
}

func newGetRun(cmd *cobra.Command) *getRun {
	g := &getRun{cmd: cmd}
	g.quiet, _ = cmd.Flags().GetBool("quiet")
	g.out, _ = cmd.Flags().GetString("output")
	return g
}

// save downloads the file the CID c (canonical form) names where -o
// says, and says what was saved and checked.
func (g *getRun) save(c string) error {
	j := &fetch.Job{CID: c, Request: g.request(c), Report: g}
	j.Force, _ = g.cmd.Flags().GetBool("force")
	j.Stall, _ = g.cmd.Flags().GetDuration("stall")
	if g.out == "-" {
		res, err := j.ToStdout(g.cmd.Context(), rawStdout(g.cmd))
		if err != nil {
			return g.fail(err)
		}
		g.Note(fmt.Sprintf("wrote %d bytes to stdout (CID verified%s)", res.Size, kindNote(res.Kind)))
		return nil
	}
	res, err := j.ToFile(g.cmd.Context(), g.out)
	if err != nil {
		return g.fail(err)
	}
	if !g.quiet {
		fmt.Fprintf(g.cmd.OutOrStdout(), "saved %s (%d bytes, CID verified%s)\n", res.Path, res.Size, kindNote(res.Kind))
	}
	return nil
}

// request makes the GET of the file on the node the command talks to
// (--api, --data, the token), noting where that node was found.
func (g *getRun) request(c string) func(context.Context) (*http.Request, error) {
	return func(ctx context.Context) (*http.Request, error) {
		req, base, from, err := apiRequest(ctx, g.cmd, http.MethodGet, "/api/file/"+url.PathEscape(c))
		g.base, g.from = base, from
		return req, err
	}
}

// fail is err as the commands that talk to the node say it: the node's
// refusal with the exit status lookup gives it, and a node that did not
// answer with where it was looked for.
func (g *getRun) fail(err error) error {
	var refused *fetch.RefusedError
	var lost *fetch.UnreachableError
	switch {
	case errors.As(err, &refused):
		return answerError(refused.Answer, refused.Message)
	case errors.As(err, &lost):
		return unreachable(g.base, g.from, lost.Err)
	}
	return err
}

// kindNote says what a match by midhash checked: the size and a sample,
// not every byte.
func kindNote(kind string) string {
	if kind == fetch.KindMidhash {
		return "; a midhash checks the size and 1 MiB of the middle: the IPFS or sha2-256 CID checks every byte"
	}
	return ""
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

// Note prints a line about the download on stderr, unless --quiet.
func (g *getRun) Note(line string) {
	if !g.quiet {
		fmt.Fprintln(g.cmd.ErrOrStderr(), line)
	}
}

// progressEvery is how often a download or a check says how far it got
// when stderr is not a terminal.
const progressEvery = 10 * time.Second

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

// Progress reports what, of total bytes (-1: unknown) of which from
// were there before (a resumed download: the rate and the time left are
// those of the rest).
func (g *getRun) Progress(what string, from, total int64) fetch.Progress {
	p := &progress{what: what, from: from, total: total, done: from, start: time.Now()}
	p.shown = p.start
	if g.quiet {
		return p
	}
	p.w = g.cmd.ErrOrStderr()
	if f, ok := p.w.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		return p
	}
	max, desc := int64(-1), what
	if total >= 0 {
		max = total - from
	}
	if from > 0 {
		desc += fmt.Sprintf(" (the %s after %s)", fetch.BytesText(max), fetch.BytesText(from))
	}
	w := p.w
	p.bar = progressbar.NewOptions64(max, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(desc),
		progressbar.OptionShowBytes(true), progressbar.OptionShowCount(), progressbar.OptionShowTotalBytes(true), progressbar.OptionUseIECUnits(true),
		progressbar.OptionSetPredictTime(true), progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))
	return p
}

func (p *progress) Add(n int64) {
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
	s := p.what + ": " + fetch.BytesText(p.done)
	if p.total > 0 {
		s += fmt.Sprintf(" of %s (%d%%)", fetch.BytesText(p.total), p.done*100/p.total)
	}
	if t := time.Since(p.start).Seconds(); t > 0 {
		s += fmt.Sprintf(", %.1f MB/s", float64(p.done-p.from)/t/1e6)
	}
	return s
}

// Finish ends the bar: full when all went well, else where it stopped.
func (p *progress) Finish(ok bool) {
	if p.bar == nil {
		return
	}
	if ok {
		_ = p.bar.Finish()
		return
	}
	_ = p.bar.Exit()
}
