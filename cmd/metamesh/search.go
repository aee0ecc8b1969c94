package main

import (
	"fmt"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

func newSearchCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "search QUERY",
		Short: "Find files by title, file name, year, season or episode, on this node and optionally its peers",
		Long: `Ask the running node's search index (GET /api/search). Words match
without regard to case or accents ("amelie" finds "Amélie"); files holding
every word come first. --federated also asks the connected peers and shows
their hits after the local ones, with the peer as source. --json prints the
node's JSON as it is (its "next" cursor pages on with the API).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v := url.Values{"q": {args[0]}}
			if n, _ := cmd.Flags().GetInt("limit"); n != 0 {
				v.Set("limit", strconv.Itoa(n))
			}
			if f, _ := cmd.Flags().GetBool("federated"); f {
				v.Set("federated", "1")
			}
			m, raw, err := apiGet(cmd, "/api/search?"+v.Encode(), 15*time.Second)
			if err != nil {
				return jsonError(cmd, raw, err)
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			hits, _ := m["hits"].([]any)
			if len(hits) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no match")
				return nil
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(w, "TITLE\tYEAR\tS/E\tSIZE\tSOURCE\tCID")
			for _, x := range hits {
				h, _ := x.(map[string]any)
				title := text(h["title"])
				if et, ok := h["episodeTitle"].(string); ok && et != "" {
					title += " – " + et
				}
				year, se := "", ""
				if y, ok := integer(h["year"]); ok {
					year = strconv.FormatInt(y, 10)
				}
				s, sok := integer(h["season"])
				e, eok := integer(h["episode"])
				switch {
				case sok && eok:
					se = fmt.Sprintf("S%02dE%02d", int(s), int(e))
				case sok:
					se = fmt.Sprintf("S%02d", int(s))
				case eok:
					se = fmt.Sprintf("E%02d", int(e))
				}
				size, _ := integer(h["size"])
				src := shortID(text(h["source"]))
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", title, year, se, humanSize(size), src, text(h["cid"]))
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if next, _ := m["next"].(string); next != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "(more: --limit, or GET /api/search with cursor=%s)\n", next)
			}
			return nil
		},
	}
	apiFlag(c)
	c.Flags().Bool("federated", false, "also ask the connected peers")
	c.Flags().Int("limit", 0, "hits to show, 1 to 100 (default 20)")
	return c
}

// humanSize writes a byte count with a binary unit.
func humanSize(n int64) string {
	if n <= 0 {
		return "-"
	}
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
