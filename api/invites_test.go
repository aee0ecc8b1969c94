package api_test

import (
	"encoding/json"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/invite"
)

// TestServer_InviteLinks: the links of a new invite name an address a
// device of the LAN can reach the API at: the listen address when it
// names one, this machine's own addresses (never loopback) when it is
// unspecified; on loopback no invite is made, and the refusal says how
// to listen for the LAN. Without a store, invites are a 404.
func TestServer_InviteLinks(t *testing.T) {
	const tok = "0123456789abcdef0123"
	auth := map[string]string{"Authorization": "Bearer " + tok}
	tests := []struct {
		name   string
		access api.Access
		addr   string
		code   int
		check  func(t *testing.T, urls []string)
	}{
		{"a LAN address", api.Access{Token: tok}, "192.168.1.5:4680", 201, func(t *testing.T, urls []string) {
			if len(urls) != 1 || !strings.HasPrefix(urls[0], "http://192.168.1.5:4680/invite/") {
				t.Errorf("links %v, want one on 192.168.1.5:4680", urls)
			}
		}},
		{"every address", api.Access{Token: tok}, "0.0.0.0:4680", 201, func(t *testing.T, urls []string) {
			for _, u := range urls {
				pu, err := url.Parse(u)
				if err != nil {
					t.Fatal(err)
				}
				ip := net.ParseIP(pu.Hostname())
				if ip == nil || ip.IsLoopback() || ip.IsUnspecified() || pu.Port() != "4680" {
					t.Errorf("link %q: want one of this machine's LAN addresses, port 4680", u)
				}
			}
		}},
		{"loopback", api.Access{Loopback: true}, "127.0.0.1:4680", 409, nil},
		{"no store", api.Access{Token: tok}, "0.0.0.0:4680", 404, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name != "no store" {
				st, err := invite.Open(filepath.Join(t.TempDir(), invite.File))
				if err != nil {
					t.Fatal(err)
				}
				tt.access.Invites = st
			}
			srv := newServer(&fakeBackend{}, api.Options{Access: tt.access, Addr: tt.addr})
			rec := serve(t, srv, "POST", "/api/invites", auth)
			if rec.Code != tt.code {
				t.Fatalf("%d %s, want %d", rec.Code, rec.Body, tt.code)
			}
			if tt.check == nil {
				msg := errMsg(t, rec)
				if tt.code == 409 && !strings.Contains(msg, "--api 0.0.0.0:4680") {
					t.Errorf("loopback refusal %q does not say how to listen for the LAN", msg)
				}
				return
			}
			var a api.InviteAnswer
			if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
				t.Fatal(err)
			}
			if a.Listen != tt.addr {
				t.Errorf("listen %q, want %q", a.Listen, tt.addr)
			}
			tt.check(t, a.URLs)
		})
	}
}
