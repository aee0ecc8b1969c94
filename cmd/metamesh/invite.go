package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/skip2/go-qrcode"
	"github.com/spf13/cobra"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/invite"
)

func newInviteCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "invite",
		Short: "Let one browser of the LAN (a phone, a TV) into the node's page: a one-time link and its QR code",
		Long: `Make an invite on the running node and print its link, with a QR code to
scan: the first browser that opens it is let in (an HTTP-only cookie of
its own; never the API token) and sent on to the node's page. The link
works once, until --ttl (default 24h), and the browser stays let in until
the invite is revoked.

The link names an address other devices reach the node at: the node's
--api address when it names one, else every address of this machine
(one link each; the QR code is the first's), or the one of --host (a name or
address, with a port or not, or a URL). A node whose API listens on
loopback only cannot be reached from other devices: run it with
--api 0.0.0.0:4680.

--list shows the invites (pending, expired) and the browsers let in
(when, last seen, their User-Agent); --revoke ID ends one at once, and
--revoke all every one.`,
		Args: cobra.NoArgs,
		RunE: runInvite,
	}
	apiFlag(c)
	c.Flags().Duration("ttl", invite.DefaultTTL, "how long the link works unused (1s to 720h)")
	c.Flags().String("host", "", "the host of the link: a name or address of this machine other devices reach (default: the node's --api address, else every address of this machine)")
	c.Flags().Bool("list", false, "list the invites and the browsers they let in")
	c.Flags().String("revoke", "", "revoke the invite or browser ID (from --list), or all of them with all")
	return c
}

func runInvite(cmd *cobra.Command, _ []string) error {
	if err := inviteMode(cmd); err != nil {
		return usageError(cmd, err)
	}
	if list, _ := cmd.Flags().GetBool("list"); list {
		return listInvites(cmd)
	}
	if cmd.Flags().Changed("revoke") {
		return revokeInvites(cmd)
	}
	return makeInvite(cmd)
}

// listInvites prints the node's invites: a table, or its JSON.
func listInvites(cmd *cobra.Command) error {
	res, raw, err := apiGetJSON[api.InvitesAnswer](cmd, "/api/invites", 10*time.Second)
	if j, _ := cmd.Flags().GetBool("json"); err != nil || j {
		return printOrFail(cmd, raw, err)
	}
	return printInvites(cmd.OutOrStdout(), res.Invites)
}

// revokeInvites revokes --revoke's invite, or all of them.
func revokeInvites(cmd *cobra.Command) error {
	id, _ := cmd.Flags().GetString("revoke")
	if id == "" {
		return usageError(cmd, fmt.Errorf("--revoke: give an ID (metamesh invite --list shows them) or all"))
	}
	res, raw, err := apiCallJSON[api.RevokedAnswer](cmd, http.MethodDelete, "/api/invites/"+url.PathEscape(id), 10*time.Second)
	if j, _ := cmd.Flags().GetBool("json"); err != nil || j {
		return printOrFail(cmd, raw, err)
	}
	if len(res.Revoked) == 0 {
		_, err := fmt.Fprintln(cmd.OutOrStdout(), "no invites to revoke")
		return err
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "revoked %s: its link works no more, nor does the browser it let in\n", strings.Join(res.Revoked, ", "))
	return err
}

// makeInvite makes an invite and prints its links and QR code, or the
// node's JSON (its links those of --host, when given).
func makeInvite(cmd *cobra.Command) error {
	ttl, _ := cmd.Flags().GetDuration("ttl")
	if ttl < invite.MinTTL || ttl > invite.MaxTTL {
		return usageError(cmd, fmt.Errorf("--ttl %v: want %v to %v", ttl, invite.MinTTL, invite.MaxTTL))
	}
	// A --host that makes no link is refused before an invite is made.
	host, err := hostFlag(cmd)
	if err != nil {
		return err
	}
	res, raw, err := apiCallJSON[api.InviteAnswer](cmd, http.MethodPost, "/api/invites?ttl="+url.QueryEscape(ttl.String()), 10*time.Second)
	if err != nil {
		return jsonError(cmd, raw, err)
	}
	if raw, err = atHost(host, res.Listen, res.Path, &res.URLs, &res, raw); err != nil {
		return err
	}
	if j, _ := cmd.Flags().GetBool("json"); j {
		return printJSON(cmd, raw)
	}
	if len(res.URLs) == 0 {
		return fmt.Errorf("invite %s made, but this machine has no address other devices reach the node at (its API listens on %s): give --host with one of its names or addresses, or revoke it (metamesh invite --revoke %s)", res.ID, res.Listen, res.ID)
	}
	return printInvite(cmd.OutOrStdout(), res)
}

