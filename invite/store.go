package invite

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// File is the name of the store's file in the data directory.
const File = "invites.json"

const (
	// DefaultTTL is how long an invite's code works unused, unless told.
	DefaultTTL = 24 * time.Hour
	// MinTTL and MaxTTL bound an invite's lifetime.
	MinTTL = time.Second
	MaxTTL = 30 * 24 * time.Hour
	// LastUsedResolution is how far a session's last use moves before
	// it is written to the file again.
	LastUsedResolution = time.Minute
	// forgetAfter is how long an expired, unused invite stays listed
	// (and its code answered "expired" rather than "unknown").
	forgetAfter = 7 * 24 * time.Hour
	// maxUserAgent bounds the User-Agent kept of a session's browser.
	maxUserAgent = 200
)

// The states of an Entry.
const (
	StatePending  = "pending"   // the code is waiting for a browser
	StateExpired  = "expired"   // the code expired unused
	StateSignedIn = "signed in" // a browser used the code and holds a session
)

// Entry is one invite: its code while unused, then the session of the
// browser that used it. Its ID names both, for listing and revoking.
type Entry struct {
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	// Expires is when the code stops working if no browser used it.
	Expires time.Time `json:"expires"`
	// Redeemed is when a browser used the code; zero while unused.
	Redeemed time.Time `json:"redeemed,omitzero"`
	// LastUsed is the session's last request, to LastUsedResolution.
	LastUsed time.Time `json:"lastUsed,omitzero"`
	// UserAgent is the User-Agent of the browser that used the code.
	UserAgent string `json:"userAgent,omitempty"`
}

// State is StatePending, StateExpired or StateSignedIn at now.
func (e Entry) State(now time.Time) string {
	switch {
	case !e.Redeemed.IsZero():
		return StateSignedIn
	case !now.Before(e.Expires):
		return StateExpired
	}
	return StatePending
}

// entry is an Entry as the file keeps it, with the hashes of its code
// and, once redeemed, of its session secret.
type entry struct {
	Entry
	CodeHash   string `json:"codeHash"`
	SecretHash string `json:"secretHash,omitempty"`
}

// file is the JSON of the store's file.
type file struct {
	Version int     `json:"version"`
	Name    string  `json:"name"`
	Entries []entry `json:"entries"`
}

// Store keeps the invites and sessions of one node. Safe for concurrent
// use.
type Store struct {
	path string

	mu      sync.Mutex
	name    string
	entries []entry // by creation
	written map[string]time.Time
}

// Open reads the store kept at path (DATA/invites.json); a missing file
// is an empty store, written at its first change.
func Open(path string) (*Store, error) {
	s := &Store{path: path, written: map[string]time.Time{}}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.name = random(4)
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("invites: %w", err)
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil || f.Version != 1 || f.Name == "" {
		if err == nil {
			err = fmt.Errorf("version %d, name %q", f.Version, f.Name)
		}
		return nil, fmt.Errorf("invites: %s is damaged (%v): remove it to forget every invite and session", path, err)
	}
	s.name, s.entries = f.Name, f.Entries
	for _, e := range s.entries {
		s.written[e.ID] = e.LastUsed
	}
	return s, nil
}

// Name is a short random name of this store, the same across restarts:
// it tells this node's session cookie from another's on the same host.
func (s *Store) Name() string { return s.name }

