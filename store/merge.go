package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/protocol"
)

// Bounds on one record given to MergeRecord. They match the record
// protocol's caps (256 CIDs, 4096 meta entries, 512-byte keys, 64 KiB
// values, 1 MiB in all), so a verified record always fits.
const (
	MaxMergeCIDs       = 256
	MaxMergeFields     = 4096
	MaxMergeFieldName  = 512
	MaxMergeFieldValue = 64 << 10
	MaxMergeBytes      = 1 << 20
	// MaxPeerID bounds a peer ID (a libp2p peer ID is about 52 characters).
	MaxPeerID = 128
)

// ErrInvalidRecord: MergeRecord was given a record it cannot take (no or
// too many CIDs, a CID not in canonical form, a reserved or malformed
// field name, an empty or malformed peer ID, too many bytes). Nothing was
// written.
var ErrInvalidRecord = errors.New("invalid record")

// OriginPrefix is the first segment of the fields that hold what peers
// said about a root: origin/<peerID>/<field>.
const OriginPrefix = "origin"

// MergeResult says what MergeRecord did.
type MergeResult struct {
	// Root holds the record's members now; "" on a conflict.
	Root RootID
	// Written is false when the record brought nothing new (a repeat):
	// then nothing at all was written.
	Written bool
	// Minted: Root is a new root known only from peers.
	Minted bool
	// Local: Root is a local (ingested) root.
	Local bool
	// Conflict: the record's strong digests belong to two or more local
	// roots (Conflicting, sorted). They are never joined; nothing of the
	// record was merged, the conflict is recorded in conflicts:<root> of
	// each.
	Conflict    bool
	Conflicting []RootID
	// Folded are the roots known only from peers that were folded into
	// Root because the record links them through a strong digest.
	Folded []RootID
	// Evicted are the least recently touched roots known only from peers
	// deleted to keep them under Options.PeerRootsMax.
	Evicted []RootID
}

// MergeRecord merges a verified record from peer — its CIDs (canonical
// form) and its shareable flat metadata — into the store, conflict-free:
//
//   - The record's strong members (rank >= protocol.StrongRank) select
//     the roots it belongs to: every root holding one of them (the alias
//     holder, and roots known only from peers listed as alternative
//     holders). None: a root known only from peers is minted with every
//     member (a record without any strong member goes to the peer-only
//     root whose key-set is exactly its members, minted when there is
//     none: weak members never join anything). One: the members it lacks
//     are added. Several: the peer-only ones are folded into the local
//     one, or with none local into the one minted first (smallest root
//     ID); two local roots are never joined (Conflict, nothing merged).
//   - Members added to a root are recorded in supplied:<root> (never
//     counted as computed from the node's bytes) and in learned:<root>
//     with the peer (unless the root vouches for them: computed from its
//     own bytes or supplied locally), so a local root's canonical CID and
//     records never take them (Document.Vouched); an alias a local root
//     holds is never repointed; a member another local root computed
//     from its own bytes (its midhash: its strong digests make a
//     conflict) is not added to a local root; filePath, sizeByte, mtime,
//     duplicates and own:<root> are never written.
//   - An alias held by roots known only from peers goes to a fixed one of
//     its holders: a local holder first, then the holder with the most
//     members, then the smallest sorted member list; so the resolution of
//     every CID does not depend on the order records arrive in.
//   - meta is stored as origin/<peer>/<field> where the root has no such
//     field yet: a peer's first claim is kept (records carry no order a
//     repeat could be told from an update by), so merging any records
//     again writes nothing; peers:<root> gains peer.
//   - A repeat writes nothing at all (Written false, no event).
//   - Roots known only from peers are scored in peerroots by the last
//     merge that wrote to them; beyond Options.PeerRootsMax the least
//     recently touched are deleted (roots that meanwhile became local
//     leave peerroots and are kept).
//
// Invalid input returns an error wrapping ErrInvalidRecord and writes
// nothing.
func (s *Store) MergeRecord(ctx context.Context, peer string, cids []string, meta map[string]string) (MergeResult, error) {
	strong, weak, names, err := checkRecord(peer, cids, meta)
	if err != nil {
		return MergeResult{}, err
	}
	args := []any{peer, string(NewRootID()), s.peerMax, len(strong)}
	for _, c := range strong {
		args = append(args, c)
	}
	args = append(args, len(weak))
	for _, c := range weak {
		args = append(args, c)
	}
	args = append(args, len(names))
	for _, f := range names {
		args = append(args, f, meta[f])
	}
	v, err := luaMergeRecord.Run(ctx, s.rdb, nil, append(args, s.evArgs()...)...).StringSlice()
	if err != nil {
		return MergeResult{}, fmt.Errorf("store: merge record: %w", err)
	}
	res := readMerge(v)
	if res.Conflict {
		s.log.Warn("peer record links local roots with different content; not merged",
			"peer", peer, "roots", res.Conflicting, "cids", len(cids))
	}
	return res, nil
}

