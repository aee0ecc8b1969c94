package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Layout is the version of the Redis layout this binary writes: the node's
// own keys and their encodings (doc.go). The seeds' keys (file:<root>/…,
// cid:<cid>, file:__index__) are the same in every layout.
//
//   - 1: the layout before versions were recorded (no meta:layout key).
//   - 2: fields:<root> is a HASH (small ones stay a listpack) that also holds
//     the root's own digests and search tokens (own:<root> and toks:<root>
//     are gone); the search postings are listpack HASHes, split into
//     buckets as they grow (tk:, in place of the tok: sorted sets); the
//     inode index lists only inodes that may have another known name.
const Layout = 2

// keyLayout holds the layout version of the store, a decimal STRING.
// Absent on an empty database (Open writes it) and on a layout-1 store
// (Open upgrades it, then writes it).
const keyLayout = "meta:layout"

// keyUpgrade records an upgrade under way: HASH to (the layout being
// written) and cursor (where its SCAN resumes). Open resumes from it
// after a crash.
const keyUpgrade = "meta:upgrade"

// ErrLayoutNewer means the store was written by a newer binary, in a
// layout this one cannot read. Nothing is changed.
var ErrLayoutNewer = errors.New("store layout is newer than this binary's")

// ErrLayoutUnknown means meta:layout holds something that is no layout
// version.
var ErrLayoutUnknown = errors.New("store layout version unreadable")

// LayoutVersion reads the store's layout version: Layout once Open has
// run (0 for an empty database nothing has opened yet, 1 for a store
// written before versions were recorded).
func (s *Store) LayoutVersion(ctx context.Context) (int, error) {
	return readLayout(ctx, s.rdb)
}

func readLayout(ctx context.Context, rdb *redis.Client) (int, error) {
	v, err := rdb.Get(ctx, keyLayout).Result()
	if errors.Is(err, redis.Nil) {
		n, err := rdb.DBSize(ctx).Result()
		if err != nil {
			return 0, fmt.Errorf("store: read layout: %w", err)
		}
		if n == 0 {
			return 0, nil
		}
		return 1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: read layout: %w", err)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("store: %s is %q: %w", keyLayout, v, ErrLayoutUnknown)
	}
	return n, nil
}

// ensureLayout brings the store to Layout before anything else reads it:
// an empty database is stamped, an older layout upgraded in place
// (upgrade.go), a newer one refused.
func (s *Store) ensureLayout(ctx context.Context) error {
	v, err := readLayout(ctx, s.rdb)
	if err != nil {
		return err
	}
	switch {
	case v > Layout:
		return fmt.Errorf("store: layout %d, this binary reads layout %d: %w (run the newer metamesh, or a fresh data directory)", v, Layout, ErrLayoutNewer)
	case v == Layout:
		return nil
	case v == 0:
		// An empty database: nothing to upgrade. SETNX, so a concurrent
		// Open that already wrote something is not mistaken for empty.
		return s.rdb.SetNX(ctx, keyLayout, strconv.Itoa(Layout), 0).Err()
	}
	return s.upgrade(ctx, v)
}

// The entries of fields:<root> in layout 2 (lua/common.lua): a field name
// as itself (→ ""), a key-set member cids/<cid> as /<cid> (→ which of the
// root's own digests it is: letters of "msi"), a search token t as //t
// (→ its weight).

// tokenEntry reports whether entry e is a search token's.
func tokenEntry(e string) bool { return strings.HasPrefix(e, "//") }

// fieldEntry is the entry of field name f.
func fieldEntry(f string) string {
	if c, ok := strings.CutPrefix(f, "cids/"); ok {
		return "/" + c
	}
	return f
}

// entryField is the field name of entry e.
func entryField(e string) string {
	if c, ok := strings.CutPrefix(e, "/"); ok {
		return "cids/" + c
	}
	return e
}

// fieldNames lists root r's field names (cids/<cid> members included).
func (s *Store) fieldNames(ctx context.Context, r RootID) ([]string, error) {
	es, err := s.rdb.HKeys(ctx, fieldsKey(r)).Result()
	if err != nil {
		return nil, err
	}
	out := es[:0]
	for _, e := range es {
		if !tokenEntry(e) {
			out = append(out, entryField(e))
		}
	}
	return out, nil
}

// ownDigests reads root r's own digests: "mid", "sha", "ipfs" → CID,
// those present only (fsck compares them role by role).
func (s *Store) ownDigests(ctx context.Context, r RootID) (map[string]string, error) {
	h, err := s.Own(ctx, r)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, c := range map[string]string{"mid": h.Midhash, "sha": h.SHA256, "ipfs": h.IPFS} {
		if c != "" {
			out[k] = c
		}
	}
	return out, nil
}

// digestsOf reads the digests of a root's own bytes from its fields:
// hash (the key-set entries /<cid> with their roles m, s, i).
func digestsOf(kv map[string]string) Hashes {
	var h Hashes
	for e, roles := range kv {
		c, ok := strings.CutPrefix(e, "/")
		if !ok || tokenEntry(e) {
			continue
		}
		for _, l := range roles {
			switch l {
			case 'm':
				h.Midhash = c
			case 's':
				h.SHA256 = c
			case 'i':
				h.IPFS = c
			}
		}
	}
	return h
}
