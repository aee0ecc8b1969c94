package store

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/protocol"
)

// Violation is one broken store invariant.
type Violation struct {
	Key     string `json:"key"`
	Problem string `json:"problem"`
}

func (v Violation) String() string { return v.Key + ": " + v.Problem }

// Check verifies every invariant of the schema and returns the violations
// found (none means consistent). It walks the whole keyspace with SCAN, so
// it is for fsck and tests, never a request path. Invariants:
//
//   - every cid:X points to an indexed root whose key-set has X;
//   - every key-set member X of a root has cid:X, held by that root or
//     listed in cidalt:X (an ambiguous midhash);
//   - every index member has keys, and every field it lists exists;
//   - every file:<root>/… key belongs to an indexed root and is listed;
//   - the path index agrees with filePath and duplicates, both ways;
//   - a local root's own digests (own:<root>) are in its key-set, and
//     among the members it computed from its own bytes (every member not
//     in supplied:<root>) it holds at most one sha2-256 and at most one
//     dag-pb CID, which are exactly its own digests; a root whose primary
//     is confirmed has them;
//   - no member peers supplied to a root (supplied:<root>) is a digest
//     another local root computed from its own bytes;
//   - every member learned:<root> lists is in the key-set and in
//     supplied:<root>, is no own digest, and names its vouching peers
//     (sorted, no repeats, each in peers:<root>);
//   - own:, supplied:, learned:, peers:, conflicts: and inode: keys belong to
//     indexed roots and known paths;
//   - a root without filePath exists only because peers sent it: it is
//     in peerroots, has peers: and no own:; every peerroots member is an
//     indexed root (one that became local since is allowed: the next
//     MergeRecord drops it from peerroots);
//   - a field under origin/ is origin/<peer>/<name>, both non-empty.
func (s *Store) Check(ctx context.Context) ([]Violation, error) {
	c := &checker{s: s, ctx: ctx}
	if v, err := s.LayoutVersion(ctx); err != nil {
		c.bad(keyLayout, "%v", err)
	} else if v != Layout {
		c.bad(keyLayout, "layout %d, want %d", v, Layout)
	}
	roots, err := s.rdb.SMembers(ctx, keyIndex).Result()
	if err != nil {
		return nil, err
	}
	c.index = make(map[string]bool, len(roots))
	for _, r := range roots {
		c.index[r] = true
	}
	if err := c.readPaths(); err != nil {
		return nil, err
	}
	for _, r := range roots {
		if err := c.root(RootID(r)); err != nil {
			return nil, err
		}
	}
	for _, step := range []struct {
		pattern string
		fn      func(key string) error
	}{
		{"cid:*", c.cid},
		{"cidalt:*", c.cidAlt},
		{"path:*", c.legacy},
		{"tk:*", c.legacy},
		{"file:*", c.fileKey},
		{"fields:*", c.fieldsSet},
		{"own:*", c.legacy},
		{"tok:*", c.legacy},
		{"toks:*", c.legacy},
		{"supplied:*", c.rootKey},
		{"learned:*", c.rootKey},
		{"peers:*", c.rootKey},
		{"conflicts:*", c.rootKey},
		{"edited:*", c.rootKey},
		{"extracted:*", c.rootKey},
		{"inode:*", c.inode},
	} {
		if err := c.scan(step.pattern, step.fn); err != nil {
			return nil, err
		}
	}
	peerRoots, err := s.rdb.ZRange(ctx, keyPeerRoots, 0, -1).Result()
	if err != nil {
		return nil, err
	}
	for _, r := range peerRoots {
		if !c.index[r] {
			c.bad(keyPeerRoots, "lists %s, which is not an indexed root", r)
		}
	}
	for p, st := range c.paths {
		if err := c.path(p, st); err != nil {
			return nil, err
		}
	}
	sort.Slice(c.out, func(i, j int) bool { return c.out[i].Key < c.out[j].Key })
	return c.out, nil
}

type checker struct {
	s     *Store
	ctx   context.Context
	index map[string]bool
	paths map[string]PathState // the path index, read once
	out   []Violation
}

// readPaths reads the whole path index into c.paths; a member with no
// state, or a second member of one path, is a violation.
func (c *checker) readPaths() error {
	c.paths = map[string]PathState{}
	return c.s.pathMembers(c.ctx, func(page []string) error {
		for _, m := range page {
			p, st, ok := decodePathMember(m)
			switch _, seen := c.paths[p]; {
			case !ok:
				c.bad(keyPaths, "member %q holds no path state", m)
			case seen:
				c.bad(keyPaths, "path %q has more than one member", p)
			default:
				c.paths[p] = st
			}
		}
		return nil
	})
}

