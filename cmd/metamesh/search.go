package main

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/fetch"
)

func newSearchCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "search WORD...",
		Short: "Find files by title, file name, year, season, episode or IMDb ID, on this node and optionally its peers",
		Long: `Ask the running node's search index (GET /api/search). Words match
without regard to case or accents ("amelie" finds "Amélie"); files holding
every word come first. --federated also asks other households and shows
their hits after the local ones, with the household as source (by the
name it claims and the end of its peer ID, "Alice's NAS (…YZ2fvJ)", or its
abbreviated peer ID when it sent no name): the
connected peers, and the households that the DHT's search index names for
the words (those whose files hold every word of three letters or more;
years, SxxEyy marks and tags only narrow their hits). A last line says how
many were asked. --json prints the
node's JSON as it is (its "next" cursor pages on with the API). The words
may be given apart or quoted together: "metamesh search doctor who" asks
for "doctor who".`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := strings.Join(args, " ")
			if err := checkSearch(cmd, q); err != nil {
				return usageError(cmd, err)
			}
			v := url.Values{"q": {q}}
			if n, _ := cmd.Flags().GetInt("limit"); n != 0 {
				v.Set("limit", strconv.Itoa(n))
			}
			if f, _ := cmd.Flags().GetBool("federated"); f {
				v.Set("federated", "1")
			}
			res, raw, err := apiGetJSON[api.SearchResult](cmd, "/api/search?"+v.Encode(), 15*time.Second)
			if err != nil {
				return jsonError(cmd, raw, err)
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			f, _ := cmd.Flags().GetBool("federated")
			return printHits(cmd.OutOrStdout(), res, f)
		},
	}
	apiFlag(c)
	c.Flags().Bool("federated", false, "also ask the connected peers and the households the DHT's search index names")
	c.Flags().Int("limit", 0, "hits to show, 1 to 100 (default 20)")
	return c
}

// checkSearch refuses, before the node is asked, what it would refuse
// in the words of its API (q=, limit=): words that are empty or only
// spaces and punctuation, words too long, a --limit out of its range. A
// --limit left out (0) is the node's default.
func checkSearch(cmd *cobra.Command, q string) error {
	switch {
	case strings.TrimSpace(q) == "":
		return errors.New("search needs at least one word: metamesh search WORD...")
	case !api.HasWord(q):
		return fmt.Errorf("search needs at least one word, a letter or a digit: %q holds none", q)
	case len(q) > api.MaxSearchQuery:
		return fmt.Errorf("the words to search are %d bytes long, at most %d", len(q), api.MaxSearchQuery)
	}
	n, _ := cmd.Flags().GetInt("limit")
	if (n != 0 || cmd.Flags().Changed("limit")) && (n < 1 || n > api.MaxSearchLimit) {
		return fmt.Errorf("--limit %d: want from 1 to %d hits", n, api.MaxSearchLimit)
	}
	return nil
}

// printHits writes the readable output of metamesh search: a table of
// the hits (title and episode title, year, season and episode, size,
// source, canonical CID), then the cursor of the next page; federated,
// how many households were asked.
func printHits(out io.Writer, res api.SearchResult, federated bool) error {
	if err := printHitTable(out, res); err != nil || !federated {
		return err
	}
	_, err := fmt.Fprintf(out, "asked %s (%d through the search index), %s answered\n",
		plural(res.Asked, "household"), res.FromIndex, plural(len(res.Peers), "household"))
	return err
}

func printHitTable(out io.Writer, res api.SearchResult) error {
	if len(res.Hits) == 0 {
		_, err := fmt.Fprintln(out, "no match")
		return err
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TITLE\tYEAR\tS/E\tSIZE\tSOURCE\tCID")
	for _, h := range res.Hits {
		title := h.Title
		if h.EpisodeTitle != "" {
			title += " – " + h.EpisodeTitle
		}
		year, se := "", ""
		if h.Year != 0 {
			year = strconv.Itoa(h.Year)
		}
		switch {
		case h.Season != nil && h.Episode != nil:
			se = fmt.Sprintf("S%02dE%02d", *h.Season, *h.Episode)
		case h.Season != nil:
			se = fmt.Sprintf("S%02d", *h.Season)
		case h.Episode != nil:
			se = fmt.Sprintf("E%02d", *h.Episode)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", title, year, se, humanSize(h.Size), peerLabel(h.Source, res.PeerNames[h.Source]), h.CID)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if res.Next != "" {
		_, err := fmt.Fprintf(out, "(more: --limit, or GET /api/search with cursor=%s)\n", res.Next)
		return err
	}
	return nil
}

// humanSize writes a byte count with a binary unit.
func humanSize(n int64) string {
	if n <= 0 {
		return "-"
	}
	return fetch.BytesText(n)
}

// plural writes n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