// inviteMode refuses flags of two of invite's three uses at once: make
// an invite (--ttl, --host), --list, --revoke.
func inviteMode(cmd *cobra.Command) error {
	var given []string
	for _, f := range []string{"list", "revoke", "ttl", "host"} {
		if cmd.Flags().Changed(f) {
			given = append(given, "--"+f)
		}
	}
	if len(given) > 1 && (given[0] == "--list" || given[0] == "--revoke") {
		return fmt.Errorf("%s: --list and --revoke go alone; --ttl and --host are for a new invite", strings.Join(given, " and "))
	}
	return nil
}

// printOrFail prints the node's answer as it is (--json), then returns
// err.
func printOrFail(cmd *cobra.Command, raw []byte, err error) error {
	if err != nil {
		return jsonError(cmd, raw, err)
	}
	return printJSON(cmd, raw)
}

// hostFlag is --host, refused (a usage error) when it makes no link.
func hostFlag(cmd *cobra.Command) (string, error) {
	host, _ := cmd.Flags().GetString("host")
	if host != "" {
		if _, err := hostLink(host, "[::]:4680", ""); err != nil {
			return "", usageError(cmd, err)
		}
	}
	return host, nil
}

// atHost puts the one link of path on host (--host, when given) in
// urls, a field of the answer v, and returns v's JSON again; without a
// host raw as it is.
func atHost[T any](host, listen, path string, urls *[]string, v *T, raw []byte) ([]byte, error) {
	if host == "" {
		return raw, nil
	}
	u, err := hostLink(host, listen, path)
	if err != nil {
		return nil, err
	}
	*urls = []string{u}
	return json.Marshal(v)
}

// hostLink is the link of an invite's path on host: a URL's scheme and
// host as given, a host:port as given, else host with the port of the
// API's listen address.
func hostLink(host, listen, path string) (string, error) {
	if strings.Contains(host, "://") {
		u, err := url.Parse(host)
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("--host %q: not a URL with a host", host)
		}
		return u.Scheme + "://" + u.Host + path, nil
	}
	if _, _, err := net.SplitHostPort(host); err == nil {
		return "http://" + host + path, nil
	}
	_, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("--host %q: the node's API listens on %q, which names no port: give --host HOST:PORT", host, listen)
	}
	return "http://" + net.JoinHostPort(strings.Trim(host, "[]"), port) + path, nil
}

// printInvite writes the links of a new invite, the QR code of the
// first, and how to revoke it.
func printInvite(out io.Writer, res api.InviteAnswer) error {
	q, err := qrcode.New(res.URLs[0], qrcode.Low)
	if err != nil {
		return fmt.Errorf("QR code: %w", err)
	}
	fmt.Fprintf(out, "An invite for one browser (%s), until %s: open this link on the phone or TV, or scan the code.\n\n",
		res.ID, res.Expires.Local().Format("2006-01-02 15:04"))
	fmt.Fprintf(out, "  %s\n\n%s\n", res.URLs[0], q.ToSmallString(false))
	if len(res.URLs) > 1 {
		fmt.Fprintln(out, "The same invite at this machine's other addresses (--host picks the code's):")
		for _, u := range res.URLs[1:] {
			fmt.Fprintf(out, "  %s\n", u)
		}
		fmt.Fprintln(out)
	}
	_, err = fmt.Fprintf(out, "It works once. metamesh invite --list shows who came in; metamesh invite --revoke %s ends it.\n", res.ID)
	return err
}

// printInvites writes the table of metamesh invite --list.
func printInvites(out io.Writer, invites []api.InviteEntry) error {
	if len(invites) == 0 {
		_, err := fmt.Fprintln(out, "no invites")
		return err
	}
	when := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.Local().Format("2006-01-02 15:04")
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tSTATE\tCREATED\tEXPIRES\tLAST USED\tUSER AGENT")
	for _, e := range invites {
		expires := when(e.Expires)
		if e.State == invite.StateSignedIn {
			expires = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.State, when(e.Created), expires, when(e.LastUsed), orDash(oneLine(e.UserAgent)))
	}
	return w.Flush()
}
