package node

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/metamesh/node/node/p2p"
)

// The data directory is how every command finds a node: `metamesh run`
// (and so `make run`) and every other command default to the same one,
// DefaultDataDir, and the node writes into it the URL its API serves on
// (APIFile), which the client commands read when no --api is given.

// APIFile is the file in the data directory that holds the URL of the
// node's HTTP API, one line, written at every start (after the API
// listens). It stays after the node stops: a client that reads it then
// says which address it could not reach.
const APIFile = "api.url"

// ErrNoData: a data directory that does not exist, or holds no node (no
// identity and no store).
var ErrNoData = errors.New("no node data")

// noData is an ErrNoData that says only its own message.
type noData string

func (e noData) Error() string        { return string(e) }
func (e noData) Is(target error) bool { return target == ErrNoData }

func noDataf(format string, a ...any) error { return noData(fmt.Sprintf(format, a...)) }

// DefaultDataDir is the data directory of every command when --data is
// not given: $XDG_DATA_HOME/metamesh, else $HOME/.local/share/metamesh.
func DefaultDataDir() string {
	if x := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "metamesh")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "metamesh")
	}
	return ""
}

// CheckDataDir reports whether dir holds a node (its identity or its
// store), without creating anything: ErrNoData, saying whether dir is
// missing or empty, when it does not.
func CheckDataDir(dir string) error {
	if dir == "" {
		return noDataf("no data directory: give --data")
	}
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return noDataf("the data directory %s does not exist: metamesh run (make run) creates it, or give --data", dir)
	}
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if !fi.IsDir() {
		return noDataf("the data directory %s is not a directory (--data)", dir)
	}
	for _, name := range []string{p2p.IdentityFile, "redis"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return nil
		}
	}
	return noDataf("the data directory %s holds no node (no %s, no redis/): metamesh run (make run) fills it, or give --data", dir, p2p.IdentityFile)
}

// ClientURL is the URL a client on this machine reaches an API listening
// on addr at: an unspecified host (0.0.0.0, ::) is reached on loopback.
func ClientURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}

// WriteAPIURL records url in dir/APIFile (replaced whole, never seen half
// written).
func WriteAPIURL(dir, url string) error {
	tmp, err := os.CreateTemp(dir, APIFile+".*")
	if err != nil {
		return fmt.Errorf("api address file: %w", err)
	}
	_, werr := tmp.WriteString(url + "\n")
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(dir, APIFile))
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("api address file: %w", werr)
	}
	return nil
}

// ReadAPIURL is the URL a node running on dir wrote; fs.ErrNotExist when
// none did.
func ReadAPIURL(dir string) (string, error) {
	if dir == "" { // no home directory, no --data
		return "", fs.ErrNotExist
	}
	b, err := os.ReadFile(filepath.Join(dir, APIFile))
	if err != nil {
		return "", err
	}
	u := strings.TrimSpace(string(b))
	if u == "" || strings.ContainsAny(u, " \t\n") {
		return "", fmt.Errorf("%s: not one URL", filepath.Join(dir, APIFile))
	}
	return u, nil
}
