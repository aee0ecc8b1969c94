package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/store"
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

// claimDataDir makes dir ready for a start: it creates it when missing
// and checks that the node can write there, so a read-only data
// directory is said as such before the store or the identity meet it.
// The undo it returns removes what the start made, for a start that
// failed: the directory itself when this start created it (and the
// parents it created with it), everything in it when it was empty; a
// directory that held anything is never touched, nor one whose managed
// redis-server answers (a node that started on it meanwhile).
func claimDataDir(dir string) (undo func(), err error) {
	nothing := func() {}
	if dir == "" {
		return nothing, nil
	}
	top := firstMissing(dir)
	if top != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			os.RemoveAll(top)
			return nothing, notWritable(dir, "cannot be created", err)
		}
	}
	if err := checkWritable(dir); err != nil {
		if top != "" {
			os.RemoveAll(top)
		}
		return nothing, err
	}
	if top != "" {
		return func() { undoStart(dir, top) }, nil
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) > 0 {
		return nothing, nil
	}
	return func() { undoStart(dir, "") }, nil
}

// firstMissing is the outermost directory of dir's path that does not
// exist (dir itself, or a parent), "" when dir exists.
func firstMissing(dir string) string {
	missing := ""
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return missing
		}
		missing = d
		if filepath.Dir(d) == d {
			return missing
		}
	}
}

// checkWritable creates and removes a file in dir.
func checkWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".metamesh-write-check-*")
	if err != nil {
		return notWritable(dir, "is not writable", err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// notWritable says that the data directory cannot be written (what, the
// failure as the system gave it), read-only when it is on a read-only
// file system.
func notWritable(dir, what string, err error) error {
	fix := "give --data a directory the node can write (env METAMESH_DATA)"
	switch {
	case errors.Is(err, syscall.EROFS) && what == "is not writable":
		return fmt.Errorf("data directory %s is read-only (%w): the node keeps its store, identity and indexes there; %s", dir, err, fix)
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("data directory %s %s: its file system is read-only (%w); %s", dir, what, err, fix)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("data directory %s %s by user %d (%w): %s", dir, what, os.Getuid(), err, fix)
	}
	return fmt.Errorf("data directory %s %s (%w): %s", dir, what, err, fix)
}

// undoStart removes what a failed start made in dir: top (the outermost
// directory it created), or else dir's entries (dir was empty), unless a
// managed redis-server answers there now.
func undoStart(dir, top string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, up := store.RunningServer(ctx, dir); up {
		return
	}
	if top != "" {
		os.RemoveAll(top)
		return
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
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
