package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/protocol"
)

// ImportMode says how ImportSnapshot treats what the store already holds.
type ImportMode string

// The import modes.
const (
	// ImportMerge adds what the store lacks and overwrites nothing.
	ImportMerge ImportMode = "merge"
	// ImportReplace makes the store hold exactly the snapshot's roots.
	ImportReplace ImportMode = "replace"
)

// PathMap rewrites the snapshot's paths under Old (Old itself, or Old
// followed by "/") to the same paths under New.
type PathMap struct{ Old, New string }

// ImportOptions say how ImportSnapshot applies a snapshot.
type ImportOptions struct {
	Mode ImportMode
	// DryRun counts what the import would do and writes nothing.
	DryRun bool
	// MapPath rewrites paths; the first map that matches a path applies.
	MapPath []PathMap
}

// ImportReport says what ImportSnapshot did (or, with DryRun, would do).
type ImportReport struct {
	Mode   ImportMode `json:"mode"`
	DryRun bool       `json:"dryRun"`
	// Roots is the number of root lines in the snapshot.
	Roots int `json:"roots"`
	// Added are snapshot roots the store had none of; Changed, roots it
	// held and that the import wrote to; Unchanged, roots it held as the
	// snapshot has them (replace) or lacking nothing of them (merge);
	// Removed, roots of the store that are not in the snapshot (replace).
	Added     int `json:"added"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
	Removed   int `json:"removed"`
	// SHA256 is the snapshot's digest (its trailer's).
	SHA256 string `json:"sha256"`
}

// keyImport is the journal of an import under way: the snapshot's
// SHA-256, its mode and when it began. Written before the import's
// first write, deleted after its last.
const keyImport = "meta:import"

// ImportSnapshot reads the snapshot open returns, twice: first the whole
// of it is checked (header, every line, the trailer's count and
// SHA-256) and a bad one returns a *SnapshotError naming the line with
// nothing written; then it is applied root by root through the store's
// own operations (Ingest, SetFields, AddAlias, MergeRecord, DeleteRoot,
// RemovePath), each one atomic, so fsck is clean after every step.
//
// The rule for an import killed half way: it is finished by running it
// again. Every step is idempotent (a root already as the snapshot has it
// is left alone), so a second run of the same snapshot writes what the
// first did not. meta:import names the snapshot while an import runs;
// a run that finds another snapshot's name there says so in the log.
//
// Merge: a snapshot root is matched to the store's root holding one of
// its members (its canonical CID first). Unmatched, it is added.
// Matched, the store's root gains what it lacks and keeps every value it
// has: fields it has no value for, members it does not hold (an alias
// another root holds stays there), paths the store does not know; peers'
// records go through MergeRecord as a peer's record does (a claim the
// root already has from that peer is kept). Replace: a matched root
// that differs from the snapshot's is deleted and written anew; a path
// of the snapshot the store gives another root leaves it; roots the
// snapshot does not match are deleted, last.
func (s *Store) ImportSnapshot(ctx context.Context, open func() (io.ReadCloser, error), opts ImportOptions) (ImportReport, error) {
	rep := ImportReport{Mode: opts.Mode, DryRun: opts.DryRun}
	if opts.Mode != ImportMerge && opts.Mode != ImportReplace {
		return rep, fmt.Errorf("store: import mode %q: want merge or replace: %w", opts.Mode, ErrBadSnapshot)
	}
	sum, n, err := verifySnapshot(open)
	if err != nil {
		return rep, err
	}
	rep.Roots, rep.SHA256 = n, sum
	if !opts.DryRun {
		if err := s.beginImport(ctx, sum, opts.Mode); err != nil {
			return rep, err
		}
	}
	kept, err := s.applySnapshot(ctx, open, opts, &rep)
	if err != nil {
		return rep, err
	}
	if opts.Mode == ImportReplace {
		if err := s.removeOthers(ctx, kept, opts.DryRun, &rep); err != nil {
			return rep, err
		}
	}
	if !opts.DryRun {
		if err := s.rdb.Del(ctx, keyImport).Err(); err != nil {
			return rep, fmt.Errorf("store: %w", err)
		}
	}
	return rep, nil
}

// verifySnapshot reads the whole snapshot and returns its digest and
// its number of roots.
func verifySnapshot(open func() (io.ReadCloser, error)) (string, int, error) {
	rc, err := open()
	if err != nil {
		return "", 0, err
	}
	defer rc.Close()
	sr, err := NewSnapshotReader(rc)
	if err != nil {
		return "", 0, err
	}
	for {
		if _, err := sr.Next(); errors.Is(err, io.EOF) {
			return sr.SHA256(), sr.Roots(), nil
		} else if err != nil {
			return "", 0, err
		}
	}
}

func (s *Store) beginImport(ctx context.Context, sum string, mode ImportMode) error {
	prev, err := s.rdb.Get(ctx, keyImport).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("store: %w", err)
	}
	if prev != "" && !strings.Contains(prev, sum) {
		s.log.Warn("an import of another snapshot did not finish; this one goes on from the store as it is", "unfinished", prev)
	}
	j, _ := json.Marshal(map[string]string{"sha256": sum, "mode": string(mode), "started": time.Now().UTC().Format(time.RFC3339)})
	if err := s.rdb.Set(ctx, keyImport, j, 0).Err(); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// applySnapshot applies (or counts) every root line; it returns the
// store's roots that hold a snapshot root afterwards.
func (s *Store) applySnapshot(ctx context.Context, open func() (io.ReadCloser, error), opts ImportOptions, rep *ImportReport) (map[RootID]bool, error) {
	rc, err := open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	sr, err := NewSnapshotReader(rc)
	if err != nil {
		return nil, err
	}
	if !opts.DryRun {
		if err := s.importMembers(ctx, sr.Header.Members, opts.Mode); err != nil {
			return nil, err
		}
	}
	kept := make(map[RootID]bool)
	for {
		r, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return kept, nil
		}
		if err != nil {
			return nil, err
		}
		r = mapPaths(r, opts.MapPath)
		root, err := s.importRoot(ctx, r, opts, rep)
		if err != nil {
			return nil, fmt.Errorf("store: import root %s: %w", r.Root, err)
		}
		if root != "" {
			kept[root] = true
		}
		if root != "" && !opts.DryRun {
			if err := s.importWatch(ctx, root, r.Watch, opts.Mode); err != nil {
				return nil, err
			}
		}
	}
}

// importRoot applies one snapshot root and returns the store's root that
// holds it after (the matched one for a dry run).
func (s *Store) importRoot(ctx context.Context, r SnapshotRoot, opts ImportOptions, rep *ImportReport) (RootID, error) {
	matched, err := s.matchRoot(ctx, r)
	if err != nil {
		return "", err
	}
	if matched == "" {
		rep.Added++
		if opts.DryRun {
			return "", nil
		}
		return s.applyNew(ctx, r, opts.Mode == ImportReplace)
	}
	cur, ok, err := s.snapshotRoot(ctx, matched)
	if err != nil || !ok {
		return "", err
	}
	if opts.Mode == ImportReplace {
		if sameRoot(cur, r) {
			rep.Unchanged++
			return matched, nil
		}
		rep.Changed++
		if opts.DryRun {
			return matched, nil
		}
		if err := s.DeleteRoot(ctx, matched); err != nil && !errors.Is(err, ErrNotFound) {
			return "", err
		}
		return s.applyNew(ctx, r, true)
	}
	lack, err := s.lacking(ctx, cur, r)
	if err != nil {
		return "", err
	}
	if lack.empty() {
		rep.Unchanged++
		return matched, nil
	}
	rep.Changed++
	if opts.DryRun {
		return matched, nil
	}
	return matched, s.applyLacking(ctx, matched, r, lack)
}

// importMembers adds the snapshot's members (merge), or makes them the
// household's members, with no watch state until the root lines give
// theirs (replace), in one transaction.
func (s *Store) importMembers(ctx context.Context, members []string, mode ImportMode) error {
	var old []string
	if mode == ImportReplace {
		var err error
		if old, err = s.Members(ctx); err != nil {
			return err
		}
	}
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if mode == ImportReplace {
			for _, m := range old {
				p.Del(ctx, watchKey(m))
			}
			p.Del(ctx, keyMembers)
		}
		if len(members) > 0 {
			p.SAdd(ctx, keyMembers, toAny(members)...)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: import members: %w", err)
	}
	return nil
}

// importWatch writes a root line's watch state to the root that holds
// it: a merge keeps the state a member already has, a replace writes
// the snapshot's.
func (s *Store) importWatch(ctx context.Context, root RootID, watch map[string]model.WatchState, mode ImportMode) error {
	if len(watch) == 0 {
		return nil
	}
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for m, w := range watch {
			b, err := json.Marshal(w)
			if err != nil {
				return err
			}
			if mode == ImportReplace {
				p.HSet(ctx, watchKey(m), string(root), b)
			} else {
				p.HSetNX(ctx, watchKey(m), string(root), b)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: import watch: %w", err)
	}
	return nil
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// matchRoot is the store's root that holds one of r's members (the
// canonical CID's holder first), "" for none.
func (s *Store) matchRoot(ctx context.Context, r SnapshotRoot) (RootID, error) {
	keys := []string{cidKey(protocol.Canonical(r.CIDs))}
	for _, c := range r.CIDs {
		keys = append(keys, cidKey(c))
	}
	v, err := s.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return "", fmt.Errorf("store: %w", err)
	}
	for _, x := range v {
		if id, ok := x.(string); ok && id != "" {
			return RootID(id), nil
		}
	}
	return "", nil
}

// mapPaths rewrites r's paths and filePath by maps.
func mapPaths(r SnapshotRoot, pm []PathMap) SnapshotRoot {
	if len(pm) == 0 {
		return r
	}
	mapOne := func(p string) string {
		for _, m := range pm {
			if p == m.Old {
				return m.New
			}
			if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(m.Old, "/")+"/"); ok {
				return strings.TrimSuffix(m.New, "/") + "/" + rest
			}
		}
		return p
	}
	r.Fields = maps.Clone(r.Fields)
	if fp, ok := r.Fields["filePath"]; ok {
		r.Fields["filePath"] = mapOne(fp)
	}
	r.Paths = slices.Clone(r.Paths)
	for i := range r.Paths {
		r.Paths[i].Path = mapOne(r.Paths[i].Path)
	}
	return r
}

// sameRoot reports whether the store's root a holds what the snapshot's
// b has (the root ID aside).
func sameRoot(a, b SnapshotRoot) bool {
	norm := func(r SnapshotRoot) SnapshotRoot {
		r.Root, r.Watch = "", nil
		if len(r.Fields) == 0 {
			r.Fields = nil
		}
		if len(r.Learned) == 0 {
			r.Learned = nil
		}
		if len(r.Peers) == 0 {
			r.Peers = nil
		}
		if len(r.Paths) == 0 {
			r.Paths = nil
		}
		return r
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// schemaField reports whether a field is written by the lifecycle
// operations from a path (never by an import directly).
func schemaField(f string) bool { return f == "filePath" || f == "sizeByte" || f == "mtime" }

// ownFields are r's fields of the household's: neither schema fields
// nor peers' claims.
func ownFields(r SnapshotRoot) map[string]string {
	out := make(map[string]string, len(r.Fields))
	for f, v := range r.Fields {
		if !schemaField(f) && !strings.HasPrefix(f, OriginPrefix+"/") {
			out[f] = v
		}
	}
	return out
}

// suppliedMembers are r's members not learned from peers and not its own
// digests: those the household supplied.
func suppliedMembers(r SnapshotRoot) []string {
	var out []string
	for _, c := range r.CIDs {
		if _, learned := r.Learned[c]; learned {
			continue
		}
		if o := r.Own; o != nil && (c == o.Mid || c == o.SHA256 || c == o.IPFS) {
			continue
		}
		out = append(out, c)
	}
	return out
}
