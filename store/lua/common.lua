-- common.lua: helpers every script shares (layout 3). store/lua.go puts it
-- first, before prelude.lua or a read or bare script's body.
--
-- fields:<root> is a HASH (a listpack under Redis' default limits while a
-- root has at most 128 entries of at most 64 bytes). Its entries:
--
--   <name>   ''     a STRING field file:<root>/<name> (names never begin
--                   with '/')
--   /<cid>   roles  the key-set member file:<root>/cids/<cid> (the name
--                   cids/<cid>, written short so it fits a listpack entry);
--                   its value says which of the root's own digests it is
--                   (ownget below; what own:<root> held in layout 1)
--
-- Scripts speak of field names as before (cids/<cid> included): flenc and
-- fldec turn a name into its entry and back. Layout 2 also kept a root's
-- search tokens there (//<token>) and postings in tk:<token>; layout 3
-- has neither (the search index is on disk, node/catalog).
--
-- Every top-level local here is a helper; .luacheckrc lists them (add a
-- new one there too).
-- The path index (layout 3) is one sorted set, path:__index__, with one
-- member per local path: the path, a NUL byte (which no path holds), then
-- its state, the values of PF joined by single spaces (none holds a
-- space; '' for none). A path's member is the one ZRANGEBYLEX finds from
-- p .. '\0'; the paths of a directory are a lexicographic range. Layout 2
-- kept the state in a hash path:<path> and the path again as a member.
local PATHS = 'path:__index__'
local PF = {'root', 'size', 'mtime', 'mid', 'hashed', 'dev', 'ino', 'link', 'xv'}
-- pget returns path p's state {root = …, size = …, …, m = its member},
-- or nil when p is not known.
local function pget(p)
  local m = redis.call('ZRANGEBYLEX', PATHS, '[' .. p .. '\0', '(' .. p .. '\1', 'LIMIT', 0, 1)[1]
  if not m then return nil end
  local st, i, k = {m = m}, #p + 2, 1
  while true do
    local j = string.find(m, ' ', i, true)
    if not j or k == #PF then
      st[PF[k]] = string.sub(m, i)
      return st
    end
    st[PF[k]] = string.sub(m, i, j - 1)
    i, k = j + 1, k + 1
  end
end
-- pput writes path p's state st (as pget returns it), in place of the
-- member it was read from.
local function pput(p, st)
  local v = {}
  for i, f in ipairs(PF) do v[i] = st[f] or '' end
  local m = p .. '\0' .. table.concat(v, ' ')
  if st.m == m then return end
  if st.m then redis.call('ZREM', PATHS, st.m) end
  st.m = m
  redis.call('ZADD', PATHS, 0, m)
end
-- pset(p, name, value, …) changes some of known path p's state.
local function pset(p, ...)
  local st, a = pget(p), {...}
  if not st then return end
  for i = 1, #a, 2 do st[a[i]] = a[i + 1] end
  pput(p, st)
end
-- pathstate is local path p's entry in the path index, as Store.Path
-- reads it (pathState): {root, size, mtime, mid, hashed, primary, dev,
-- ino, link, xv}, or nil when p is not known.
local function pathstate(p)
  local st = pget(p)
  if not st then return nil end
  local primary = '0'
  if redis.call('GET', 'file:' .. st.root .. '/filePath') == p then primary = '1' end
  return {st.root, st.size, st.mtime, st.mid, st.hashed, primary, st.dev, st.ino, st.link, st.xv}
end
local function fieldsk(r) return 'fields:' .. r end
-- FLCODE (name → entry) and FLNAME (entry → name) are the field names
-- listed as a code ('/' and one byte below 0x20, which begins no CID):
-- store/lua.go writes them before this file, from version.go's
-- fieldCodes.
local function flenc(f)
  local c = FLCODE[f]
  if c then return c end
  if string.sub(f, 1, 5) == 'cids/' then return '/' .. string.sub(f, 6) end
  return f
end
-- flcid returns the CID of a key-set member's entry e, or nil for a
-- field's.
local function flcid(e)
  if string.sub(e, 1, 1) ~= '/' or FLNAME[e] then return nil end
  return string.sub(e, 2)
end
-- fldec returns the field name of an entry.
local function fldec(e)
  local c = flcid(e)
  if c then return 'cids/' .. c end
  return FLNAME[e] or e
end
-- flall returns every field name of r (cids/<cid> members included).
local function flall(r)
  local out = {}
  for _, e in ipairs(redis.call('HKEYS', fieldsk(r))) do out[#out + 1] = fldec(e) end
  return out
end
-- fladd lists f; a member keeps the roles it has.
local function fladd(r, f) redis.call('HSETNX', fieldsk(r), flenc(f), '') end
local function flrem(r, f) redis.call('HDEL', fieldsk(r), flenc(f)) end
local function flhas(r, f) return redis.call('HEXISTS', fieldsk(r), flenc(f)) == 1 end
-- flname reports whether f may be a field name.
local function flname(f) return f ~= '' and string.sub(f, 1, 1) ~= '/' end

-- The root's own digests are roles of its key-set members: the entry
-- /<cid> holds 'm' (midhash), 's' (sha2-256), 'i' (IPFS CID) for the
-- digests of the root's own bytes that <cid> is ('si' for a small file,
-- whose IPFS CID is its sha2-256 CID), '' for any other member. A digest
-- is never stored apart from the member it is.
local ROLE = {mid = 'm', sha = 's', ipfs = 'i'}
-- ownmap returns {role letter → cid} of r.
local function ownmap(r)
  local kv, out = redis.call('HGETALL', fieldsk(r)), {}
  for i = 1, #kv, 2 do
    local v, c = kv[i + 1], flcid(kv[i])
    if v ~= '' and c then
      for l in string.gmatch(v, '%a') do out[l] = c end
    end
  end
  return out
end
-- ownget(r, 'mid', 'sha') → {mid or false, sha or false}.
local function ownget(r, ...)
  local m, out = ownmap(r), {}
  for i, k in ipairs({...}) do out[i] = m[ROLE[k]] or false end
  return out
end
-- ownmove gives r's digest roles to members: for each name, value pair,
-- the member value (false for none) takes the named role from whichever
-- member had it. One read of the hash, one write per member touched.
local function ownmove(r, kv)
  local m, sets = ownmap(r), {}
  local function roles(c)
    if not sets[c] then
      local set = {}
      for l in string.gmatch(redis.call('HGET', fieldsk(r), '/' .. c) or '', '%a') do set[l] = true end
      sets[c] = set
    end
    return sets[c]
  end
  for i = 1, #kv, 2 do
    local l, c = ROLE[kv[i]], kv[i + 1]
    local was = m[l]
    if was ~= c then
      if was then roles(was)[l] = nil end
      if c then roles(c)[l] = true end
      m[l] = c or nil
    end
  end
  for c, set in pairs(sets) do
    local v = ''
    for _, l in ipairs({'m', 's', 'i'}) do if set[l] then v = v .. l end end
    redis.call('HSET', fieldsk(r), '/' .. c, v)
  end
end
-- owndel drops the named digests (roles) of r.
local function owndel(r, ...)
  local kv = {}
  for _, k in ipairs({...}) do kv[#kv + 1] = k; kv[#kv + 1] = false end
  ownmove(r, kv)
end
-- ownset(r, 'mid', c1, 'sha', c2, …) makes each c the named digest of r,
-- taking the role from the member that had it.
local function ownset(r, ...) ownmove(r, {...}) end
-- ownall returns r's own digests as {name, value, …}.
local function ownall(r)
  local m, out = ownmap(r), {}
  for _, k in ipairs({'mid', 'sha', 'ipfs'}) do
    if m[ROLE[k]] then out[#out + 1] = k; out[#out + 1] = m[ROLE[k]] end
  end
  return out
end
-- The set of indexed roots, and a root's STRING field key.
local IDX = 'file:__index__'
local function fk(r, f) return 'file:' .. r .. '/' .. f end
-- docfor returns root r's document: {{field, value, …}, {duplicate, …},
-- duplicate count, {peer, …}, {learned member, its peers, …}, {edited
-- field, …}}, at most dmax duplicates (the smallest paths).
local function docfor(r, dmax)
  if redis.call('SISMEMBER', IDX, r) == 0 then return nil end
  local out = {}
  local names = flall(r)
  -- One MGET per 512 fields, not a GET each. MGET answers nil for a key of
  -- another type, which an outside writer may have put under a name.
  for i = 1, #names, 512 do
    local keys = {}
    for j = i, math.min(i + 511, #names) do keys[#keys + 1] = fk(r, names[j]) end
    local vals = redis.call('MGET', unpack(keys))
    for k, v in ipairs(vals) do
      if v then out[#out + 1] = names[i + k - 1]; out[#out + 1] = v end
    end
  end
  local n = redis.call('SCARD', fk(r, 'duplicates'))
  local dups = {}
  if n > 0 then dups = redis.call('SORT', fk(r, 'duplicates'), 'ALPHA', 'LIMIT', 0, dmax) end
  return {out, dups, n, redis.call('SMEMBERS', 'peers:' .. r), redis.call('HGETALL', 'learned:' .. r),
    redis.call('SMEMBERS', 'edited:' .. r)}
end
