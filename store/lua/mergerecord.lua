-- mergerecord.lua (Store.MergeRecord): merges a peer's record; merge.go
-- states the rule.
--
-- ARGV (mergeRecordArgs): peer, newRoot, cap (Options.PeerRootsMax),
--   maxDuplicates, #strong, strong..., #weak, weak..., #fields, field,
--   value, ..., evmax, ts
-- Reply (decodeMerge): {kind, root, written ('1'), local ('1'),
--   #conflicting, conflicting..., #folded, folded..., #evicted,
--   evicted..., document}; kind minted, merged or conflict ('' root, no
--   document). document is the root's as the merge left it (docfor).
local peer, nr, cap, dmax = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local k = 5
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
  for _, f in ipairs(flall(r)) do
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

local q, kind, folded = nil, 'merged', {} -- luacheck: ignore 311 (q is set just below)
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
      local own = ownget(h, 'mid', 'sha', 'ipfs')
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
local out = answer(kind, q, loc, {}, folded, evicted)
out[#out + 1] = docfor(q, dmax)
return out