func (c *checker) bad(key, format string, args ...any) {
	c.out = append(c.out, Violation{Key: key, Problem: fmt.Sprintf(format, args...)})
}

func (c *checker) scan(pattern string, fn func(string) error) error {
	it := c.s.rdb.Scan(c.ctx, 0, pattern, 1000).Iterator()
	for it.Next(c.ctx) {
		if err := fn(it.Val()); err != nil {
			return err
		}
	}
	return it.Err()
}

func (c *checker) get(key string) (string, bool, error) {
	v, err := c.s.rdb.Get(c.ctx, key).Result()
	if err == redis.Nil {
		return "", false, nil
	}
	return v, err == nil, err
}

func (c *checker) root(r RootID) error {
	rdb, ctx := c.s.rdb, c.ctx
	fields, err := c.s.fieldNames(ctx, r)
	if err != nil {
		return err
	}
	if len(fields) == 0 {
		c.bad(string(r), "indexed root has no fields")
	}
	for _, f := range fields {
		n, err := rdb.Exists(ctx, fieldKey(r, f)).Result()
		if err != nil {
			return err
		}
		if n == 0 {
			c.bad(fieldKey(r, f), "listed in %s but missing", fieldsKey(r))
			continue
		}
		if rest, ok := strings.CutPrefix(f, OriginPrefix+"/"); ok {
			if p, name, ok := strings.Cut(rest, "/"); !ok || p == "" || name == "" {
				c.bad(fieldKey(r, f), "a peer's field is %s/<peer>/<name>", OriginPrefix)
			}
		}
		cid, ok := strings.CutPrefix(f, "cids/")
		if !ok {
			continue
		}
		if !protocol.IsCanonicalForm(cid) {
			c.bad(fieldKey(r, f), "key-set member is not a canonical CID")
		}
		holder, ok, err := c.get(cidKey(cid))
		if err != nil {
			return err
		}
		switch {
		case !ok:
			c.bad(fieldKey(r, f), "key-set member has no %s", cidKey(cid))
		case holder != string(r):
			alt, err := rdb.SIsMember(ctx, cidAltKey(cid), string(r)).Result()
			if err != nil {
				return err
			}
			if !alt {
				c.bad(fieldKey(r, f), "%s points to %s and the root is not in %s", cidKey(cid), holder, cidAltKey(cid))
			}
		}
	}
	fp, hasFP, err := c.get(fieldKey(r, "filePath"))
	if err != nil {
		return err
	}
	if hasFP {
		if err := c.pathOwner(fp, r, fieldKey(r, "filePath")); err != nil {
			return err
		}
		if err := c.own(r, fp, fields); err != nil {
			return err
		}
	}
	if !hasFP {
		if err := c.peerOnly(r); err != nil {
			return err
		}
	}
	if err := c.learned(r, fields); err != nil {
		return err
	}
	dups, err := rdb.SMembers(ctx, fieldKey(r, "duplicates")).Result()
	if err != nil {
		return err
	}
	if len(dups) > 0 && !hasFP {
		c.bad(fieldKey(r, "duplicates"), "root has duplicates but no filePath")
	}
	for _, d := range dups {
		if d == fp {
			c.bad(fieldKey(r, "duplicates"), "contains the primary path %q", d)
		}
		if err := c.pathOwner(d, r, fieldKey(r, "duplicates")); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) pathOwner(p string, r RootID, from string) error {
	if owner := c.paths[p].Root; owner != r {
		c.bad(from, "path %q is indexed to %q, not this root", p, owner)
	}
	return nil
}

func (c *checker) cid(key string) error {
	cid := strings.TrimPrefix(key, "cid:")
	holder, ok, err := c.get(key)
	if err != nil || !ok {
		return err
	}
	if !c.index[holder] {
		c.bad(key, "points to %s, which is not an indexed root", holder)
		return nil
	}
	n, err := c.s.rdb.Exists(c.ctx, fieldKey(RootID(holder), "cids/"+cid)).Result()
	if err != nil {
		return err
	}
	if n == 0 {
		c.bad(key, "root %s does not have it in its key-set", holder)
	}
	return nil
}

func (c *checker) cidAlt(key string) error {
	cid := strings.TrimPrefix(key, "cidalt:")
	members, err := c.s.rdb.SMembers(c.ctx, key).Result()
	if err != nil {
		return err
	}
	holder, _, err := c.get(cidKey(cid))
	if err != nil {
		return err
	}
	for _, m := range members {
		n, err := c.s.rdb.Exists(c.ctx, fieldKey(RootID(m), "cids/"+cid)).Result()
		if err != nil {
			return err
		}
		if !c.index[m] || n == 0 || m == holder {
			c.bad(key, "lists %s, which is not another root holding the member", m)
		}
	}
	return nil
}

// path checks one path of the path index against its root.
func (c *checker) path(p string, st PathState) error {
	key, r := keyPaths+" "+p, string(st.Root)
	if !c.index[r] {
		c.bad(key, "points to %q, which is not an indexed root", r)
		return nil
	}
	fp, _, err := c.get(fieldKey(RootID(r), "filePath"))
	if err != nil {
		return err
	}
	if fp != p {
		dup, err := c.s.rdb.SIsMember(c.ctx, fieldKey(RootID(r), "duplicates"), p).Result()
		if err != nil {
			return err
		}
		if !dup {
			c.bad(key, "root %s has it neither as filePath nor in duplicates", r)
		}
	}
	return nil
}

func (c *checker) fileKey(key string) error {
	if key == keyIndex {
		return nil
	}
	rest := strings.TrimPrefix(key, "file:")
	r, f, ok := strings.Cut(rest, "/")
	if !ok || !c.index[r] {
		c.bad(key, "belongs to no indexed root")
		return nil
	}
	if f == "duplicates" {
		return nil
	}
	listed, err := c.s.rdb.HExists(c.ctx, fieldsKey(RootID(r)), fieldEntry(f)).Result()
	if err != nil {
		return err
	}

	if !listed {
		c.bad(key, "field is not listed in %s", fieldsKey(RootID(r)))
	}
	return nil
}

func (c *checker) fieldsSet(key string) error {
	if r := strings.TrimPrefix(key, "fields:"); !c.index[r] {
		c.bad(key, "belongs to no indexed root")
	}
	if t, err := c.s.rdb.Type(c.ctx, key).Result(); err != nil {
		return err
	} else if t != "hash" {
		c.bad(key, "is a %s, not a hash (layout %d)", t, Layout)
	}
	return nil
}

// own checks a local root's digests against the members it computed from
// its own bytes.
func (c *checker) own(r RootID, fp string, fields []string) error {
	rdb, ctx := c.s.rdb, c.ctx
	own, err := c.s.ownDigests(ctx, r)
	if err != nil {
		return err
	}
	supplied, err := rdb.SMembers(ctx, suppliedKey(r)).Result()
	if err != nil {
		return err
	}
	sup := map[string]bool{}
	for _, m := range supplied {
		sup[m] = true
	}
	inSet := map[string]bool{}
	for _, f := range fields {
		if m, ok := strings.CutPrefix(f, "cids/"); ok {
			inSet[m] = true
		}
	}
	for _, k := range []string{"mid", "sha", "ipfs"} {
		if m := own[k]; m != "" && !inSet[m] {
			c.bad(fieldsKey(r), "own %s %s is not in the key-set", k, m)
		}
	}
	for m := range sup {
		if !inSet[m] {
			c.bad(suppliedKey(r), "lists %s, which is not in the key-set", m)
		}
		// What peers supplied is never a digest another local root
		// computed from its own bytes: that root's digest names its bytes.
		holders, err := rdb.SMembers(ctx, "cidalt:"+m).Result()
		if err != nil {
			return err
		}
		if h, err := rdb.Get(ctx, cidKey(m)).Result(); err == nil {
			holders = append(holders, h)
		}
		for _, h := range holders {
			if h == string(r) {
				continue
			}
			hown, err := c.s.ownDigests(ctx, RootID(h))
			if err != nil {
				return err
			}
			if hown["mid"] == m || hown["sha"] == m || hown["ipfs"] == m {
				c.bad(suppliedKey(r), "lists %s, which local root %s computed from its own bytes", m, h)
			}
		}
	}
	var shas, dagpbs []string
	for m := range inSet {
		if sup[m] || protocol.Rank(m) < protocol.StrongRank {
			continue
		}
		if m != own["sha"] && m != own["ipfs"] {
			c.bad(fieldKey(r, "cids/"+m), "strong member is neither supplied nor a digest of the root's own bytes")
		}
		id, err := cid.Decode(m)
		if err != nil {
			continue
		}
		switch {
		case id.Prefix().Codec == cid.DagProtobuf:
			dagpbs = append(dagpbs, m)
		case id.Prefix().MhType == multihash.SHA2_256:
			shas = append(shas, m)
		}
	}
	if len(shas) > 1 || len(dagpbs) > 1 {
		sort.Strings(shas)
		sort.Strings(dagpbs)
		c.bad(string(r), "computed from its own bytes it holds %d sha2-256 %v and %d dag-pb %v; want at most one of each", len(shas), shas, len(dagpbs), dagpbs)
	}
	if c.paths[fp].Hashed && own["sha"] == "" {
		c.bad(fieldsKey(r), "the primary %q is confirmed but the root has no own sha2-256", fp)
	}
	return nil
}

// learned checks learned:<root>: every member it lists is in the key-set
// and in supplied:<root>, is no digest of the root's own bytes, and names
// the peers that vouch for it (sorted, no repeats, each in peers:<root>).
func (c *checker) learned(r RootID, fields []string) error {
	rdb, ctx := c.s.rdb, c.ctx
	learned, err := rdb.HGetAll(ctx, learnedKey(r)).Result()
	if err != nil || len(learned) == 0 {
		return err
	}
	own, err := c.s.ownDigests(ctx, r)
	if err != nil {
		return err
	}
	peers, err := rdb.SMembers(ctx, peersKey(r)).Result()
	if err != nil {
		return err
	}
	for m, list := range learned {
		if !slices.Contains(fields, "cids/"+m) {
			c.bad(learnedKey(r), "lists %s, which is not in the key-set", m)
		}
		if in, err := rdb.SIsMember(ctx, suppliedKey(r), m).Result(); err != nil {
			return err
		} else if !in {
			c.bad(learnedKey(r), "lists %s, which is not in %s", m, suppliedKey(r))
		}
		if own["mid"] == m || own["sha"] == m || own["ipfs"] == m {
			c.bad(learnedKey(r), "lists %s, which the root computed from its own bytes", m)
		}
		ps := strings.Split(list, " ")
		if !slices.IsSorted(ps) || len(slices.Compact(slices.Clone(ps))) != len(ps) {
			c.bad(learnedKey(r), "the peers of %s are not sorted without repeats: %q", m, list)
		}
		for _, p := range ps {
			if err := checkPeer(p); err != nil {
				c.bad(learnedKey(r), "the peers of %s: %v", m, err)
			} else if !slices.Contains(peers, p) {
				c.bad(learnedKey(r), "names %s as a voucher of %s, but it is not in %s", p, m, peersKey(r))
			}
		}
	}
	return nil
}

// peerOnly checks a root without filePath: one known only from peers.
func (c *checker) peerOnly(r RootID) error {
	rdb, ctx := c.s.rdb, c.ctx
	if _, err := rdb.ZScore(ctx, keyPeerRoots, string(r)).Result(); err == redis.Nil {
		c.bad(string(r), "root has no filePath and is not in %s", keyPeerRoots)
	} else if err != nil {
		return err
	}
	own, err := c.s.ownDigests(ctx, r)
	if err != nil {
		return err
	}
	peers, err := rdb.Exists(ctx, peersKey(r)).Result()
	if err != nil {
		return err
	}
	if peers == 0 {
		c.bad(string(r), "root has no filePath and no %s", peersKey(r))
	}
	if len(own) > 0 {
		c.bad(fieldsKey(r), "a root known only from peers has own digests")
	}
	return nil
}

// legacy reports a key of an older layout the upgrade should have
// converted.
func (c *checker) legacy(key string) error {
	if key == keyPaths {
		return nil
	}
	c.bad(key, "a key of an older layout, which layout %d has no more", Layout)
	return nil
}

// rootKey checks that a supplied: key belongs to an indexed root.
func (c *checker) rootKey(key string) error {
	_, r, _ := strings.Cut(key, ":")
	if !c.index[r] {
		c.bad(key, "belongs to no indexed root")
	}
	return nil
}

// inode checks that every path of an inode: set is known with that
// device and inode.
func (c *checker) inode(key string) error {
	rest := strings.TrimPrefix(key, "inode:")
	dev, ino, _ := strings.Cut(rest, ":")
	paths, err := c.s.rdb.SMembers(c.ctx, key).Result()
	if err != nil {
		return err
	}
	for _, p := range paths {
		st, ok := c.paths[p]
		if !ok || strconv.FormatUint(st.Dev, 10) != dev || strconv.FormatUint(st.Ino, 10) != ino {
			c.bad(key, "lists %q, which is not known with this device and inode", p)
		}
	}
	return nil
}
