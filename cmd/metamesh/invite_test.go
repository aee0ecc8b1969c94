package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store/storetest"
)

// noRedirect is a client that shows a redirect instead of following it.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// openAs answers GET u with the cookie c (when set).
func openAs(t *testing.T, u string, c *http.Cookie) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	if c != nil {
		req.AddCookie(c)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// offAndOnLoopback runs two nodes, ready: one whose API listens on
// every address (its data directory and port), one on loopback (its
// data directory and API address).
func offAndOnLoopback(t *testing.T) (data string, port int, loopData, loopAPI string) {
	t.Helper()
	data, port = storetest.Dir(t), freePortNumber(t)
	listen := func() string { return fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", freePort(t)) }
	startRun(t, data, fmt.Sprintf("0.0.0.0:%d", port), "--listen", listen())
	loopData, loopAPI = storetest.Dir(t), freeAddr(t)
	startRun(t, loopData, loopAPI, "--listen", listen())
	for _, d := range []string{data, loopData} {
		waiting.Until(t, "the node to be ready", func() string {
			if _, errOut, code := metamesh(t, nil, "health", "--data", d); code != 0 {
				return errOut
			}
			return ""
		}, cliPoll)
	}
	return data, port, loopData, loopAPI
}

// TestInvite: against a running node off loopback, metamesh invite
// prints a link of the node's port and its QR code; the link lets one
// browser in (a cookie) and sends it on to the page; --list shows the
// browser, --revoke ends it at once. Against a node on loopback it says
// other devices cannot reach it and how to change that.
func TestInvite(t *testing.T) {
	t.Parallel()
	data, port, loopData, _ := offAndOnLoopback(t)

	out, errOut, code := metamesh(t, nil, "invite", "--data", data, "--host", "127.0.0.1", "--json")
	if code != 0 {
		t.Fatalf("invite --json: exit %d %s", code, errOut)
	}
	var inv api.InviteAnswer
	if err := json.Unmarshal([]byte(out), &inv); err != nil || len(inv.URLs) != 1 {
		t.Fatalf("invite --json: %v\n%s", err, out)
	}
	if want := fmt.Sprintf("http://127.0.0.1:%d/invite/%s", port, inv.Code); inv.URLs[0] != want {
		t.Errorf("--host 127.0.0.1: link %q, want %q", inv.URLs[0], want)
	}
	resp := openAs(t, inv.URLs[0], nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" || len(resp.Cookies()) != 1 {
		t.Fatalf("the link: %s, Location %q, cookies %v", resp.Status, resp.Header.Get("Location"), resp.Cookies())
	}
	cookie := resp.Cookies()[0]
	status := fmt.Sprintf("http://127.0.0.1:%d/api/status", port)
	if resp := openAs(t, status, cookie); resp.StatusCode != http.StatusOK {
		t.Errorf("/api/status with the cookie: %s", resp.Status)
	}
	if resp := openAs(t, inv.URLs[0], nil); resp.StatusCode != http.StatusGone {
		t.Errorf("the link again: %s, want 410", resp.Status)
	}

	out, errOut, code = metamesh(t, nil, "invite", "--data", data, "--list")
	row := regexp.MustCompile(`(?m)^` + inv.ID + ` +signed in +\S+ \S+ +- +\S+ \S+ +Go-http-client/1\.1$`)
	if code != 0 || !regexp.MustCompile(`^ID +STATE +CREATED +EXPIRES +LAST USED +USER AGENT\n`).MatchString(out) || !row.MatchString(out) {
		t.Errorf("invite --list: exit %d %s\n%s", code, errOut, out)
	}
	out, errOut, code = metamesh(t, nil, "invite", "--data", data, "--revoke", inv.ID)
	if code != 0 || !strings.HasPrefix(out, "revoked "+inv.ID+":") {
		t.Errorf("invite --revoke: exit %d %s\n%s", code, errOut, out)
	}
	if resp := openAs(t, status, cookie); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/api/status with a revoked cookie: %s, want 401", resp.Status)
	}

	// The links of this machine's own addresses, as a person sees them.
	out, errOut, code = metamesh(t, nil, "invite", "--data", data, "--ttl", "1h")
	switch {
	case code == 0:
		link := regexp.MustCompile(fmt.Sprintf(`(?m)^  http://(\S+):%d/invite/\S+$`, port)).FindStringSubmatch(out)
		if link == nil || strings.HasPrefix(link[1], "127.") || !strings.Contains(out, "█") || !strings.Contains(out, "metamesh invite --revoke ") {
			t.Errorf("invite: no LAN link, QR code and way to revoke:\n%s", out)
		}
	case !strings.Contains(errOut, "give --host"):
		t.Errorf("invite on a machine without a LAN address: exit %d %s", code, errOut)
	}

	tests := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"a node on loopback", []string{"--data", loopData}, 1, "listens only on loopback"},
		{"revoke nothing", []string{"--data", data, "--revoke", ""}, 2, "--revoke: give an ID"},
		{"revoke an unknown ID", []string{"--data", data, "--revoke", "nope"}, 3, `no invite or session "nope"`},
		{"a lifetime out of range", []string{"--data", data, "--ttl", "1000h"}, 2, "--ttl 1000h0m0s: want 1s to 720h0m0s"},
		{"list and revoke", []string{"--data", data, "--list", "--revoke", "all"}, 2, "--list and --revoke go alone"},
		{"a host that is no URL", []string{"--data", data, "--host", "http://"}, 2, `--host "http://": not a URL with a host`},
		{"revoke with a lifetime", []string{"--data", data, "--revoke", "all", "--ttl", "1h"}, 2, "--ttl and --host are for a new invite"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := metamesh(t, nil, append([]string{"invite"}, tt.args...)...)
			if code != tt.code || !strings.Contains(errOut, tt.says) {
				t.Errorf("exit %d %q, want %d saying %q", code, errOut, tt.code, tt.says)
			}
		})
	}
	if _, errOut, _ := metamesh(t, nil, "invite", "--data", loopData); !strings.Contains(errOut, "--api 0.0.0.0:4680") {
		t.Errorf("a node on loopback: %q does not say how to let other devices in", errOut)
	}
}
