package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/metamesh/node/fetch"
	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/node"
)

func newScanCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "scan --library DIR [--library DIR...]",
		Short: "Ingest the libraries once and exit",
		Long: `Bring the store in line with the libraries once (new and changed files are
hashed, missing ones deleted, unchanged ones skipped) and exit. Shows a progress
bar on a terminal and plain progress lines otherwise.

Only the libraries given are looked at: a scan of some libraries is a one-off
that leaves the stored paths of every other library alone, so scanning one
drive does not drop what the node knows of the others.

With --data it starts the managed redis-server of that directory, so stop a
node running on it first, or give its Redis with --redis-url. The data
directory may not lie inside a library.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := nodeConfig(cmd)
			if err != nil {
				return err
			}
			out := cmd.ErrOrStderr()
			show := progressLines(out)
			if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				show = progressBar(out)
			}
			p, err := node.Scan(cmd.Context(), cfg, time.Second, show)
			if err != nil {
				return err
			}
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(p)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "scanned %d files (%s), %d errors\n", p.FilesDone, fetch.BytesText(p.BytesDone), p.Errors)
			return nil
		},
	}
	libraryFlags(c)
	c.Flags().Bool("json", false, "print the final progress as JSON")
	return c
}

// stateWord is how a line or the bar names a scan state: a one-off scan
// that has finished is "done".
func stateWord(state string) string {
	if state == ingest.StateIdle {
		return "done"
	}
	return state
}

func progressLines(w io.Writer) func(ingest.Progress) {
	return func(p ingest.Progress) {
		fmt.Fprintf(w, "%s: %d/%d files, %s/%s, hashing at %.1f MB/s\n", stateWord(p.State), p.FilesDone, p.FilesTotal,
			fetch.BytesText(min(p.BytesDone+p.BytesInFlight, max(p.BytesTotal, p.BytesDone))), fetch.BytesText(p.BytesTotal), p.HashRate/1e6)
	}
}

// progressBar draws the scan on a terminal: it moves with the bytes read
// (a large file moves it while it is hashed), shows the hashing rate (not
// the rate at which unchanged files are skipped), and ends at 100% on a
// line of its own.
func progressBar(w io.Writer) func(ingest.Progress) {
	var bar *progressbar.ProgressBar
	var shown int64
	return func(p ingest.Progress) {
		if bar == nil {
			bar = progressbar.NewOptions64(max(p.BytesTotal, 1), progressbar.OptionSetWriter(w),
				progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))
		}
		total := max(p.BytesTotal, 1)
		bar.ChangeMax64(total)
		done := p.BytesDone + p.BytesInFlight
		finished := p.State != ingest.StateScanning && p.State != ingest.StateHashing
		if finished {
			done = total
		}
		shown = max(shown, min(done, total)) // never backwards
		bar.Describe(fmt.Sprintf("%-8s %d/%d files, %s/%s, %.1f MB/s", stateWord(p.State), p.FilesDone, p.FilesTotal,
			fetch.BytesText(shown), fetch.BytesText(p.BytesTotal), p.HashRate/1e6))
		_ = bar.Set64(shown)
		if finished {
			_ = bar.Finish()
		}
	}
}
