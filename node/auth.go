package node

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/invite"
)

// APITokenFile is the API token file generated in the data directory
// (unless --api-token-file names another); the client commands send it to
// the API whose address the same directory holds.
const APITokenFile = "api-token"

// access builds the API's access rules. On a non-loopback address it
// reads the bearer token from APITokenFile (default DataDir/api-token),
// generating it (32 random bytes, hex, mode 0600) when the file is
// missing. It opens the invites (DataDir/invites.json) whatever the
// address: off loopback their browsers are served as clients with the
// token are. The start log names the file and what is open without it.
func (n *Node) access() (api.Access, error) {
	a := api.Access{Loopback: api.IsLoopback(n.cfg.APIAddr), PublicRead: n.cfg.PublicRead, Hosts: n.cfg.APIHosts}
	inv, err := invite.Open(filepath.Join(n.cfg.DataDir, invite.File))
	if err != nil {
		return a, fmt.Errorf("api: %w", err)
	}
	a.Invites = inv
	if a.Loopback {
		n.log.Info("api on loopback: no token needed; only Host headers naming this machine are served",
			"addr", n.apiAddr, "hosts", append([]string{"localhost", "127.0.0.1", "[::1]"}, n.cfg.APIHosts...))
		return a, nil
	}
	path := n.cfg.APITokenFile
	if path == "" {
		path = filepath.Join(n.cfg.DataDir, APITokenFile)
	}
	tok, created, err := loadToken(path)
	if err != nil {
		return a, fmt.Errorf("api: token (--api-token-file): %w", err)
	}
	a.Token = tok
	open := "/health, /ready, /metrics"
	if a.PublicRead {
		open += ", GET /api/meta, /api/search, /api/library, /api/file (--public-read)"
		fed := "none (--stranger-rate 0)"
		if r := n.cfg.StrangerRate; r > 0 {
			fed = fmt.Sprintf("%g per second, %d at once, per IPv4 address or IPv6 /64", r, n.cfg.StrangerBurst)
		}
		open += "; federated lookups and searches from other machines: " + fed
	}
	n.log.Warn("api on a non-loopback address: every other endpoint needs Authorization: Bearer <token>",
		"addr", n.apiAddr, "tokenFile", path, "generated", created, "openWithoutToken", open)
	return a, nil
}

// loadToken reads a token file, or writes a new random token there
// (mode 0600) when it does not exist.
func loadToken(path string) (tok string, created bool, err error) {
	b, err := os.ReadFile(path)
	if err == nil {
		tok = strings.TrimSpace(string(b))
		if len(tok) < 16 {
			return "", false, fmt.Errorf("%s: the token is %d characters; want at least 16", path, len(tok))
		}
		return tok, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", false, err
	}
	tok = hex.EncodeToString(raw[:])
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, err
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		return "", false, err
	}
	return tok, true, f.Close()
}
