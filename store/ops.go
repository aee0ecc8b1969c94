package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/protocol"
)

// FileStat is what the store keeps of a local path: size in bytes and
// mtime in Unix nanoseconds.
type FileStat struct {
	Path    string
	Size    int64
	MtimeNs int64
	// Dev and Ino identify the file (its hard links share them); zero
	// when unknown.
	Dev, Ino uint64
	// Link is true when Path is a symbolic link to the file: a real file
	// is preferred as a root's primary path.
	Link bool
	// Nlink is the file's number of hard links, 0 when unknown. A file
	// with one (not reached through a symbolic link) is left out of the
	// inode index (PathsOfInode): no other name can share its inode.
	Nlink uint64
}

// Hashes are the CIDs of one full pass over a file, in canonical form.
type Hashes struct {
	Midhash string // midhash256
	SHA256  string // sha2-256, raw codec
	IPFS    string // UnixFS CID; equals SHA256 for a single-chunk file
}

// Canonical is the CID a file of these digests is announced by, and how
// ingest names it: the best-ranked (protocol.Canonical) of its full-pass
// digests, SHA256 and IPFS; "" before its full pass (midhash only). It is
// the one place that choice is made. (A document's canonical_cid is
// elected over the members the node vouches for: Document.CanonicalCID.)
func (h Hashes) Canonical() string {
	var full []string
	for _, c := range []string{h.SHA256, h.IPFS} {
		if c != "" {
			full = append(full, c)
		}
	}
	if len(full) == 0 {
		return ""
	}
	return protocol.Canonical(full)
}

// Kind names what a lifecycle operation did.
type Kind string

// Outcomes of lifecycle operations.
const (
	KindMinted    Kind = "minted"    // a new root was created
	KindDuplicate Kind = "duplicate" // the path joined a root as a duplicate
	KindExists    Kind = "exists"    // the path (or alias) was already known
	KindConfirmed Kind = "confirmed" // the full pass matched the root
	KindMerged    Kind = "merged"    // the root was folded into one sharing a strong digest
	KindSplit     Kind = "split"     // a midhash collision: the path left for its own root
	KindUnknown   Kind = "unknown"   // a duplicate's root has no confirmed sha2-256 yet
	KindStale     Kind = "stale"     // the file changed since it was stat'ed
	KindGone      Kind = "gone"      // the path or root is not in the store
	KindSame      Kind = "same"      // a change kept the content
	KindRemoved   Kind = "removed"   // a duplicate left its root
	KindPromoted  Kind = "promoted"  // a duplicate became the primary path
	KindDeleted   Kind = "deleted"   // the root was deleted with every alias
	KindRenamed   Kind = "renamed"
	KindAdded     Kind = "added"
	KindConflict  Kind = "conflict"
	KindKept      Kind = "kept"
)

// Outcome is the result of a lifecycle operation.
type Outcome struct {
	Kind Kind
	Root RootID
	// Path is the promoted duplicate for KindPromoted.
	Path string
	// State is the path's state for Arrive's KindExists: what Path would
	// read, in the same round trip.
	State PathState
}

// Arrive records a newly seen local path with its midhash. If a root
// already holds the midhash the path joins its duplicates (pending
// confirmation by sha2-256), else a root is minted with the midhash as its
// first alias. Both emit an "add" event. A path already known returns
// KindExists with the path's state (Outcome.State) and changes nothing. Two concurrent arrivals of the same
// content always end as one root plus one duplicate.
func (s *Store) Arrive(ctx context.Context, f FileStat, midhash string) (Outcome, error) {
	if err := checkCID(midhash, 0); err != nil {
		return Outcome{}, err
	}
	return luaArrive.run(ctx, s, arriveArgs{newRoot: NewRootID(), file: f, midhash: midhash})
}

// Confirm applies a full hash pass of a path already recorded by Arrive.
// See the Kind values for what it can do. KindStale means the path's size,
// mtime or midhash in the store differ from f and h: the caller should
// treat the file as changed. KindUnknown means the path is a duplicate whose
// root's primary has not been confirmed yet: confirm the primary first.
func (s *Store) Confirm(ctx context.Context, f FileStat, h Hashes) (Outcome, error) {
	if err := checkHashes(h); err != nil {
		return Outcome{}, err
	}
	return luaConfirm.run(ctx, s, confirmArgs{file: f, hashes: h, splitRoot: NewRootID(), leaveRoot: NewRootID()})
}

