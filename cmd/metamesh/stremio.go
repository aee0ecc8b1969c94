package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/node/stremio"
)

func newStremioCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "stremio",
		Short: "Print the URL that adds the household's library to Stremio (a TV, a phone)",
		Long: `Print the URL of the node's Stremio add-on: paste it in Stremio's add-on
search box (Add-ons) on a TV, a phone or a computer of the LAN, and
Stremio lists the household's films and shows and plays them from the
node.

The URL names an address other devices reach the node at: the node's
--api address when it names one, else every address of this machine
(one URL each), or the one of --host (a name or address, with a port or
not, or a URL). Off loopback the URL carries the add-on's token (made of
the API's token, and opening the add-on only): anyone who has the URL
can list and play the household's films and shows. A node whose API
listens on loopback only is reached by Stremio on this machine only:
run it with --api 0.0.0.0:4680 for the others.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			host, err := hostFlag(cmd)
			if err != nil {
				return err
			}
			res, raw, err := apiGetJSON[stremio.Link](cmd, stremio.LinkPath, 10*time.Second)
			if err != nil {
				return jsonError(cmd, raw, err)
			}
			if raw, err = atHost(host, res.Listen, res.Path, &res.URLs, &res, raw); err != nil {
				return err
			}
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd, raw)
			}
			return printStremio(cmd.OutOrStdout(), res)
		},
	}
	apiFlag(c)
	c.Flags().String("host", "", "the host of the URL: a name or address of this machine other devices reach (default: the node's --api address, else every address of this machine)")
	return c
}

// printStremio writes the add-on's URLs and what to do with them.
func printStremio(out io.Writer, l stremio.Link) error {
	if len(l.URLs) == 0 {
		_, err := fmt.Fprintf(out, "The node's API listens on %s, which only this machine reaches: Stremio on this machine adds the library with\n\n  %s\n\nFor a TV or a phone, run the node with --api 0.0.0.0:4680 (or an address of the LAN).\n", l.Listen, l.Manifest)
		return err
	}
	fmt.Fprintf(out, "In Stremio (Add-ons), paste this URL in the search box and install the add-on:\n\n  %s\n\n", l.URLs[0])
	if len(l.URLs) > 1 {
		fmt.Fprintln(out, "The same add-on at this machine's other addresses (--host picks one):")
		for _, u := range l.URLs[1:] {
			fmt.Fprintf(out, "  %s\n", u)
		}
		fmt.Fprintln(out)
	}
	_, err := fmt.Fprintln(out, "Anyone who has the URL can list and play the household's films and shows: share it as you would the node's invites.")
	return err
}
