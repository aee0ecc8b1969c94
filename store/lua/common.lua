-- common.lua: helpers every script shares (layout 2). store/lua.go puts it
-- first, before prelude.lua, readprelude.lua or a bare script's body.
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
--   //<tok>  weight a search token the root is posted under in tk:<tok>
--                   (tokall below; what toks:<root> held in layout 1; a
--                   CID never holds '/')
--
-- Scripts speak of field names as before (cids/<cid> included): flenc and
-- fldec turn a name into its entry and back.
--
-- tk:<token> is a search posting list: root → weight ('2' title, '1'
-- elsewhere), a HASH. Past POSTMAX postings per bucket on average it is
-- split into buckets tk:<token>:<suffix> by the last L characters of the
-- root (uniformly random in a UUIDv7), each a listpack-sized HASH;
-- tk:<token> then holds only '*' (L) and '#' (the postings in all).
--
-- Every top-level local here is a helper; .luacheckrc lists them (add a
-- new one there too).
-- pathstate is local path p's entry in the path index, as Store.Path
-- reads it (pathState): {root, size, mtime, mid, hashed, primary, dev,
-- ino, link, xv}, or nil when p is not known. (pk and fk come later, in
-- the preludes: the keys are written out here.)
local function pathstate(p)
  local st = redis.call('HMGET', 'path:' .. p, 'root', 'size', 'mtime', 'mid', 'hashed', 'dev', 'ino', 'link', 'xv')
  if not st[1] then return nil end
  local primary = '0'
  if redis.call('GET', 'file:' .. st[1] .. '/filePath') == p then primary = '1' end
  return {st[1], st[2] or '', st[3] or '', st[4] or '', st[5] or '', primary, st[6] or '', st[7] or '', st[8] or '', st[9] or ''}
end
local function fieldsk(r) return 'fields:' .. r end
local function flenc(f)
  if string.sub(f, 1, 5) == 'cids/' then return '/' .. string.sub(f, 6) end
  return f
end
-- fldec returns the field name of an entry.
local function fldec(e)
  if string.sub(e, 1, 1) == '/' then return 'cids/' .. string.sub(e, 2) end
  return e
end
-- fltok reports whether entry e is a search token's.
local function fltok(e) return string.sub(e, 1, 2) == '//' end
-- flall returns every field name of r (cids/<cid> members included).
local function flall(r)
  local out = {}
  for _, e in ipairs(redis.call('HKEYS', fieldsk(r))) do
    if not fltok(e) then out[#out + 1] = fldec(e) end
  end
  return out
end
-- fladd lists f; a member keeps the roles it has.
local function fladd(r, f) redis.call('HSETNX', fieldsk(r), flenc(f), '') end
local function flrem(r, f) redis.call('HDEL', fieldsk(r), flenc(f)) end
local function flhas(r, f) return redis.call('HEXISTS', fieldsk(r), flenc(f)) == 1 end
-- flname reports whether f may be a field name of layout 2.
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
    local v = kv[i + 1]
    if v ~= '' and string.sub(kv[i], 1, 1) == '/' and not fltok(kv[i]) then
      for l in string.gmatch(v, '%a') do out[l] = string.sub(kv[i], 2) end
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

local POSTMAX = 96
local POSTLEVELS = 3
local B32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
local function tklevel(k) return tonumber(redis.call('HGET', k, '*') or '0') end
-- tksuffixes calls fn with every suffix of length l.
local function tksuffixes(l, fn, pre)
  pre = pre or ''
  if l == 0 then return fn(pre) end
  for i = 1, 32 do tksuffixes(l - 1, fn, pre .. string.sub(B32, i, i)) end
end
-- tkall returns token t's postings as {root, weight, …}.
local function tkall(t)
  local k = 'tk:' .. t
  local l = tklevel(k)
  if l == 0 then return redis.call('HGETALL', k) end
  local out = {}
  tksuffixes(l, function(sfx)
    local kv = redis.call('HGETALL', k .. ':' .. sfx)
    for i = 1, #kv do out[#out + 1] = kv[i] end
  end)
  return out
end
-- tksplit moves token t's postings one level deeper.
local function tksplit(t, l)
  local k = 'tk:' .. t
  local kv = tkall(t)
  if l == 0 then
    redis.call('DEL', k)
  else
    tksuffixes(l, function(sfx) redis.call('DEL', k .. ':' .. sfx) end)
  end
  for i = 1, #kv, 2 do
    redis.call('HSET', k .. ':' .. string.sub(kv[i], -(l + 1)), kv[i], kv[i + 1])
  end
  redis.call('HSET', k, '*', l + 1, '#', #kv / 2)
end
-- tkadd gives root r weight w under token t.
local function tkadd(t, r, w)
  local k = 'tk:' .. t
  local l = tklevel(k)
  if l == 0 then
    if redis.call('HSET', k, r, w) == 1 and redis.call('HLEN', k) > POSTMAX then tksplit(t, 0) end
    return
  end
  if redis.call('HSET', k .. ':' .. string.sub(r, -l), r, w) == 1 then
    local n = redis.call('HINCRBY', k, '#', 1)
    if l < POSTLEVELS and n > POSTMAX * 32 ^ l then tksplit(t, l) end
  end
end
-- tkdel takes root r out of token t.
local function tkdel(t, r)
  local k = 'tk:' .. t
  local l = tklevel(k)
  if l == 0 then
    redis.call('HDEL', k, r)
  elseif redis.call('HDEL', k .. ':' .. string.sub(r, -l), r) == 1 then
    if redis.call('HINCRBY', k, '#', -1) <= 0 then redis.call('DEL', k) end
  end
end
-- tokall returns r's search tokens as {token → weight}.
local function tokall(r)
  local kv, out = redis.call('HGETALL', fieldsk(r)), {}
  for i = 1, #kv, 2 do
    if fltok(kv[i]) then out[string.sub(kv[i], 3)] = kv[i + 1] end
  end
  return out
end
-- unpost takes r out of every token it is posted under, before its
-- fields:<root> goes (a deleted or merged root).
local function unpost(r)
  for t in pairs(tokall(r)) do tkdel(t, r) end
end