// Change applies a changed local file (size or mtime differ) after a full
// hash pass. Unchanged content only updates size and mtime (KindSame);
// new content moves the path to the root that content belongs to (minting
// one when needed) and drops the old root if it became empty. Emits
// "change". m, unless it is the zero Meta, is written as SetExtracted
// writes it when the path ends up its root's primary, in the same round
// trip.
func (s *Store) Change(ctx context.Context, f FileStat, h Hashes, m Meta) (Outcome, error) {
	if err := checkHashes(h); err != nil {
		return Outcome{}, err
	}
	a := changeArgs{file: f, hashes: h, arriveRoot: NewRootID(), splitRoot: NewRootID(), leaveRoot: NewRootID()}
	if m.Version != 0 || len(m.Fields) > 0 || len(m.Owned) > 0 {
		meta, err := m.check()
		if err != nil {
			return Outcome{}, err
		}
		a.meta, a.withMeta = meta, true
	}
	return luaChange.run(ctx, s, a)
}

// RemovePath handles a deleted local path: a duplicate is removed, a
// primary is replaced by a duplicate (KindPromoted), or the root is
// deleted with every alias (KindDeleted). Emits "delete".
func (s *Store) RemovePath(ctx context.Context, path string) (Outcome, error) {
	return luaRemove.run(ctx, s, removeArgs{path: path, event: EventDelete})
}

// Replace is Rename onto a path that may be known (an atomic replace,
// "mv new.tmp file"): the target's previous root lets go of it (a
// duplicate is promoted or the root is deleted) and oldPath's root takes
// its place, all in one step with one "rename" event.
func (s *Store) Replace(ctx context.Context, oldPath, newPath string) (Outcome, error) {
	return s.rename(ctx, oldPath, newPath, true)
}

// rename moves a local path, keeping its root, and emits "rename" with
// oldPath. Without replace, renaming onto a known path returns
// ErrPathExists.
func (s *Store) rename(ctx context.Context, oldPath, newPath string, replace bool) (Outcome, error) {
	o, err := luaRename.run(ctx, s, renameArgs{oldPath: oldPath, newPath: newPath, replace: replace})
	if err == nil && o.Kind == KindExists {
		return o, fmt.Errorf("store: rename %q to %q: %w", oldPath, newPath, ErrPathExists)
	}
	return o, err
}

// Mint creates a root for a local path with no aliases yet and returns
// it. A path that is already known returns its root and ErrPathExists.
func (s *Store) Mint(ctx context.Context, f FileStat) (RootID, error) {
	o, err := luaMint.run(ctx, s, mintArgs{root: NewRootID(), file: f})
	if err != nil {
		return "", err
	}
	if o.Kind == KindExists {
		return o.Root, fmt.Errorf("store: mint %q: %w", f.Path, ErrPathExists)
	}
	return o.Root, nil
}

// AddAlias makes cid resolve to root. It never repoints an alias another
// root holds: then the key-set member is still recorded and the error
// wraps ErrAliasConflict. Adding an alias twice writes nothing.
func (s *Store) AddAlias(ctx context.Context, root RootID, cid string) error {
	if err := checkCID(cid, 0); err != nil {
		return err
	}
	o, err := luaAddAlias.run(ctx, s, addAliasArgs{root: root, cid: cid})
	switch {
	case err != nil:
		return err
	case o.Kind == KindGone:
		return fmt.Errorf("store: root %s: %w", root, ErrNotFound)
	case o.Kind == KindConflict:
		return &AliasConflictError{CID: cid, Holder: o.Root}
	}
	return nil
}

// AliasConflictError says which root holds an alias. It wraps
// ErrAliasConflict.
type AliasConflictError struct {
	CID    string
	Holder RootID
}

func (e *AliasConflictError) Error() string {
	return fmt.Sprintf("store: alias %s: %v", e.CID, ErrAliasConflict)
}

// Unwrap returns ErrAliasConflict.
func (e *AliasConflictError) Unwrap() error { return ErrAliasConflict }

// RootIDs lists every root in file:__index__ (O(roots): for sweeps and
// fsck, never a request path).
func (s *Store) RootIDs(ctx context.Context) ([]RootID, error) {
	v, err := s.rdb.SMembers(ctx, keyIndex).Result()
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	out := make([]RootID, len(v))
	for i, r := range v {
		out[i] = RootID(r)
	}
	return out, nil
}

