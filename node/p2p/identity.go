package p2p

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/libp2p/go-libp2p/core/crypto"
)

// IdentityFile holds the node's Ed25519 key in the data directory.
const IdentityFile = "identity.key"

// LoadIdentity reads the node's key from dir, creating it (mode 0600) on
// first use. A key file others may read is refused; one that holds no
// key (damaged, truncated, or another file) is refused saying so and
// what moving it aside costs: a new key, so a new peer ID.
func LoadIdentity(dir string) (crypto.PrivKey, error) {
	p := filepath.Join(dir, IdentityFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return createIdentity(dir, p)
	}
	if err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("identity: %s is readable by others (mode %v): chmod 600 it", p, fi.Mode().Perm())
	}
	k, err := crypto.UnmarshalPrivateKey(b)
	if err != nil {
		return nil, damagedIdentity(p, err)
	}
	if k.Type() != crypto.Ed25519 {
		return nil, fmt.Errorf("identity: %s holds a %v key, want Ed25519", p, k.Type())
	}
	return k, nil
}

// createIdentity writes a new key to p, in dir.
func createIdentity(dir, p string) (crypto.PrivKey, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	k, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	raw, err := crypto.MarshalPrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // created meanwhile by another process
		return LoadIdentity(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	if _, err := f.Write(raw); err != nil {
		f.Close()
		os.Remove(p) // half a key would be a damaged one at the next start
		return nil, fmt.Errorf("identity: write %s: %w", p, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(p)
		return nil, fmt.Errorf("identity: write %s: %w", p, err)
	}
	return k, f.Close()
}

// damagedIdentity is the error of a key file that holds no key (err):
// which file, that it is damaged, and the way out with its cost.
func damagedIdentity(p string, err error) error {
	return fmt.Errorf("identity: %s is damaged and holds no key the node can read (%w): "+
		"restore it from a backup to keep this node's peer ID, or move it aside (mv %s %s.damaged) "+
		"and start again for a new key: the node then has a new peer ID, and households that knew the old one will see a new peer",
		p, err, p, p)
}
