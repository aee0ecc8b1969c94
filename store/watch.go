package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/model"
)

// The household's members and what each watched (docs/schema.md,
// "Members and watching"): the node's own, never sent to peers.
//
//	members           SET   the members' names
//	watch:<member>    HASH  root → JSON model.WatchState
const keyMembers = "members"

func watchKey(member string) string { return "watch:" + member }

// ErrMemberExists: a member of that name is already in the household.
var ErrMemberExists = errors.New("member exists")

// Members are the household's members, sorted.
func (s *Store) Members(ctx context.Context) ([]string, error) {
	ms, err := s.rdb.SMembers(ctx, keyMembers).Result()
	if err != nil {
		return nil, fmt.Errorf("store: members: %w", err)
	}
	slices.Sort(ms)
	return ms, nil
}

// AddMember adds a member (model.CheckMemberName); ErrMemberExists when
// there is one of that name.
func (s *Store) AddMember(ctx context.Context, name string) error {
	if err := model.CheckMemberName(name); err != nil {
		return err
	}
	n, err := s.rdb.SAdd(ctx, keyMembers, name).Result()
	if err != nil {
		return fmt.Errorf("store: add member: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("store: member %q: %w", name, ErrMemberExists)
	}
	return nil
}

// RemoveMember removes a member and all it watched, in one
// transaction; ErrNotFound when there is none of that name.
func (s *Store) RemoveMember(ctx context.Context, name string) error {
	var rem *redis.IntCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		rem = p.SRem(ctx, keyMembers, name)
		p.Del(ctx, watchKey(name))
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: remove member: %w", err)
	}
	if rem.Val() == 0 {
		return fmt.Errorf("store: member %q: %w", name, ErrNotFound)
	}
	return nil
}

// SetWatch records member's watch state of root. It writes nothing for
// a member not in the household (ErrNotFound): the write watches
// members, so a member removed meanwhile leaves no state behind.
func (s *Store) SetWatch(ctx context.Context, member string, root RootID, w model.WatchState) error {
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	for range 16 {
		err = s.rdb.Watch(ctx, func(tx *redis.Tx) error {
			ok, err := tx.SIsMember(ctx, keyMembers, member).Result()
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("store: member %q: %w", member, ErrNotFound)
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.HSet(ctx, watchKey(member), string(root), b)
				return nil
			})
			return err
		}, keyMembers)
		if !errors.Is(err, redis.TxFailedErr) {
			break
		}
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("store: set watch: %w", err)
	}
	return err
}

// Watch is member's watch state of root; ok is false when it has none.
// ErrNotFound: no such member.
func (s *Store) Watch(ctx context.Context, member string, root RootID) (w model.WatchState, ok bool, err error) {
	var is *redis.BoolCmd
	var get *redis.StringCmd
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		is = p.SIsMember(ctx, keyMembers, member)
		get = p.HGet(ctx, watchKey(member), string(root))
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return w, false, fmt.Errorf("store: watch: %w", err)
	}
	if !is.Val() {
		return w, false, fmt.Errorf("store: member %q: %w", member, ErrNotFound)
	}
	if errors.Is(get.Err(), redis.Nil) {
		return w, false, nil
	}
	return w, true, decodeWatch(get.Val(), &w)
}

// Watching is everything member watched, by root. ErrNotFound: no such
// member.
func (s *Store) Watching(ctx context.Context, member string) (map[RootID]model.WatchState, error) {
	var is *redis.BoolCmd
	var all *redis.MapStringStringCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		is = p.SIsMember(ctx, keyMembers, member)
		all = p.HGetAll(ctx, watchKey(member))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: watching: %w", err)
	}
	if !is.Val() {
		return nil, fmt.Errorf("store: member %q: %w", member, ErrNotFound)
	}
	out := make(map[RootID]model.WatchState, len(all.Val()))
	for r, v := range all.Val() {
		var w model.WatchState
		if err := decodeWatch(v, &w); err != nil {
			return nil, err
		}
		out[RootID(r)] = w
	}
	return out, nil
}

// ForgetWatch drops member's watch state of roots that are gone.
func (s *Store) ForgetWatch(ctx context.Context, member string, roots []RootID) error {
	if len(roots) == 0 {
		return nil
	}
	fs := make([]string, len(roots))
	for i, r := range roots {
		fs[i] = string(r)
	}
	if err := s.rdb.HDel(ctx, watchKey(member), fs...).Err(); err != nil {
		return fmt.Errorf("store: forget watch: %w", err)
	}
	return nil
}

func decodeWatch(v string, w *model.WatchState) error {
	if err := json.Unmarshal([]byte(v), w); err != nil {
		return fmt.Errorf("store: watch state %.80q: %w", v, err)
	}
	return nil
}

// watchOf reads the watch state of roots for every member: root →
// member → state, the roots no member played left out (one pipeline).
func (s *Store) watchOf(ctx context.Context, members []string, roots []RootID) (map[RootID]map[string]model.WatchState, error) {
	if len(members) == 0 || len(roots) == 0 {
		return nil, nil
	}
	fs := make([]string, len(roots))
	for i, r := range roots {
		fs[i] = string(r)
	}
	cmds := make([]*redis.SliceCmd, len(members))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, m := range members {
			cmds[i] = p.HMGet(ctx, watchKey(m), fs...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: watch of roots: %w", err)
	}
	out := map[RootID]map[string]model.WatchState{}
	for i, m := range members {
		for j, v := range cmds[i].Val() {
			str, ok := v.(string)
			if !ok {
				continue
			}
			var w model.WatchState
			if err := decodeWatch(str, &w); err != nil {
				return nil, err
			}
			if out[roots[j]] == nil {
				out[roots[j]] = map[string]model.WatchState{}
			}
			out[roots[j]][m] = w
		}
	}
	return out, nil
}