// GetByCID resolves a CID (canonical form) to its root in O(1).
func (s *Store) GetByCID(ctx context.Context, cid string) (RootID, error) {
	v, err := s.rdb.Get(ctx, cidKey(cid)).Result()
	if errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("store: cid %s: %w", cid, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("store: %w", err)
	}
	return RootID(v), nil
}

// DeleteRoot removes a root: every cid:* alias it holds (an alias another
// root also has in its key-set passes to that root), every file:<root>/*
// key, its path-index entries and its index membership.
func (s *Store) DeleteRoot(ctx context.Context, root RootID) error {
	o, err := luaDeleteRoot.run(ctx, s, deleteRootArgs{root: root})
	if err == nil && o.Kind == KindGone {
		return fmt.Errorf("store: root %s: %w", root, ErrNotFound)
	}
	return err
}

// checkCID demands the canonical string form and at least minRank.
func checkCID(c string, minRank int) error {
	if _, err := protocol.ParseStrict(c); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if r := protocol.Rank(c); r < minRank {
		return fmt.Errorf("store: %s has rank %d: %w", c, r, ErrWeakLink)
	}
	return nil
}

func checkHashes(h Hashes) error {
	if err := checkCID(h.Midhash, 0); err != nil {
		return err
	}
	if err := checkCID(h.SHA256, protocol.StrongRank); err != nil {
		return err
	}
	return checkCID(h.IPFS, protocol.StrongRank)
}

// Own returns the digests the node computed from root's own bytes
// (fields:<root>'s =mid, =sha, =ipfs): the midhash, and once the bytes
// are confirmed the sha2-256 and IPFS CIDs; empty for a root known only
// from peers.
func (s *Store) Own(ctx context.Context, root RootID) (Hashes, error) {
	kv, err := s.rdb.HGetAll(ctx, fieldsKey(root)).Result()
	if err != nil {
		return Hashes{}, fmt.Errorf("store: %w", err)
	}
	return digestsOf(kv), nil
}

// Announced returns the CID the node announces for root: the Canonical
// of the digests of its own confirmed bytes (Own), never a member
// supplied by peers or other writers. "" when the root's bytes are not
// confirmed yet (midhash only), or the root is known only from peers.
func (s *Store) Announced(ctx context.Context, root RootID) (string, error) {
	h, err := s.Own(ctx, root)
	if err != nil {
		return "", err
	}
	return h.Canonical(), nil
}

// announcedBatch bounds the roots AnnouncedMany reads in one round trip.
const announcedBatch = 1000

// AnnouncedMany is Announced for many roots, a thousand per round trip
// (one pipeline); a root gone meanwhile announces "".
func (s *Store) AnnouncedMany(ctx context.Context, roots []RootID) (map[RootID]string, error) {
	out := make(map[RootID]string, len(roots))
	for start := 0; start < len(roots); start += announcedBatch {
		part := roots[start:min(len(roots), start+announcedBatch)]
		cmds := make([]*redis.MapStringStringCmd, len(part))
		if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, r := range part {
				cmds[i] = p.HGetAll(ctx, fieldsKey(r))
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		for i, r := range part {
			out[r] = digestsOf(cmds[i].Val()).Canonical()
		}
	}
	return out, nil
}

// MergeIfAliasExists: when cid (a strong digest, rank >= 30) already
// belongs to another root, newRoot is folded into it (its paths become
// that root's paths, its aliases and key-set move over) and that root is
// returned with merged = true. Otherwise cid becomes newRoot's alias, as
// a supplied member. One of the seeds' five operations (store/doc.go).
func (s *Store) MergeIfAliasExists(ctx context.Context, newRoot RootID, cid string) (RootID, bool, error) {
	if err := checkCID(cid, protocol.StrongRank); err != nil {
		return "", false, err
	}
	o, err := luaMergeIf.run(ctx, s, mergeIfArgs{root: newRoot, cid: cid})
	switch {
	case err != nil:
		return "", false, err
	case o.Kind == KindGone:
		return "", false, fmt.Errorf("store: root %s: %w", newRoot, ErrNotFound)
	}
	return o.Root, o.Kind == KindMerged, nil
}

// luaMergeIf is MergeIfAliasExists's script.
var luaMergeIf = newScript[mergeIfArgs](luaWrite, "mergeif.lua", "", decodeOutcome)

// mergeIfArgs: mergeif.lua.
type mergeIfArgs struct {
	root RootID
	cid  string
}

func (a mergeIfArgs) argv() []any { return []any{string(a.root), a.cid} }