// readMerge decodes the script's answer: kind, root, written, local, then
// three counted lists (conflicting, folded, evicted).
func readMerge(v []string) MergeResult {
	res := MergeResult{Root: RootID(v[1]), Written: v[2] == "1", Local: v[3] == "1"}
	res.Minted = v[0] == "minted"
	res.Conflict = v[0] == "conflict"
	k := 4
	lists := []*[]RootID{&res.Conflicting, &res.Folded, &res.Evicted}
	for _, l := range lists {
		var n int
		fmt.Sscan(v[k], &n)
		for _, r := range v[k+1 : k+1+n] {
			*l = append(*l, RootID(r))
		}
		k += n + 1
	}
	sort.Slice(res.Conflicting, func(i, j int) bool { return res.Conflicting[i] < res.Conflicting[j] })
	return res
}

// checkRecord validates MergeRecord's input and returns the strong and
// weak members (sorted, without repeats) and the sorted field names.
func checkRecord(peer string, cids []string, meta map[string]string) (strong, weak, names []string, err error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("store: merge record: %s: %w", fmt.Sprintf(format, a...), ErrInvalidRecord)
	}
	if err := checkPeer(peer); err != nil {
		return nil, nil, nil, bad("%v", err)
	}
	switch {
	case len(cids) == 0:
		return nil, nil, nil, bad("no CIDs")
	case len(cids) > MaxMergeCIDs:
		return nil, nil, nil, bad("%d CIDs, at most %d", len(cids), MaxMergeCIDs)
	case len(meta) > MaxMergeFields:
		return nil, nil, nil, bad("%d fields, at most %d", len(meta), MaxMergeFields)
	}
	total := 0
	seen := make(map[string]bool, len(cids))
	for _, c := range cids {
		if _, err := protocol.ParseStrict(c); err != nil {
			return nil, nil, nil, bad("cid: %v", err)
		}
		total += len(c)
		if seen[c] {
			continue
		}
		seen[c] = true
		if protocol.Rank(c) >= protocol.StrongRank {
			strong = append(strong, c)
		} else {
			weak = append(weak, c)
		}
	}
	for f, v := range meta {
		// A record's sizeByte is the producer's file size: kept, like every
		// peer field, under origin/<peer>/.
		if err := ValidField(f); err != nil && f != "sizeByte" {
			return nil, nil, nil, bad("%v", err)
		}
		first, _, _ := strings.Cut(f, "/")
		switch {
		case first == OriginPrefix:
			return nil, nil, nil, bad("field %q: the %s/ prefix holds peers' claims", f, OriginPrefix)
		case len(f) > MaxMergeFieldName:
			return nil, nil, nil, bad("field name of %d bytes, at most %d", len(f), MaxMergeFieldName)
		case len(v) > MaxMergeFieldValue:
			return nil, nil, nil, bad("field %q: value of %d bytes, at most %d", f, len(v), MaxMergeFieldValue)
		}
		total += len(f) + len(v)
		names = append(names, f)
	}
	if total > MaxMergeBytes {
		return nil, nil, nil, bad("%d bytes, at most %d", total, MaxMergeBytes)
	}
	sort.Strings(strong)
	sort.Strings(weak)
	sort.Strings(names)
	return strong, weak, names, nil
}

// checkPeer demands a plausible peer ID: non-empty, at most MaxPeerID
// bytes, printable, no '/' and no space (it is a key segment and a
// member of space-separated lists).
func checkPeer(peer string) error {
	switch {
	case peer == "":
		return errors.New("empty peer ID")
	case len(peer) > MaxPeerID:
		return fmt.Errorf("peer ID of %d bytes, at most %d", len(peer), MaxPeerID)
	case !utf8.ValidString(peer):
		return errors.New("peer ID is not UTF-8")
	}
	for _, r := range peer {
		if r == '/' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return fmt.Errorf("peer ID %q has a %q", peer, r)
		}
	}
	return nil
}

