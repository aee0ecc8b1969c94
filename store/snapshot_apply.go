package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/metamesh/node/protocol"
)

// applyNew writes snapshot root r through the lifecycle operations: its
// paths (Ingest when hashed, else Arrive), the household's fields
// (SetFields), the members it supplied (AddAlias), then each peer's
// record (MergeRecord). A path the store gives another root is left
// there, or with takePaths (replace) taken from it. Returns the root
// that holds r after.
func (s *Store) applyNew(ctx context.Context, r SnapshotRoot, takePaths bool) (RootID, error) {
	var root RootID
	if r.Local() {
		var err error
		if root, err = s.applyPaths(ctx, "", r, takePaths); err != nil {
			return "", err
		}
	}
	if root != "" {
		if err := s.applyHousehold(ctx, root, ownFields(r), suppliedMembers(r), r.Edited); err != nil {
			return "", err
		}
	}
	got, err := s.applyPeers(ctx, root, r, r.Peers)
	if err != nil {
		return "", err
	}
	if root == "" {
		root = got
	}
	return root, nil
}

// applyPaths ingests r's paths the store does not know (the primary
// first) and returns the root they joined; into is the root they are
// expected to join ("" for a new one).
func (s *Store) applyPaths(ctx context.Context, into RootID, r SnapshotRoot, takePaths bool) (RootID, error) {
	paths := slices.Clone(r.Paths)
	sort.SliceStable(paths, func(i, j int) bool { return paths[i].Primary && !paths[j].Primary })
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = p.Path
	}
	known, err := s.Paths(ctx, names)
	if err != nil {
		return "", err
	}
	root := into
	for _, p := range paths {
		if st, ok := known[p.Path]; ok {
			if st.Root == root || !takePaths {
				continue
			}
			if _, err := s.RemovePath(ctx, p.Path); err != nil {
				return "", err
			}
		}
		f := FileStat{Path: p.Path, Size: p.Size, MtimeNs: p.MtimeNs, Link: p.Link}
		var o Outcome
		if p.Hashed && r.Own.SHA256 != "" {
			o, _, err = s.Ingest(ctx, f, Hashes{Midhash: p.Mid, SHA256: r.Own.SHA256, IPFS: r.Own.IPFS}, Meta{})
		} else {
			o, err = s.Arrive(ctx, f, p.Mid)
		}
		if err != nil {
			return "", err
		}
		if root == "" && o.Root != "" {
			root = o.Root
		}
	}
	return root, nil
}

// applyHousehold writes the household's fields and supplied members to
// root; an alias another root holds stays with it (the member is still
// recorded).
func (s *Store) applyHousehold(ctx context.Context, root RootID, fields map[string]string, supplied, edited []string) error {
	if _, err := s.SetFields(ctx, root, fields); err != nil {
		return err
	}
	// The household's edits it wrote stay edits (edited:<root>; what the
	// extractors gave is not in a snapshot: the next extraction keeps it
	// aside again).
	var marks []any
	for _, f := range edited {
		if _, ok := fields[f]; ok {
			marks = append(marks, f)
		}
	}
	if len(marks) > 0 {
		err := s.rdb.SAdd(ctx, "edited:"+string(root), marks...).Err()
		s.cache.wrote()
		if err != nil {
			return fmt.Errorf("store: %w", err)
		}
	}
	for _, c := range supplied {
		if err := s.AddAlias(ctx, root, c); err != nil && !errors.Is(err, ErrAliasConflict) {
			return err
		}
	}
	return nil
}

// applyPeers merges each of peers' records of r: the members r learned
// from the peer and its origin/<peer>/… fields. Once r has a root, each
// record carries r's anchor too (a strong member the root holds), so it
// joins that root as the peer's original record did: a local root's own
// sha2-256, which it vouches for already, or for a root known only from
// peers its best strong member. Returns the root r went to.
func (s *Store) applyPeers(ctx context.Context, root RootID, r SnapshotRoot, peers []string) (RootID, error) {
	// Peers whose members hold a strong digest first: they mint or find
	// the root the others join.
	peers = slices.Clone(peers)
	sort.SliceStable(peers, func(i, j int) bool {
		return hasStrong(learnedFrom(r, peers[i])) && !hasStrong(learnedFrom(r, peers[j]))
	})
	for _, p := range peers {
		cids := learnedFrom(r, p)
		if a := anchor(r); root != "" && a != "" && !slices.Contains(cids, a) {
			cids = append(cids, a)
		}
		if len(cids) == 0 {
			continue
		}
		res, err := s.MergeRecord(ctx, p, cids, claimsOf(r, p))
		if err != nil {
			return "", err
		}
		if root == "" {
			root = res.Root
		}
	}
	return root, nil
}

