package node

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
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

// Validate names the first bad field and its value.
func (c *Config) Validate() error {
	if _, err := ingest.Libraries(c.Libraries); err != nil {
		return fmt.Errorf("config: %w (--library)", err)
	}
	if c.RedisURL == "" && c.DataDir == "" {
		return fmt.Errorf("config: DataDir: required when no RedisURL is given")
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
// (absolute, symlinks resolved), so logs, status and the store never depend
// on the working directory.
func (c *Config) absolute() error {
	libs, err := ingest.Libraries(c.Libraries)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	c.Libraries = libs
	if c.DataDir != "" {
		abs, err := filepath.Abs(c.DataDir)
		if err != nil {
			return fmt.Errorf("config: DataDir: %q: %w", c.DataDir, err)
		}
		c.DataDir = abs
	}
	return nil
}
