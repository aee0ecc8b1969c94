package fetch

import "fmt"

// Reporter hears how a download goes, for its caller to show: a Job
// prints nothing itself. Its methods, and those of the Progress it
// returns, are called from the goroutine that runs the Job.
type Reporter interface {
	// Note is a line about the download: a resume, a start over.
	Note(line string)
	// Progress begins the count of one pass over the file's bytes: its
	// download (what is the file's name) or its check ("checking "
	// and the name), of total bytes (-1: unknown) of which from were
	// there before (a resumed download: its rate is the rest's).
	Progress(what string, from, total int64) Progress
}

// Progress is the count of one pass over the file's bytes.
type Progress interface {
	// Add counts n more bytes.
	Add(n int64)
	// Finish ends the pass: all of it (ok), or cut short.
	Finish(ok bool)
}

// quiet is the Reporter of a Job given none.
type quiet struct{}

func (quiet) Note(string)                            {}
func (quiet) Progress(string, int64, int64) Progress { return quiet{} }
func (quiet) Add(int64)                              {}
func (quiet) Finish(bool)                            {}

// note tells the Reporter a line.
func (d *download) note(format string, a ...any) {
	d.report.Note(fmt.Sprintf(format, a...))
}

// BytesText is n bytes as the commands print them: "293.0 KiB" (binary
// units, one decimal; plain bytes under 1 KiB).
func BytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