// Create makes an invite whose code works once, for ttl, and returns it
// with the code (shown once: only its hash is kept).
func (s *Store) Create(ttl time.Duration) (Entry, string, error) {
	if ttl < MinTTL || ttl > MaxTTL {
		return Entry{}, "", fmt.Errorf("%w: %v; want %v to %v", ErrBadTTL, ttl, MinTTL, MaxTTL)
	}
	now := time.Now().UTC()
	code := random(32)
	e := entry{Entry: Entry{ID: random(4), Created: now, Expires: now.Add(ttl)}, CodeHash: hash(code)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.save(append(s.live(now), e)); err != nil {
		return Entry{}, "", err
	}
	return e.Entry, code, nil
}

// Redeem exchanges a code for a session: it returns the session's entry
// and its secret (which the browser keeps; only its hash is kept here).
// A code works once and before it expires: ErrUsed, ErrExpired, or
// ErrUnknown for a code no invite has.
func (s *Store) Redeem(code, userAgent string) (Entry, string, error) {
	now := time.Now().UTC()
	h := hash(code)
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.entries, func(e entry) bool { return e.CodeHash == h })
	if i < 0 {
		return Entry{}, "", ErrUnknown
	}
	e := s.entries[i]
	switch e.State(now) {
	case StateSignedIn:
		return Entry{}, "", fmt.Errorf("%w (by a browser at %s)", ErrUsed, e.Redeemed.Format(time.RFC3339))
	case StateExpired:
		return Entry{}, "", fmt.Errorf("%w at %s", ErrExpired, e.Expires.Format(time.RFC3339))
	}
	if len(userAgent) > maxUserAgent {
		userAgent = userAgent[:maxUserAgent]
	}
	secret := random(32)
	e.Redeemed, e.LastUsed, e.UserAgent, e.SecretHash = now, now, userAgent, hash(secret)
	next := slices.Clone(s.entries)
	next[i] = e
	if err := s.save(next); err != nil {
		return Entry{}, "", err
	}
	return e.Entry, secret, nil
}

// Session returns the entry of the session whose secret this is, and
// notes its use; false for no session (never one, or revoked).
func (s *Store) Session(secret string) (Entry, bool) {
	if secret == "" {
		return Entry{}, false
	}
	h := hash(secret)
	now := time.Now().UTC()
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.entries, func(e entry) bool { return e.SecretHash == h })
	if i < 0 {
		return Entry{}, false
	}
	s.entries[i].LastUsed = now
	if now.Sub(s.written[s.entries[i].ID]) > LastUsedResolution {
		// The last use is worth a write now and then, not one a request;
		// a failed write is tried again at the next use.
		_ = s.save(s.entries)
	}
	return s.entries[i].Entry, true
}

// List returns every invite and session, oldest first.
func (s *Store) List() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Entry, len(s.entries))
	for i, e := range s.entries {
		out[i] = e.Entry
	}
	return out
}

// Revoke forgets the invite or session id: its code stops working, and
// so does its session's secret, at once. ErrUnknown when there is none.
func (s *Store) Revoke(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := slices.DeleteFunc(slices.Clone(s.entries), func(e entry) bool { return e.ID == id })
	if len(next) == len(s.entries) {
		return fmt.Errorf("%w: %q", ErrUnknown, id)
	}
	return s.save(next)
}

// RevokeAll forgets every invite and session, and returns their IDs.
func (s *Store) RevokeAll() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, len(s.entries))
	for i, e := range s.entries {
		ids[i] = e.ID
	}
	if err := s.save(nil); err != nil {
		return nil, err
	}
	return ids, nil
}

// live is a copy of the entries without the unused invites that expired
// more than forgetAfter ago. Called with mu held.
func (s *Store) live(now time.Time) []entry {
	return slices.DeleteFunc(slices.Clone(s.entries), func(e entry) bool {
		return e.Redeemed.IsZero() && now.Sub(e.Expires) > forgetAfter
	})
}

// save writes entries to the file (a temporary file renamed over it,
// mode 0600) and, once written, makes them the store's. Called with mu
// held.
func (s *Store) save(entries []entry) error {
	if entries == nil {
		entries = []entry{}
	}
	b, err := json.MarshalIndent(file{Version: 1, Name: s.name, Entries: entries}, "", "  ")
	if err != nil {
		return fmt.Errorf("invites: %w", err)
	}
	if err := writeFile(s.path, append(b, '\n')); err != nil {
		return fmt.Errorf("invites: %w", err)
	}
	s.entries = entries
	clear(s.written)
	for _, e := range entries {
		s.written[e.ID] = e.LastUsed
	}
	return nil
}

// writeFile replaces path with b whole (never seen half written), mode
// 0600.
func writeFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// random is n random bytes, as URL-safe base64 for a secret of 32 bytes
// and as hex for a short ID.
func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	if n >= 16 {
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return hex.EncodeToString(b)
}

// hash is the hex SHA-256 of a code or secret, as the file keeps it.
func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