// learnedFrom are the members of r that peer p sent.
func learnedFrom(r SnapshotRoot, p string) []string {
	var out []string
	for _, c := range r.CIDs {
		if slices.Contains(r.Learned[c], p) {
			out = append(out, c)
		}
	}
	return out
}

func hasStrong(cids []string) bool {
	return slices.ContainsFunc(cids, func(c string) bool { return protocol.Rank(c) >= protocol.StrongRank })
}

// anchor is a strong member of r that joins a peer's record to it: its
// own confirmed digest for a local root, else its best strong member.
func anchor(r SnapshotRoot) string {
	if r.Own != nil && r.Own.SHA256 != "" {
		return r.Own.SHA256
	}
	var strong []string
	for _, c := range r.CIDs {
		if protocol.Rank(c) >= protocol.StrongRank {
			strong = append(strong, c)
		}
	}
	return protocol.Canonical(strong)
}

// claimsOf are peer p's fields of r (origin/<p>/<field>), by field.
func claimsOf(r SnapshotRoot, p string) map[string]string {
	out := make(map[string]string)
	prefix := OriginPrefix + "/" + p + "/"
	for f, v := range r.Fields {
		if name, ok := strings.CutPrefix(f, prefix); ok {
			out[name] = v
		}
	}
	return out
}

// lack is what the store's root lacks of a snapshot root (merge).
type lack struct {
	fields   map[string]string
	supplied []string
	paths    bool
	peers    []string
}

func (l lack) empty() bool {
	return len(l.fields) == 0 && len(l.supplied) == 0 && !l.paths && len(l.peers) == 0
}

// lacking compares the store's root cur with the snapshot's r.
func (s *Store) lacking(ctx context.Context, cur, r SnapshotRoot) (lack, error) {
	var l lack
	l.fields = make(map[string]string)
	for f, v := range ownFields(r) {
		if _, ok := cur.Fields[f]; !ok {
			l.fields[f] = v
		}
	}
	for _, c := range suppliedMembers(r) {
		if !slices.Contains(cur.CIDs, c) {
			l.supplied = append(l.supplied, c)
		}
	}
	if len(r.Paths) > 0 {
		names := make([]string, len(r.Paths))
		for i, p := range r.Paths {
			names[i] = p.Path
		}
		known, err := s.Paths(ctx, names)
		if err != nil {
			return l, err
		}
		l.paths = len(known) < len(names)
	}
	for _, p := range r.Peers {
		if peerLacking(cur, r, p) {
			l.peers = append(l.peers, p)
		}
	}
	return l, nil
}

// peerLacking reports whether cur lacks any of what peer p said of r.
func peerLacking(cur, r SnapshotRoot, p string) bool {
	if !slices.Contains(cur.Peers, p) {
		return true
	}
	for f := range claimsOf(r, p) {
		if _, ok := cur.Fields[OriginPrefix+"/"+p+"/"+f]; !ok {
			return true
		}
	}
	for _, c := range learnedFrom(r, p) {
		if !slices.Contains(cur.CIDs, c) {
			return true
		}
	}
	return false
}

// applyLacking writes to root what it lacks of r.
func (s *Store) applyLacking(ctx context.Context, root RootID, r SnapshotRoot, l lack) error {
	if l.paths && r.Own != nil {
		if _, err := s.applyPaths(ctx, root, r, false); err != nil {
			return err
		}
	}
	if err := s.applyHousehold(ctx, root, l.fields, l.supplied, r.Edited); err != nil {
		return fmt.Errorf("root %s: %w", root, err)
	}
	_, err := s.applyPeers(ctx, root, r, l.peers)
	return err
}

// removeOthers deletes (or counts) the roots of the store not in kept.
func (s *Store) removeOthers(ctx context.Context, kept map[RootID]bool, dryRun bool, rep *ImportReport) error {
	var cursor uint64
	gone := make(map[RootID]bool)
	for {
		ids, next, err := s.rdb.SScan(ctx, keyIndex, cursor, "", snapshotScan).Result()
		if err != nil {
			return fmt.Errorf("store: %w", err)
		}
		for _, id := range ids {
			r := RootID(id)
			if kept[r] || gone[r] {
				continue
			}
			gone[r] = true
			rep.Removed++
			if dryRun {
				continue
			}
			if err := s.DeleteRoot(ctx, r); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}
