package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/api"
)

func newSetCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "set CID|FILE FIELD=VALUE...",
		Short: "Correct the household's own file: set fields, which no rescan overwrites",
		Long: `Set fields of one of the household's own files (by any of its CIDs, or the
file itself), as PATCH /api/meta/<cid> does: flat names, "/"-separated
(titles/eng=…, movieYear=1964, videoType=other). The values are the
household's edits: a rescan, an NFO change or a new release of the node
never overwrites them, and the node's records carry them to peers.
metamesh unset drops an edit, and what the file's name or NFO says comes
back. Prints the file as metamesh lookup does (--json: the document).
The node's own fields (filePath, cids/…, duplicates, sizeByte, mtime) and
a file known only from peers are refused.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			set := map[string]any{}
			for _, a := range args[1:] {
				k, v, ok := strings.Cut(a, "=")
				if !ok || k == "" {
					return usageError(cmd, fmt.Errorf("%q is not FIELD=VALUE", a))
				}
				set[k] = v
			}
			return patchFile(cmd, args[0], set)
		},
	}
	apiFlag(c)
	return c
}

func newUnsetCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "unset CID|FILE FIELD...",
		Short: "Drop the household's edits of fields: what the file's name or NFO says comes back",
		Long: `Drop fields of one of the household's own files, as PATCH /api/meta/<cid>
with null does: an edited field gets back what the file's name or NFO
says (or goes, when they say nothing); a field that is not an edit is
deleted. Prints the file as metamesh lookup does (--json: the document).`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			set := map[string]any{}
			for _, k := range args[1:] {
				set[k] = nil
			}
			return patchFile(cmd, args[0], set)
		},
	}
	apiFlag(c)
	return c
}

// patchFile sends set (nil values delete) as PATCH /api/meta/<cid> of the
// file arg names and prints the document after.
func patchFile(cmd *cobra.Command, arg string, set map[string]any) error {
	c, err := cidOrFile(cmd, arg)
	if err != nil {
		return err
	}
	body, err := json.Marshal(set)
	if err != nil {
		return err
	}
	raw, err := apiSend(cmd, http.MethodPatch, "/api/meta/"+url.PathEscape(c), body, time.Minute)
	if err != nil {
		return jsonError(cmd, raw, err)
	}
	if j, _ := cmd.Flags().GetBool("json"); j {
		return printJSON(cmd, raw)
	}
	var doc api.Document
	if err := decodeJSON(raw, &doc); err != nil {
		return fmt.Errorf("the node's answer: %w", err)
	}
	return printDocument(cmd.OutOrStdout(), doc)
}
