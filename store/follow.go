package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/protocol"
)

// The open schema: any Redis client may SET, DEL or EXPIRE STRING keys
// under file:<root>/ of an indexed root. While a node runs, its Changes keep
// fields:<root> (and, for file:<root>/cids/<cid>, the key-set, the alias
// and supplied:<root>) in step with such writes, from keyspace
// notifications (Changes.Run: track); Repair does the same for writes
// made while no node ran.

// RepairReport says what Repair changed.
type RepairReport struct {
	Listed   int `json:"listed"`   // fields added to a field index
	Unlisted int `json:"unlisted"` // listed fields whose key was gone
	Deleted  int `json:"deleted"`  // keys of roots that no longer exist (deleteOrphans)
	Paths    int `json:"paths"`    // paths a root lists put back in the path index, unconfirmed
	Invalid  int `json:"invalid"`  // file:<root>/cids/<x> keys whose <x> is no canonical CID (left alone)
}

// Following is closed once the store's changes are first followed
// (Changes.Run's subscription is in place): an outside write made after
// it is seen. A node waits for it before it serves, so that what an
// outside writer writes once the node runs is never missed.
func (s *Store) Following() <-chan struct{} { return s.following }

// watchFileKeys subscribes to the keyspace notifications of file:* and
// hands fn the keys named, batched (what arrives within 5 ms, at most 512
// at a time), until ctx ends, the subscription is lost or fn fails.
// subscribed runs once the subscription is in place, before any batch.
func (s *Store) watchFileKeys(ctx context.Context, subscribed func() error, fn func(keys []string) error) error {
	db := s.rdb.Options().DB
	sub := s.rdb.PSubscribe(ctx, fmt.Sprintf("__keyspace@%d__:file:*", db))
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil { // the subscription confirmation
		return err
	}
	if err := subscribed(); err != nil {
		return err
	}
	prefix := fmt.Sprintf("__keyspace@%d__:", db)
	ch := sub.Channel(redis.WithChannelHealthCheckInterval(10 * time.Second))
	pending := map[string]bool{}
	var flush <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case m, ok := <-ch:
			if !ok {
				return errors.New("store: subscription closed")
			}
			k := strings.TrimPrefix(m.Channel, prefix)
			if k == keyIndex {
				continue
			}
			pending[k] = true
			if flush == nil {
				flush = time.After(5 * time.Millisecond)
			}
			if len(pending) < 512 {
				continue
			}
		case <-flush:
		}
		keys := make([]string, 0, len(pending))
		for k := range pending {
			keys = append(keys, k)
		}
		clear(pending)
		flush = nil
		if err := fn(keys); err != nil {
			return err
		}
	}
}

// track runs luaTrack over keys, leaving out key-set members that are not
// canonical CIDs.
func (s *Store) track(ctx context.Context, keys []string, deleteOrphans bool) (RepairReport, error) {
	args := trackArgs{deleteOrphans: deleteOrphans}
	invalid := 0
	for _, k := range keys {
		_, f, _ := strings.Cut(k, "/")
		if c, ok := strings.CutPrefix(f, "cids/"); ok && !protocol.IsCanonicalForm(c) {
			invalid++
			continue
		}
		args.keys = append(args.keys, k)
	}
	if len(args.keys) == 0 {
		return RepairReport{Invalid: invalid}, nil
	}
	rep, err := luaTrack.run(ctx, s, args)
	rep.Invalid = invalid
	return rep, err
}

// Repair rebuilds the derived indexes from the keys themselves: every
// file:<root>/<field> key and every field a fields:<root> set lists is
// tracked as Follow would (listing outside writers' fields, unlisting
// deleted ones, adding cids/ members to the key-set with their aliases),
// and every path a root lists (filePath, duplicates) that the path index
// lost is put back, unconfirmed (lua/repairpaths.lua). With
// deleteOrphans, keys of roots that are no longer indexed (left by a write
// after the root was deleted) are deleted. It SCANs the keyspace: for
// fsck --repair and after a reconnect, never a request path.
func (s *Store) Repair(ctx context.Context, deleteOrphans bool) (RepairReport, error) {
	var total RepairReport
	add := func(r RepairReport) {
		total.Listed += r.Listed
		total.Unlisted += r.Unlisted
		total.Deleted += r.Deleted
		total.Invalid += r.Invalid
	}
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		r, err := s.track(ctx, batch, deleteOrphans)
		batch = batch[:0]
		add(r)
		return err
	}
	it := s.rdb.Scan(ctx, 0, "file:*", 1000).Iterator()
	for it.Next(ctx) {
		if k := it.Val(); k != keyIndex {
			batch = append(batch, k)
		}
		if len(batch) >= 500 {
			if err := flush(); err != nil {
				return total, err
			}
		}
	}
	if err := it.Err(); err != nil {
		return total, fmt.Errorf("store: %w", err)
	}
	it = s.rdb.Scan(ctx, 0, "fields:*", 1000).Iterator()
	for it.Next(ctx) {
		r := strings.TrimPrefix(it.Val(), "fields:")
		fields, err := s.fieldNames(ctx, RootID(r))
		if err != nil {
			return total, fmt.Errorf("store: %w", err)
		}
		for _, f := range fields {
			batch = append(batch, fieldKey(RootID(r), f))
		}
		if len(batch) >= 500 {
			if err := flush(); err != nil {
				return total, err
			}
		}
	}
	if err := it.Err(); err != nil {
		return total, fmt.Errorf("store: %w", err)
	}
	if err := flush(); err != nil {
		return total, err
	}
	if deleteOrphans {
		for _, pattern := range []string{"fields:*", "supplied:*", "learned:*"} {
			it = s.rdb.Scan(ctx, 0, pattern, 1000).Iterator()
			for it.Next(ctx) {
				_, r, _ := strings.Cut(it.Val(), ":")
				in, err := s.rdb.SIsMember(ctx, keyIndex, r).Result()
				if err != nil {
					return total, fmt.Errorf("store: %w", err)
				}
				if !in {
					if err := s.rdb.Del(ctx, it.Val()).Err(); err != nil {
						return total, fmt.Errorf("store: %w", err)
					}
					total.Deleted++
				}
			}
			if err := it.Err(); err != nil {
				return total, fmt.Errorf("store: %w", err)
			}
		}
	}
	var roots rootsArgs
	putBack := func() error {
		n, err := luaRepairPaths.run(ctx, s, roots)
		total.Paths += int(n)
		roots = roots[:0]
		return err
	}
	rit := s.rdb.SScan(ctx, keyIndex, 0, "", 1000).Iterator()
	for rit.Next(ctx) {
		if roots = append(roots, RootID(rit.Val())); len(roots) >= 500 {
			if err := putBack(); err != nil {
				return total, err
			}
		}
	}
	if err := rit.Err(); err != nil {
		return total, fmt.Errorf("store: %w", err)
	}
	if err := putBack(); err != nil {
		return total, err
	}
	return total, nil
}
