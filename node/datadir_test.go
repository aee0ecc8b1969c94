package node_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/metamesh/node/node"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/store/storetest"
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

// TestStart_ReadOnlyDataDir: a data directory on a read-only file system
// is said to be read-only before the store or the identity meet it, and
// one that cannot be created there says why.
func TestStart_ReadOnlyDataDir(t *testing.T) {
	t.Parallel()
	ro, err := os.MkdirTemp("", "mmro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(ro) })
	// 1 MiB: under the free space a start asks for, so the test also
	// checks that read-only is said before full.
	if err := syscall.Mount("tmpfs", ro, "tmpfs", syscall.MS_RDONLY, "size=1m"); err != nil {
		t.Skipf("cannot mount a read-only tmpfs for the data directory (%v): run as root", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(ro, syscall.MNT_DETACH) })
	for _, tt := range []struct{ name, dir, want string }{
		{"the directory", ro, "data directory " + ro + " is read-only"},
		{"a directory to create in it", filepath.Join(ro, "data"), "data directory " + filepath.Join(ro, "data") + " cannot be created: its file system is read-only"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, err := node.New(node.Config{Libraries: []string{t.TempDir()}, DataDir: tt.dir, APIAddr: "127.0.0.1:0",
				P2P: p2p.Config{Listen: []string{"/ip4/127.0.0.1/tcp/0"}}, Logger: storetest.Logger(t)})
			if err != nil {
				t.Fatal(err)
			}
			err = n.Start(context.Background())
			if err == nil {
				n.Close()
				t.Fatal("started on a read-only data directory")
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "chmod") {
				t.Errorf("Start = %v; want it to say %q", err, tt.want)
			}
		})
	}
}

// TestStart_FailedFirstStart: a start that fails on a port in use leaves
// no half-made data directory where it made one (nor the parents it
// made), empties one that was empty, and leaves an existing household's
// data as it was.
func TestStart_FailedFirstStart(t *testing.T) {
	t.Parallel()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	clash := fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", held.Addr().(*net.TCPAddr).Port)
	lib := t.TempDir()
	start := func(dir, listen string) (*node.Node, error) {
		n, err := node.New(node.Config{Libraries: []string{lib}, DataDir: dir, APIAddr: "127.0.0.1:0",
			P2P: p2p.Config{Listen: []string{listen}}, Logger: storetest.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		return n, n.Start(context.Background())
	}
	base := storetest.Dir(t)
	household := filepath.Join(base, "household")
	n, err := start(household, "/ip4/127.0.0.1/tcp/0")
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(filepath.Join(household, p2p.IdentityFile))
	if err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(base, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name, dir string
		check     func(t *testing.T)
	}{
		{"a new directory and its parent", filepath.Join(base, "new", "data"), func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(base, "new")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the directories this start made are left (%v)", err)
			}
		}},
		{"an empty directory", empty, func(t *testing.T) {
			if entries, err := os.ReadDir(empty); err != nil || len(entries) != 0 {
				t.Errorf("the empty directory holds %v (%v), want it kept, empty", entries, err)
			}
		}},
		{"an existing household", household, func(t *testing.T) {
			if got, err := os.ReadFile(filepath.Join(household, p2p.IdentityFile)); err != nil || !bytes.Equal(got, key) {
				t.Errorf("the household's identity.key changed (%v)", err)
			}
			if _, err := os.Stat(filepath.Join(household, "redis")); err != nil {
				t.Errorf("the household's store: %v", err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, err := start(tt.dir, clash)
			if err == nil {
				n.Close()
				t.Fatalf("started with %s in use", clash)
			}
			if !strings.Contains(err.Error(), "address already in use") {
				t.Errorf("Start = %v; want the port in use", err)
			}
			tt.check(t)
		})
	}
}
