package node_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metamesh/node/node"
	"github.com/metamesh/node/node/p2p"
)

func TestClientURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ addr, want string }{
		{"127.0.0.1:4680", "http://127.0.0.1:4680"},
		{"0.0.0.0:4680", "http://127.0.0.1:4680"},
		{":4680", "http://127.0.0.1:4680"},
		{"[::]:4680", "http://[::1]:4680"},
		{"[::1]:9000", "http://[::1]:9000"},
		{"192.168.1.5:80", "http://192.168.1.5:80"},
		{"nas.local:4680", "http://nas.local:4680"},
	} {
		if got := node.ClientURL(tt.addr); got != tt.want {
			t.Errorf("ClientURL(%q) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

// TestCheckDataDir: a directory holds a node once it has an identity or a
// store; a missing or empty one is ErrNoData saying which, and nothing is
// created.
func TestCheckDataDir(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	withKey := filepath.Join(base, "key")
	withRedis := filepath.Join(base, "redis-only")
	empty := filepath.Join(base, "empty")
	file := filepath.Join(base, "file")
	for _, d := range []string{withKey, filepath.Join(withRedis, "redis"), empty} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p2p.LoadIdentity(withKey); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		dir, says string // says "": holds a node
	}{
		{withKey, ""},
		{withRedis, ""},
		{empty, "holds no node"},
		{filepath.Join(base, "missing"), "does not exist"},
		{file, "is not a directory"},
		{"", "give --data"},
	} {
		err := node.CheckDataDir(tt.dir)
		switch {
		case tt.says == "" && err != nil:
			t.Errorf("CheckDataDir(%q) = %v, want a node", tt.dir, err)
		case tt.says != "" && (!errors.Is(err, node.ErrNoData) || !strings.Contains(err.Error(), tt.says)):
			t.Errorf("CheckDataDir(%q) = %v, want ErrNoData saying %q", tt.dir, err, tt.says)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "missing")); !os.IsNotExist(err) {
		t.Errorf("CheckDataDir created the missing directory (%v)", err)
	}
}

// TestNode_WritesAPIURL: a started node records where its API serves
// (with the port it got for :0) in its data directory.
func TestNode_WritesAPIURL(t *testing.T) {
	t.Parallel()
	var data string
	n := startNodeWith(t, t.TempDir(), func(c *node.Config) { data = c.DataDir })
	got, err := node.ReadAPIURL(data)
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://" + n.APIAddr(); got != want {
		t.Errorf("%s holds %q, want %q", node.APIFile, got, want)
	}
}
