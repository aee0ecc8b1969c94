package store

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// CanonicalCIDs returns, in one round trip, the canonical CID of each
// root (Document.CanonicalCID, from the key-set and the learned members
// only, not the whole document) and of the local file each CID names
// (cid:<cid>); a root or CID that names none is left out.
func (s *Store) CanonicalCIDs(ctx context.Context, roots []RootID, cids []string) (map[RootID]string, map[string]string, error) {
	byRoot, byCID := map[RootID]string{}, map[string]string{}
	if len(roots)+len(cids) == 0 {
		return byRoot, byCID, nil
	}
	v, err := luaCanonical.run(ctx, s, canonicalArgs{roots: roots, cids: cids})
	if err != nil {
		return nil, nil, err
	}
	for i, x := range v {
		if x.root == "" {
			continue
		}
		if i < len(roots) {
			byRoot[roots[i]] = x.canonical
		} else {
			byCID[cids[i-len(roots)]] = x.canonical
		}
	}
	return byRoot, byCID, nil
}

type canonicalArgs struct {
	roots []RootID
	cids  []string
}

func (a canonicalArgs) argv() []any {
	v := make([]any, 0, 1+len(a.roots)+len(a.cids))
	v = append(v, len(a.roots))
	for _, r := range a.roots {
		v = append(v, string(r))
	}
	for _, c := range a.cids {
		v = append(v, c)
	}
	return v
}

// canonicalOf is one answer of canonical.lua: root "" for none.
type canonicalOf struct {
	root      RootID
	canonical string
}

func decodeCanonical(c *redis.Cmd) ([]canonicalOf, error) {
	v, err := c.Slice()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make([]canonicalOf, len(v))
	for i, x := range v {
		t, ok := x.([]any)
		if !ok || len(t) < 4 {
			continue
		}
		r, _ := t[0].(string)
		loc, _ := t[1].(int64)
		var members []string
		ms, _ := t[2].([]any)
		for _, m := range ms {
			if c, ok := m.(string); ok {
				members = append(members, c)
			}
		}
		learned := map[string][]string{}
		ls, _ := t[3].([]any)
		for _, m := range ls {
			if c, ok := m.(string); ok {
				learned[c] = nil
			}
		}
		out[i] = canonicalOf{root: RootID(r), canonical: elect(loc == 1, members, learned)}
	}
	return out, nil
}

var luaCanonical = newScript[canonicalArgs](luaRead, "canonical.lua", "canonical CIDs", decodeCanonical)
