package p2p

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadIdentity_Damaged: a key file that holds no key is refused
// saying which file, that it is damaged, and that moving it aside gives
// the node a new peer ID; nothing is written over it.
func TestLoadIdentity_Damaged(t *testing.T) {
	t.Parallel()
	good := t.TempDir()
	if _, err := LoadIdentity(good); err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(filepath.Join(good, IdentityFile))
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), key...)
	flipped[0] ^= 0xff
	for _, tt := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"truncated", key[:len(key)/2]},
		{"garbage", []byte("not a key at all\n")},
		{"a flipped first byte", flipped},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, IdentityFile)
			if err := os.WriteFile(p, tt.b, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadIdentity(dir)
			if err == nil {
				t.Fatal("a damaged key was taken")
			}
			for _, want := range []string{p + " is damaged", "mv " + p + " " + p + ".damaged", "new peer ID", "households that knew the old one will see a new peer"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q; want it to say %q", err, want)
				}
			}
			if got, _ := os.ReadFile(p); string(got) != string(tt.b) {
				t.Errorf("the damaged file was changed: %q", got)
			}
		})
	}
}