// Keys of the federation. See doc.go.
const keyPeerRoots = "peerroots"

func peersKey(r RootID) string     { return "peers:" + string(r) }
func conflictsKey(r RootID) string { return "conflicts:" + string(r) }

// ARGV: peer, newRoot, cap, #strong, strong…, #weak, weak…, #fields,
// field, value, …, evmax, ts. Returns {kind, root, written, local,
// #conflicting, conflicting…, #folded, folded…, #evicted, evicted…}.
var luaMergeRecord = script(`
local peer, nr, cap = ARGV[1], ARGV[2], tonumber(ARGV[3])
local k = 4
local function list()
  local n, out = tonumber(ARGV[k]), {}
  for i = 1, n do out[i] = ARGV[k + i] end
  k = k + n + 1
  return out
end
local strong, weak = list(), list()
local meta, nf = {}, tonumber(ARGV[k])
for i = 1, nf do meta[ARGV[k + 2 * i - 1]] = ARGV[k + 2 * i] end
local all = {}
for _, c in ipairs(strong) do all[#all + 1] = c end
for _, c in ipairs(weak) do all[#all + 1] = c end
table.sort(all)

local PEERROOTS = 'peerroots'
local function peersk(r) return 'peers:' .. r end
local function conflk(r) return 'conflicts:' .. r end
local wrote = false
local function islocal(r) return redis.call('EXISTS', fk(r, 'filePath')) == 1 end
local function indexed(r) return redis.call('SISMEMBER', IDX, r) == 1 end
local function members(r)
  local out = {}
  for _, f in ipairs(redis.call('SMEMBERS', fieldsk(r))) do
    if string.sub(f, 1, 5) == 'cids/' then out[#out + 1] = string.sub(f, 6) end
  end
  table.sort(out)
  return out
end
-- before reports whether root a should hold a shared alias rather than
-- b: a local root first, then the one with more members, then the
-- smaller sorted member list (so it depends on key-sets, not arrival).
local function before(a, b)
  local la, lb = islocal(a), islocal(b)
  if la ~= lb then return la end
  local ma, mb = members(a), members(b)
  if #ma ~= #mb then return #ma > #mb end
  local sa, sb = table.concat(ma, ' '), table.concat(mb, ' ')
  if sa ~= sb then return sa < sb end
  return a < b
end
-- prefer gives the alias of c, when no local root holds it, to the
-- holder that before picks.
local function prefer(c)
  local h = redis.call('GET', 'cid:' .. c)
  if not h or islocal(h) then return end
  local best = h
  for _, a in ipairs(redis.call('SMEMBERS', 'cidalt:' .. c)) do
    if before(a, best) then best = a end
  end
  if best ~= h then
    redis.call('SET', 'cid:' .. c, best)
    redis.call('SREM', 'cidalt:' .. c, best)
    redis.call('SADD', 'cidalt:' .. c, h)
    wrote = true
  end
end
local function changed()
  if wrote then return true end
  for _, r in ipairs(KSO) do
    local t = KS[r]
    if next(t.add) or next(t.rem) or t.typ ~= 'alias' then return true end
  end
  return false
end
local function answer(kind, q, loc, confl, folded, evicted)
  local w, l = '0', '0'
  if changed() then w = '1' end
  if loc then l = '1' end
  local out = {kind, q, w, l}
  for _, lst in ipairs({confl, folded, evicted}) do
    out[#out + 1] = tostring(#lst)
    for _, r in ipairs(lst) do out[#out + 1] = r end
  end
  return out
end

-- H: the roots the strong members belong to.
local H, inH, locals = {}, {}, {}
local function addh(r)
  if r and not inH[r] and indexed(r) then
    inH[r] = true
    H[#H + 1] = r
    if islocal(r) then locals[#locals + 1] = r end
  end
end
for _, c in ipairs(strong) do
  addh(redis.call('GET', 'cid:' .. c))
  for _, a in ipairs(redis.call('SMEMBERS', 'cidalt:' .. c)) do
    if not islocal(a) then addh(a) end
  end
end
table.sort(H)
table.sort(locals)

if #locals > 1 then
  for _, l in ipairs(locals) do
    for _, o in ipairs(locals) do
      if o ~= l and redis.call('SADD', conflk(l), peer .. ' ' .. o) == 1 then wrote = true end
    end
  end
  return answer('conflict', '', false, locals, {}, {})
end

local q, kind, folded = nil, 'merged', {}
if #locals == 1 then q = locals[1] else q = H[1] end
if not q and #strong == 0 then
  -- Only weak members: the peer-only root whose key-set is exactly them.
  local cands = redis.call('SMEMBERS', 'cidalt:' .. all[1])
  cands[#cands + 1] = redis.call('GET', 'cid:' .. all[1])
  local want = table.concat(all, ' ')
  for _, r in ipairs(cands) do
    if r and not islocal(r) and indexed(r) and table.concat(members(r), ' ') == want then
      if not q or r < q then q = r end
    end
  end
end
if not q then
  q, kind = nr, 'minted'
  redis.call('SADD', IDX, q)
  kswhy(q, 'mint')
end
for _, r in ipairs(H) do
  if r ~= q then
    merge(r, q)
    if redis.call('EXISTS', peersk(r)) == 1 then
      redis.call('SUNIONSTORE', peersk(q), peersk(q), peersk(r))
      redis.call('DEL', peersk(r))
    end
    redis.call('DEL', conflk(r))
    redis.call('ZREM', PEERROOTS, r)
    folded[#folded + 1] = r
  end
end
-- computedelsewhere reports whether a local root other than q computed c
-- from its own bytes: c names that root's bytes (a midhash, as strong
-- digests of another local root make the record a conflict), so a peer
-- cannot attach it to local root q.
local function computedelsewhere(c)
  local holders = redis.call('SMEMBERS', 'cidalt:' .. c)
  holders[#holders + 1] = redis.call('GET', 'cid:' .. c)
  for _, h in ipairs(holders) do
    if h and h ~= q then
      local own = redis.call('HMGET', ownk(h), 'mid', 'sha', 'ipfs')
      if own[1] == c or own[2] == c or own[3] == c then return true end
    end
  end
  return false
end
local qlocal = islocal(q)
for _, c in ipairs(all) do
  if not (qlocal and computedelsewhere(c)) then
    if learn(q, c, peer) then wrote = true end
    if redis.call('EXISTS', fk(q, 'cids/' .. c)) == 0 then redis.call('SADD', supk(q), c) end
    member(q, c)
  end
end
if redis.call('SADD', peersk(q), peer) == 1 then wrote = true end
-- What peer says about q, where it has said nothing yet.
local pre = 'origin/' .. peer .. '/'
for f, v in pairs(meta) do
  if redis.call('EXISTS', fk(q, pre .. f)) == 0 then
    setf(q, pre .. f, v)
    wrote = true
  end
end
if changed() then
  for _, c in ipairs(members(q)) do prefer(c) end
end

local loc = islocal(q)
if loc then
  redis.call('ZREM', PEERROOTS, q)
elseif changed() then
  redis.call('ZADD', PEERROOTS, EVTS, q)
end
-- Evict the least recently touched peer-only roots beyond the cap; a
-- root that became local meanwhile only leaves peerroots.
local evicted = {}
while redis.call('ZCARD', PEERROOTS) > cap do
  local lo = redis.call('ZRANGE', PEERROOTS, 0, 1)
  local r = lo[1]
  if r == q then r = lo[2] end
  redis.call('ZREM', PEERROOTS, r)
  if indexed(r) and not islocal(r) then
    local ms = members(r)
    deleteroot(r)
    redis.call('DEL', peersk(r), conflk(r))
    for _, c in ipairs(ms) do prefer(c) end
    evicted[#evicted + 1] = r
  end
end
return answer(kind, q, loc, {}, folded, evicted)`)

// PeerRootTouched is when a merge last wrote to root, a root known only
// from peers (zero for any other root): how old what peers said of it is.
func (s *Store) PeerRootTouched(ctx context.Context, root RootID) (time.Time, error) {
	ms, err := s.rdb.ZScore(ctx, keyPeerRoots, string(root)).Result()
	if errors.Is(err, redis.Nil) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("store: %w", err)
	}
	return time.UnixMilli(int64(ms)), nil
}
