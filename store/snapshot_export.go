package store

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// ExportOptions say what ExportSnapshot writes.
type ExportOptions struct {
	// Peer is the exporting node's peer ID, for the header.
	Peer string
	// LocalOnly leaves peers' records out: roots known only from peers,
	// origin/<peer>/… fields, members learned from peers, peers:<root>.
	LocalOnly bool
}

// snapshotScan is the SSCAN COUNT of an export's pass over file:__index__.
const snapshotScan = 500

// ExportSnapshot writes the store's roots to w as a snapshot
// (snapshot.go), reading file:__index__ by SSCAN in batches of about
// 500 roots, each batch in a few round trips (ReadChanged's pipeline of
// documents and own digests, then the states of their paths): memory
// holds one batch and the set of root IDs written (SSCAN may return a
// root twice). A root deleted while the export runs is left out.
// Returns the number of roots written.
func (s *Store) ExportSnapshot(ctx context.Context, w io.Writer, opts ExportOptions) (int, error) {
	members, err := s.Members(ctx)
	if err != nil {
		return 0, err
	}
	sw, err := newSnapshotWriter(w, SnapshotHeader{Created: time.Now().UTC().Format(time.RFC3339Nano), Peer: opts.Peer, LocalOnly: opts.LocalOnly, Members: members})
	if err != nil {
		return 0, err
	}
	seen := make(map[RootID]struct{})
	var cursor uint64
	for {
		ids, next, err := s.rdb.SScan(ctx, keyIndex, cursor, "", snapshotScan).Result()
		if err != nil {
			return sw.roots, fmt.Errorf("store: export: %w", err)
		}
		var batch []RootID
		for _, id := range ids {
			if _, dup := seen[RootID(id)]; !dup {
				seen[RootID(id)] = struct{}{}
				batch = append(batch, RootID(id))
			}
		}
		lines, err := s.snapshotRoots(ctx, batch, opts.LocalOnly)
		if err != nil {
			return sw.roots, err
		}
		if err := s.addWatch(ctx, members, lines); err != nil {
			return sw.roots, err
		}
		for _, sr := range lines {
			if err := sw.root(sr); err != nil {
				return sw.roots, err
			}
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	return sw.roots, sw.close()
}

// addWatch gives lines the members' watch state of their roots.
func (s *Store) addWatch(ctx context.Context, members []string, lines []SnapshotRoot) error {
	roots := make([]RootID, len(lines))
	for i, l := range lines {
		roots[i] = l.Root
	}
	watch, err := s.watchOf(ctx, members, roots)
	if err != nil {
		return err
	}
	for i := range lines {
		lines[i].Watch = watch[lines[i].Root]
	}
	return nil
}

// snapshotRoots reads roots as snapshot lines, leaving out those gone
// meanwhile and, with localOnly, those known only from peers.
func (s *Store) snapshotRoots(ctx context.Context, roots []RootID, localOnly bool) ([]SnapshotRoot, error) {
	changed, err := s.ReadChanged(ctx, roots)
	if err != nil {
		return nil, err
	}
	out := make([]SnapshotRoot, 0, len(changed))
	var paths []string
	for _, c := range changed {
		d := c.Document
		if !c.Exists || (localOnly && !d.Local()) {
			continue
		}
		sr := SnapshotRoot{Root: c.Root, Fields: d.Fields, CIDs: d.CIDs, Learned: d.Learned, Peers: d.Peers, Edited: d.Edited}
		if d.Local() && c.Own.Midhash != "" {
			sr.Own = &SnapshotOwn{Mid: c.Own.Midhash, SHA256: c.Own.SHA256, IPFS: c.Own.IPFS}
			dups := d.Duplicates
			if d.DuplicateCount > int64(len(dups)) {
				if dups, err = s.rdb.SMembers(ctx, fieldKey(d.Root, "duplicates")).Result(); err != nil {
					return nil, fmt.Errorf("store: %w", err)
				}
			}
			for _, p := range append([]string{d.FilePath()}, dups...) {
				sr.Paths = append(sr.Paths, SnapshotPath{Path: p})
			}
			paths = append(paths, d.FilePath())
			paths = append(paths, dups...)
		}
		out = append(out, sr)
	}
	states, err := s.Paths(ctx, paths)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Paths = pathsOf(out[i].Root, out[i].Paths, states)
		if localOnly {
			out[i] = withoutPeers(out[i])
		}
	}
	return out, nil
}

// snapshotRoot is one root as a snapshot line; ok is false for a root
// gone meanwhile.
func (s *Store) snapshotRoot(ctx context.Context, r RootID) (SnapshotRoot, bool, error) {
	out, err := s.snapshotRoots(ctx, []RootID{r}, false)
	if err != nil || len(out) == 0 {
		return SnapshotRoot{}, false, err
	}
	return out[0], true, nil
}

// pathsOf are the states of the paths the root holds in the path index,
// sorted (a path that left the root meanwhile is left out).
func pathsOf(r RootID, paths []SnapshotPath, states map[string]PathState) []SnapshotPath {
	var out []SnapshotPath
	for _, p := range paths {
		st, ok := states[p.Path]
		if !ok || st.Root != r {
			continue
		}
		out = append(out, SnapshotPath{Path: p.Path, Primary: st.Primary, Size: st.Size, MtimeNs: st.MtimeNs,
			Mid: st.Midhash, Hashed: st.Hashed, Link: st.Link})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// withoutPeers is r without what peers said of it.
func withoutPeers(r SnapshotRoot) SnapshotRoot {
	fields := make(map[string]string, len(r.Fields))
	for f, v := range r.Fields {
		if !strings.HasPrefix(f, OriginPrefix+"/") {
			fields[f] = v
		}
	}
	var cids []string
	for _, c := range r.CIDs {
		if _, learned := r.Learned[c]; !learned {
			cids = append(cids, c)
		}
	}
	r.Fields, r.CIDs, r.Learned, r.Peers = fields, cids, nil, nil
	return r
}
