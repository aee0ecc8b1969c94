package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
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
// (snapshot.go), reading file:__index__ by SSCAN in batches and each
// root as it goes: memory holds one batch of roots and the set of root
// IDs written (SSCAN may return a root twice). A root deleted while the
// export runs is left out. Returns the number of roots written.
func (s *Store) ExportSnapshot(ctx context.Context, w io.Writer, opts ExportOptions) (int, error) {
	sw, err := newSnapshotWriter(w, SnapshotHeader{Created: time.Now().UTC().Format(time.RFC3339Nano), Peer: opts.Peer, LocalOnly: opts.LocalOnly})
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
		for _, id := range ids {
			r := RootID(id)
			if _, dup := seen[r]; dup {
				continue
			}
			seen[r] = struct{}{}
			sr, ok, err := s.snapshotRoot(ctx, r, opts.LocalOnly)
			if err != nil {
				return sw.roots, err
			}
			if !ok {
				continue
			}
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

// snapshotRoot reads one root as a snapshot line; ok is false for a root
// gone meanwhile, or one known only from peers with localOnly.
func (s *Store) snapshotRoot(ctx context.Context, r RootID, localOnly bool) (SnapshotRoot, bool, error) {
	d, err := s.Document(ctx, r)
	if errors.Is(err, ErrNotFound) {
		return SnapshotRoot{}, false, nil
	}
	if err != nil {
		return SnapshotRoot{}, false, err
	}
	if localOnly && !d.Local() {
		return SnapshotRoot{}, false, nil
	}
	sr := SnapshotRoot{Root: r, Fields: d.Fields, CIDs: d.CIDs, Learned: d.Learned, Peers: d.Peers}
	if d.Local() {
		if err := s.snapshotLocal(ctx, d, &sr); err != nil {
			return SnapshotRoot{}, false, err
		}
	}
	if localOnly {
		sr = withoutPeers(sr)
	}
	return sr, true, nil
}

// snapshotLocal adds a local root's own digests and paths (every
// duplicate, not only the MaxDuplicates a document lists).
func (s *Store) snapshotLocal(ctx context.Context, d Document, sr *SnapshotRoot) error {
	own, err := s.Own(ctx, d.Root)
	if err != nil {
		return err
	}
	if own.Midhash == "" {
		return nil // no digest of its own: nothing a path could be ingested with
	}
	sr.Own = &SnapshotOwn{Mid: own.Midhash, SHA256: own.SHA256, IPFS: own.IPFS}
	dups := d.Duplicates
	if d.DuplicateCount > int64(len(dups)) {
		dups, err = s.rdb.SMembers(ctx, fieldKey(d.Root, "duplicates")).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return fmt.Errorf("store: %w", err)
		}
	}
	paths := append([]string{d.FilePath()}, dups...)
	states, err := s.Paths(ctx, paths)
	if err != nil {
		return err
	}
	for _, p := range paths {
		st, ok := states[p]
		if !ok || st.Root != d.Root {
			continue
		}
		sr.Paths = append(sr.Paths, SnapshotPath{Path: p, Primary: st.Primary, Size: st.Size, MtimeNs: st.MtimeNs,
			Mid: st.Midhash, Hashed: st.Hashed, Link: st.Link})
	}
	sort.Slice(sr.Paths, func(i, j int) bool { return sr.Paths[i].Path < sr.Paths[j].Path })
	return nil
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
