package main

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/api"
)

func newDuplicatesCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "duplicates [--by content|title]",
		Short: "List the household's files held more than once: one file under several paths, or one film or episode as several files",
		Long: `Ask the running node which of the household's own files it holds more
than once (GET /api/duplicates), the groups that waste the most bytes
first. --by content (the default) lists the files found under several
paths, each path with its size. --by title lists the films and episodes
held as several different files (the same IMDb ID, or the same title and
year, or the same show, season and episode), each file with its size,
resolution, video and audio codec and runtime side by side, so one can
keep the best copy. Files known only from other households are not
listed. --json prints the node's JSON as it is.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			by, _ := cmd.Flags().GetString("by")
			limit, _ := cmd.Flags().GetInt("limit")
			page, _ := cmd.Flags().GetInt("page")
			switch {
			case by != api.DuplicatesByContent && by != api.DuplicatesByTitle:
				return usageError(cmd, fmt.Errorf("--by %q: want content or title", by))
			case limit < 1 || limit > api.MaxLibraryLimit:
				return usageError(cmd, fmt.Errorf("--limit %d: want from 1 to %d groups", limit, api.MaxLibraryLimit))
			case page < 1 || page > api.MaxLibraryPage:
				return usageError(cmd, fmt.Errorf("--page %d: want from 1 to %d", page, api.MaxLibraryPage))
			}
			v := url.Values{"by": {by}, "limit": {strconv.Itoa(limit)}, "page": {strconv.Itoa(page)}}
			res, raw, err := apiGetJSON[api.DuplicatesPage](cmd, "/api/duplicates?"+v.Encode(), 15*time.Second)
			if err != nil {
				return jsonError(cmd, raw, err)
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			return printDuplicates(cmd.OutOrStdout(), res)
		},
	}
	apiFlag(c)
	c.Flags().String("by", api.DuplicatesByContent, "content (one file under several paths) or title (one film or episode as several files)")
	c.Flags().Int("limit", api.DefaultLibraryLimit, fmt.Sprintf("groups to show, 1 to %d", api.MaxLibraryLimit))
	c.Flags().Int("page", 1, "the page of groups to show")
	return c
}

// printDuplicates writes the readable output of metamesh duplicates:
// each group's title line (what it is, how many copies, the bytes they
// waste), then a table of its copies; a last line says how much the
// whole list wastes and where more pages are.
func printDuplicates(out io.Writer, p api.DuplicatesPage) error {
	if p.Total == 0 {
		what := "no file under more than one path"
		if p.By == api.DuplicatesByTitle {
			what = "no film or episode held as more than one file"
		}
		if !p.Loaded {
			what += " (the node is still reading its library)"
		}
		_, err := fmt.Fprintln(out, what)
		return err
	}
	for i, g := range p.Groups {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "%s: %s, %s wasted\n", groupTitle(g), copies(g.Count), humanSize(g.Wasted))
		w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
		if p.By == api.DuplicatesByTitle {
			fmt.Fprintln(w, "  SIZE\tRESOLUTION\tVIDEO\tAUDIO\tRUNTIME\tPATH\tCID")
			for _, c := range g.Copies {
				fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", humanSize(c.Size), orDash(c.Resolution), orDash(c.VideoCodec),
					orDash(c.AudioCodec), runtimeOf(c.Runtime), cell(c.Path), c.CID)
			}
		} else {
			fmt.Fprintf(w, "  SIZE\tPATH\t(CID %s)\n", g.Key)
			for _, c := range g.Copies {
				fmt.Fprintf(w, "  %s\t%s\t\n", humanSize(c.Size), cell(c.Path))
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if len(g.Copies) < g.Count {
			fmt.Fprintf(out, "  (and %d more paths)\n", g.Count-len(g.Copies))
		}
	}
	_, err := fmt.Fprintf(out, "\n%s, %s wasted in all", plural(p.Total, "group"), humanSize(p.Wasted))
	if err == nil && p.Page < p.Pages {
		_, err = fmt.Fprintf(out, "; page %d of %d (--page %d for the next)", p.Page, p.Pages, p.Page+1)
	}
	if err == nil {
		_, err = fmt.Fprintln(out)
	}
	return err
}

// groupTitle is what a group is: its title, year, SxxEyy and episode
// title as far as known.
func groupTitle(g api.DuplicateGroup) string {
	s := oneLine(g.Title)
	if g.Year != 0 {
		s += fmt.Sprintf(" (%d)", g.Year)
	}
	if g.Season != nil && g.Episode != nil {
		s += fmt.Sprintf(" S%02dE%02d", *g.Season, *g.Episode)
	}
	if g.EpisodeTitle != "" {
		s += " – " + oneLine(g.EpisodeTitle)
	}
	return s
}

// copies writes n copies, singular for one.
func copies(n int) string {
	if n == 1 {
		return "1 copy"
	}
	return strconv.Itoa(n) + " copies"
}

// runtimeOf is a copy's runtime as lookup writes one, "-" for none.
func runtimeOf(sec int) string {
	if sec <= 0 {
		return "-"
	}
	return runtimeText(float64(sec))
}

// cell is a path as one cell of a table: its tabs and line breaks as
// spaces, every other byte as it is.
func cell(s string) string { return cellReplacer.Replace(s) }

var cellReplacer = strings.NewReplacer("\t", " ", "\n", " ")
