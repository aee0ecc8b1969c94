package invite_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/invite"
)

func mustOpen(t *testing.T, path string) *invite.Store {
	t.Helper()
	s, err := invite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStore_Lifecycle: a code opens one session once; the session
// survives a reopen of the file, which holds neither the code nor the
// secret and is mode 0600; a revoked session is gone at once.
func TestStore_Lifecycle(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), invite.File)
	s := mustOpen(t, path)
	e, code, err := s.Create(invite.DefaultTTL)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.State(time.Now()); got != invite.StatePending {
		t.Errorf("new invite: state %q, want %q", got, invite.StatePending)
	}
	got, secret, err := s.Redeem(code, "Phone/1.0")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != e.ID || got.UserAgent != "Phone/1.0" {
		t.Errorf("redeemed: %+v", got)
	}
	if _, _, err := s.Redeem(code, "Other/1.0"); !errors.Is(err, invite.ErrUsed) {
		t.Errorf("second use: %v, want ErrUsed", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), code) || strings.Contains(string(b), secret) {
		t.Errorf("the file holds the code or the secret:\n%s", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}

	again := mustOpen(t, path)
	if again.Name() != s.Name() {
		t.Errorf("name after reopening %q, want %q", again.Name(), s.Name())
	}
	if got, ok := again.Session(secret); !ok || got.ID != e.ID {
		t.Fatalf("session after reopening: %+v %v", got, ok)
	}
	if _, ok := again.Session("not" + secret); ok {
		t.Error("a wrong secret opened a session")
	}
	if err := again.Revoke(e.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := again.Session(secret); ok {
		t.Error("a revoked session still works")
	}
	if err := again.Revoke(e.ID); !errors.Is(err, invite.ErrUnknown) {
		t.Errorf("revoking twice: %v, want ErrUnknown", err)
	}
	if n := len(mustOpen(t, path).List()); n != 0 {
		t.Errorf("after revoking, the file lists %d entries", n)
	}
}

// TestStore_Refusals: what Create and Redeem refuse, by sentinel.
func TestStore_Refusals(t *testing.T) {
	t.Parallel()
	s := mustOpen(t, filepath.Join(t.TempDir(), invite.File))
	_, short, err := s.Create(invite.MinTTL)
	if err != nil {
		t.Fatal(err)
	}
	waiting.Until(t, "the short invite to expire", func() string {
		if st := s.List()[0].State(time.Now()); st != invite.StateExpired {
			return st
		}
		return ""
	}, waiting.Every(50*time.Millisecond))
	tests := []struct {
		name string
		do   func() error
		want error
	}{
		{"lifetime too short", func() error { _, _, err := s.Create(invite.MinTTL - 1); return err }, invite.ErrBadTTL},
		{"lifetime too long", func() error { _, _, err := s.Create(invite.MaxTTL + 1); return err }, invite.ErrBadTTL},
		{"expired code", func() error { _, _, err := s.Redeem(short, ""); return err }, invite.ErrExpired},
		{"unknown code", func() error { _, _, err := s.Redeem("nope", ""); return err }, invite.ErrUnknown},
		{"unknown ID", func() error { return s.Revoke("nope") }, invite.ErrUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.do(); !errors.Is(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
