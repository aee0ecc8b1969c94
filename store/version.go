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
//   - 3: the path is stored once, as one member of path:__index__ holding
//     its state (path:<path> hashes are gone); no search postings (tk:,
//     the //<token> entries of fields:<root>): the search index is on
//     disk; members peers supplied before learned: existed are recorded
//     as learned (docs/schema.md).
const Layout = 3

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

// The entries of fields:<root> (lua/common.lua): a field name as itself
// (→ ""), or as its code when it has one (fieldCodes); a key-set member
// cids/<cid> as /<cid> (→ which of the root's own digests it is: letters
// of "msi").

// fieldCodes are the field names the node writes for most files, each
// listed in fields:<root> as a code of two bytes: "/" and the byte of its
// position, 1 to 31 (below 0x20, which begins no CID). They are part of
// layout 3: a code never changes meaning within a layout.
var fieldCodes = [31]string{
	"filePath", "sizeByte", "mtime", "fileType", "mimeType", "videoType",
	"titles/eng", "originalTitle", "movieYear", "season", "episode", "episodeTitle",
	"release/resolution", "release/source", "release/videoCodec", "release/audioCodec", "release/group",
	"fileinfo/duration", "fileinfo/formatName",
	"fileinfo/streamdetails/video/0/codec", "fileinfo/streamdetails/video/0/width", "fileinfo/streamdetails/video/0/height",
	"fileinfo/streamdetails/audio/0/codec", "fileinfo/streamdetails/audio/0/language", "fileinfo/streamdetails/audio/0/channels",
	"plot/eng", "genre/0", "rating", "imdbid", "tmdbid", "releasedate",
}

// fieldCode maps a coded name to its entry.
var fieldCode = func() map[string]string {
	m := make(map[string]string, len(fieldCodes))
	for i, f := range fieldCodes {
		m[f] = "/" + string(rune(i+1))
	}
	return m
}()

// codedField is the name entry e codes, if it is a code.
func codedField(e string) (string, bool) {
	if len(e) != 2 || e[0] != '/' || e[1] == 0 || int(e[1]) > len(fieldCodes) {
		return "", false
	}
	return fieldCodes[e[1]-1], true
}

// memberOfEntry is the CID of a key-set member's entry e; false for a
// field's.
func memberOfEntry(e string) (string, bool) {
	if _, coded := codedField(e); coded {
		return "", false
	}
	return strings.CutPrefix(e, "/")
}

// luaFieldCodes writes fieldCodes as the Lua tables FLCODE (name → entry)
// and FLNAME (entry → name) that lua/common.lua reads.
func luaFieldCodes() string {
	var b strings.Builder
	b.WriteString("local FLCODE, FLNAME = {}, {}\nfor i, f in ipairs({")
	for i, f := range fieldCodes {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(f))
	}
	b.WriteString("}) do\n  FLCODE[f] = '/' .. string.char(i)\n  FLNAME['/' .. string.char(i)] = f\nend\n")
	return b.String()
}

// fieldEntry is the entry of field name f.
func fieldEntry(f string) string {
	if e, ok := fieldCode[f]; ok {
		return e
	}
	if c, ok := strings.CutPrefix(f, "cids/"); ok {
		return "/" + c
	}
	return f
}

// entryField is the field name of entry e.
func entryField(e string) string {
	if f, ok := codedField(e); ok {
		return f
	}
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
	for i, e := range es {
		es[i] = entryField(e)
	}
	return es, nil
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
		c, ok := memberOfEntry(e)
		if !ok {
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
