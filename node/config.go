package node

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/metamesh/node/ingest"
)

// DefaultAPIAddr is where the HTTP API listens unless told otherwise:
// loopback only.
const DefaultAPIAddr = "127.0.0.1:4680"

// Config configures a node. Every field has a flag and an environment
// twin in cmd/metamesh.
type Config struct {
	// Libraries are the media directories to ingest (--library,
	// METAMESH_LIBRARY). Required.
	Libraries []string
	// DataDir holds the managed Redis data (--data, METAMESH_DATA).
	// Default $HOME/.local/share/metamesh.
	DataDir string
	// RedisURL of an external Redis (--redis-url, METAMESH_REDIS_URL).
	// Empty: start and supervise a redis-server under DataDir/redis.
	RedisURL string
	// APIAddr for the HTTP API (--api, METAMESH_API). Default
	// 127.0.0.1:4680.
	APIAddr string
	// Workers bounds concurrent hashing (--workers). Default: CPUs.
	Workers int
	// Settle is how long a file must be still before it is hashed
	// (--settle). Default 2s.
	Settle time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
}

// SetDefaults fills zero fields.
func (c *Config) SetDefaults() {
	if c.DataDir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			c.DataDir = filepath.Join(home, ".local", "share", "metamesh")
		}
	}
	if c.APIAddr == "" {
		c.APIAddr = DefaultAPIAddr
	}
	if c.Settle == 0 {
		c.Settle = 2 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate names the first bad field and its value. Paths are compared
// absolute with symlinks resolved: a data directory that would be
// ingested as part of a library (the node would hash its own Redis files
// forever) is refused.
func (c *Config) Validate() error {
	libs, err := ingest.Libraries(c.Libraries)
	if err != nil {
		return fmt.Errorf("config: %w (--library)", err)
	}
	if c.RedisURL == "" && c.DataDir == "" {
		return fmt.Errorf("config: DataDir: required when no RedisURL is given")
	}
	if c.DataDir != "" {
		data, err := resolve(c.DataDir)
		if err != nil {
			return fmt.Errorf("config: DataDir: %q: %w", c.DataDir, err)
		}
		for _, lib := range libs {
			if ingested(lib, data) {
				return fmt.Errorf("config: DataDir: the data directory %s is inside the library %s, so the node would ingest its own Redis files; choose a data directory outside every library (--data)", data, lib)
			}
		}
	}
	if _, _, err := net.SplitHostPort(c.APIAddr); err != nil {
		return fmt.Errorf("config: APIAddr: %q: %w", c.APIAddr, err)
	}
	if c.Workers < 0 {
		return fmt.Errorf("config: Workers: %d is negative", c.Workers)
	}
	if c.Settle < 0 {
		return fmt.Errorf("config: Settle: %s is negative", c.Settle)
	}
	return nil
}

// absolute puts library and data paths in the form stored paths take
// (absolute; libraries also with symlinks resolved, repeats and nested
// libraries dropped), so logs, status and the store never depend on the
// working directory. It returns the libraries given that were dropped,
// as they were given.
func (c *Config) absolute() (dropped []string, err error) {
	libs, err := ingest.Libraries(c.Libraries)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if len(libs) < len(c.Libraries) {
		kept := make(map[string]bool, len(libs))
		for _, l := range libs {
			kept[l] = true
		}
		for _, l := range c.Libraries {
			one, err := ingest.Libraries([]string{l})
			if err != nil {
				return nil, fmt.Errorf("config: %w", err)
			}
			if kept[one[0]] {
				delete(kept, one[0]) // a second spelling of it is dropped
			} else {
				dropped = append(dropped, l)
			}
		}
	}
	c.Libraries = libs
	if c.DataDir != "" {
		abs, err := filepath.Abs(c.DataDir)
		if err != nil {
			return nil, fmt.Errorf("config: DataDir: %q: %w", c.DataDir, err)
		}
		c.DataDir = abs
	}
	return dropped, nil
}

// logDropped says, in one line, which libraries are scanned as part of
// another one.
func logDropped(log *slog.Logger, dropped, libs []string) {
	if len(dropped) > 0 {
		log.Warn("libraries given twice or inside another library are scanned once, as part of the library that holds them", "dropped", dropped, "libraries", libs)
	}
}

// resolve makes p absolute and resolves the symlinks of its longest
// existing ancestor, so a directory that does not exist yet compares like
// the one it will be.
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for dir := abs; ; {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// ingested reports whether ingest of lib would walk into dir: dir is lib
// or inside it, and no directory on the way is skipped (hidden, like
// ~/.local under a library of ~).
func ingested(lib, dir string) bool {
	rel, err := filepath.Rel(lib, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false
	}
	if rel == "." {
		return true
	}
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		if ingest.Skipped(name) {
			return false
		}
	}
	return true
}
