package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/api"
)

func newLookupCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "lookup CID",
		Short: "Print the document of a file by any of its CIDs, from this node or its peers",
		Long: `Ask the running node for the file a CID names: its own files, then the
federation (the DHT's providers, then its peers). Prints the document's CIDs,
source and metadata; --json prints the node's JSON as it is. --local skips
the federation. Exit status 3 when no one has the file, 2 for a malformed CID.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "/api/meta/" + url.PathEscape(args[0])
			if l, _ := cmd.Flags().GetBool("local"); l {
				path += "?local=1"
			}
			doc, raw, err := apiGetJSON[api.Document](cmd, path, time.Minute)
			if err != nil {
				return jsonError(cmd, raw, err)
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			return printDocument(cmd.OutOrStdout(), doc)
		},
	}
	apiFlag(c)
	c.Flags().Bool("local", false, "answer from this node only")
	return c
}

// printDocument writes the readable output of metamesh lookup: the
// canonical CID, the source, the path, every CID (with the peers a
// learned one is known from), the providers, then the metadata as sorted
// "name/sub value" lines, with the exact bytes of paths that are not
// UTF-8 (base64, as the JSON has them). One column of names, as wide as
// the longest.
func printDocument(out io.Writer, doc api.Document) error {
	w := tabwriter.NewWriter(out, 10, 0, 1, ' ', 0)
	fmt.Fprintf(w, "canonical\t%s\nsource\t%s\n", doc.CanonicalCID, doc.Source)
	if doc.FilePath != "" {
		fmt.Fprintf(w, "filePath\t%s\n", validUTF8(doc.FilePath))
	}
	for _, c := range doc.CIDs {
		if ps := doc.Learned[c]; len(ps) > 0 {
			// Held only because peers' records carried it.
			fmt.Fprintf(w, "cid\t%s (learned from %s)\n", c, strings.Join(ps, ", "))
			continue
		}
		fmt.Fprintf(w, "cid\t%s\n", c)
	}
	for _, p := range doc.Providers {
		fmt.Fprintf(w, "provider\t%s\n", p)
	}
	lines := metaLines(nil, "", api.ObjectValue(doc.Meta))
	if len(doc.FilePathBytes) > 0 {
		lines = append(lines, "filePathBytes\t"+base64.StdEncoding.EncodeToString(doc.FilePathBytes))
	}
	for i, b := range doc.DuplicatesBytes {
		lines = append(lines, fmt.Sprintf("duplicatesBytes/%d\t%s", i, base64.StdEncoding.EncodeToString(b)))
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	return w.Flush()
}

// validUTF8 is s with every byte that is not UTF-8 as U+FFFD, as the
// node's JSON shows it (its exact bytes are printed as filePathBytes).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r) // utf8.RuneError for an invalid byte, n == 1
		i += n
	}
	return b.String()
}

// metaLines appends a metadata value as "a/b\tvalue" lines (list
// elements by index), in no particular order.
func metaLines(out []string, name string, v api.Value) []string {
	switch v.Kind {
	case api.KindObject:
		for k, x := range v.Object {
			out = metaLines(out, join(name, k), x)
		}
	case api.KindList:
		for i, x := range v.List {
			out = metaLines(out, join(name, strconv.Itoa(i)), x)
		}
	default:
		out = append(out, name+"\t"+valueText(v))
	}
	return out
}

// valueText is how a metadata value is printed: a number as the node's
// JSON writes it (a whole one as an integer, however it was written).
func valueText(v api.Value) string {
	switch v.Kind {
	case api.KindInt:
		return strconv.FormatInt(v.Int, 10)
	case api.KindFloat:
		if b, err := json.Marshal(v.Float); err == nil {
			return string(b)
		}
		return strconv.FormatFloat(v.Float, 'g', -1, 64)
	}
	return v.Str
}
