package store

import "github.com/redis/go-redis/v9"

// luaPrelude holds the schema helpers every script shares. Scripts run
// atomically inside Redis, so no reader ever sees a half-done mint, merge,
// delete or promote. Keys are built inside the scripts (the node talks to a
// single, non-clustered Redis).
//
// Every script ends by appending one key-set event per root whose key-set
// or local paths it changed (ksflush), so the feed misses nothing. The rank
// ladder is not known here: which members are a root's own strong digests
// is recorded in own:<root>, never derived in Lua.
const luaPrelude = `
local EVMAX = ARGV[#ARGV - 1]
local EVTS = ARGV[#ARGV]
local IDX = 'file:__index__'
local PATHS = 'path:__index__'
local function fk(r, f) return 'file:' .. r .. '/' .. f end
local function fieldsk(r) return 'fields:' .. r end
local function ownk(r) return 'own:' .. r end
local function supk(r) return 'supplied:' .. r end
local function lrnk(r) return 'learned:' .. r end
local function pk(p) return 'path:' .. p end
local function inok(dev, ino) return 'inode:' .. dev .. ':' .. ino end
local function setf(r, f, v)
  if redis.call('GET', fk(r, f)) ~= v then redis.call('SET', fk(r, f), v) end
  redis.call('SADD', fieldsk(r), f)
end
-- learn records that peer's record gave c as a member of r, unless r
-- vouches for c (computed it from its own bytes or had it supplied
-- locally): a member r holds only because peers said so lists those
-- peers in learned:<r>. Returns true when it wrote.
local function learn(r, c, peer)
  local cur = redis.call('HGET', lrnk(r), c)
  if not cur then
    if redis.call('EXISTS', fk(r, 'cids/' .. c)) == 1 then return false end
    redis.call('HSET', lrnk(r), c, peer)
    return true
  end
  local list = {}
  for q in string.gmatch(cur, '%S+') do
    if q == peer then return false end
    list[#list + 1] = q
  end
  list[#list + 1] = peer
  table.sort(list)
  redis.call('HSET', lrnk(r), c, table.concat(list, ' '))
  return true
end
-- learnall adds the space-separated peers of list to what r learned of c.
local function learnall(r, c, list)
  for q in string.gmatch(list, '%S+') do learn(r, c, q) end
end
local function xadd(typ, fields)
  redis.call('XADD', 'meta:events', 'MAXLEN', '~', EVMAX, '*', 'type', typ, unpack(fields))
end
-- emit appends a path lifecycle event.
local function emit(typ, p, mid, old)
  xadd(typ, {'path', p, 'midhash256', mid or '', 'oldPath', old or '', 'timestamp', EVTS})
end

-- Key-set changes are collected per root while a script runs and appended
-- by ksflush at its end, net of members added and removed again.
local KS, KSO = {}, {}
local function kst(r)
  local t = KS[r]
  if not t then
    t = {typ = 'alias', add = {}, rem = {}, path = '', into = ''}
    KS[r] = t
    KSO[#KSO + 1] = r
  end
  return t
end
local function ksadd(r, c)
  local t = kst(r)
  if t.rem[c] then t.rem[c] = nil else t.add[c] = true end
end
local function ksrem(r, c)
  local t = kst(r)
  if t.add[c] then t.add[c] = nil else t.rem[c] = true end
end
local function kswhy(r, typ, p, into)
  local t = kst(r)
  if t.typ ~= 'mint' or typ == 'purge' then t.typ = typ end
  if p then t.path = p end
  if into then t.into = into end
end
local function joined(set)
  local out = {}
  for c in pairs(set) do out[#out + 1] = c end
  table.sort(out)
  return table.concat(out, ' ')
end
local function ksflush()
  for _, r in ipairs(KSO) do
    local t = KS[r]
    local a, d = joined(t.add), joined(t.rem)
    if a ~= '' or d ~= '' or t.typ == 'purge' or t.typ == 'promote' or t.typ == 'merge' then
      xadd(t.typ, {'root', r, 'added', a, 'removed', d, 'path', t.path, 'into', t.into, 'timestamp', EVTS})
    end
  end
end

local function indexpath(p, r, size, mtime, mid, dev, ino, link)
  redis.call('HSET', pk(p), 'root', r, 'size', size, 'mtime', mtime, 'mid', mid, 'hashed', '0',
    'dev', dev, 'ino', ino, 'link', link)
  redis.call('ZADD', PATHS, 0, p)
  if dev ~= '' and ino ~= '' then redis.call('SADD', inok(dev, ino), p) end
end
local function unindexpath(p)
  local st = redis.call('HMGET', pk(p), 'dev', 'ino')
  if st[1] and st[2] and st[1] ~= '' then redis.call('SREM', inok(st[1], st[2]), p) end
  redis.call('DEL', pk(p))
  redis.call('ZREM', PATHS, p)
end
-- member puts cid c in r's key-set and points the alias at r when it is
-- free. An alias held by another root is not repointed (r is recorded as
-- an alternative holder), except that a local root (one with a filePath)
-- takes it from a root known only from peers. Returns the alias holder.
local function member(r, c)
  if redis.call('EXISTS', fk(r, 'cids/' .. c)) == 0 then
    redis.call('SET', fk(r, 'cids/' .. c), 'true')
    ksadd(r, c)
  end
  redis.call('SADD', fieldsk(r), 'cids/' .. c)
  local h = redis.call('GET', 'cid:' .. c)
  if not h then
    redis.call('SET', 'cid:' .. c, r)
    return r
  end
  if h == r then return r end
  if redis.call('EXISTS', fk(h, 'filePath')) == 0 and redis.call('EXISTS', fk(r, 'filePath')) == 1 then
    redis.call('SET', 'cid:' .. c, r)
    redis.call('SREM', 'cidalt:' .. c, r)
    redis.call('SADD', 'cidalt:' .. c, h)
    return r
  end
  redis.call('SADD', 'cidalt:' .. c, r)
  return h
end
-- dropmember takes c out of r's key-set; an alias r held passes to an
-- alternative holder, if there is one.
local function dropmember(r, c)
  if redis.call('DEL', fk(r, 'cids/' .. c)) == 1 then ksrem(r, c) end
  redis.call('SREM', fieldsk(r), 'cids/' .. c)
  redis.call('SREM', supk(r), c)
  redis.call('HDEL', lrnk(r), c)
  if redis.call('GET', 'cid:' .. c) == r then
    local nxt = redis.call('SPOP', 'cidalt:' .. c)
    if nxt then redis.call('SET', 'cid:' .. c, nxt) else redis.call('DEL', 'cid:' .. c) end
  else
    redis.call('SREM', 'cidalt:' .. c, r)
  end
end
-- suponly reports whether local root h holds c only because peers
-- supplied it: not a digest of h's own bytes.
local function suponly(h, c)
  if redis.call('SISMEMBER', supk(h), c) == 0 or redis.call('EXISTS', fk(h, 'filePath')) == 0 then return false end
  local own = redis.call('HMGET', ownk(h), 'mid', 'sha', 'ipfs')
  return own[1] ~= c and own[2] ~= c and own[3] ~= c
end
-- ownmember adds c, a digest root r computed from its own bytes. A local
-- root that holds c only because peers supplied it lets go of it: c names
-- r's bytes, so what the peers paired with the other file was wrong.
local function ownmember(r, c)
  local holders = redis.call('SMEMBERS', 'cidalt:' .. c)
  local h = redis.call('GET', 'cid:' .. c)
  if h then holders[#holders + 1] = h end
  for _, q in ipairs(holders) do
    if q ~= r and suponly(q, c) then dropmember(q, c) end
  end
  -- r computed c from its own bytes: it vouches for it now.
  redis.call('HDEL', lrnk(r), c)
  return member(r, c)
end
local function setprimary(r, p)
  local st = redis.call('HMGET', pk(p), 'size', 'mtime')
  setf(r, 'filePath', p)
  setf(r, 'sizeByte', st[1] or '0')
  setf(r, 'mtime', st[2] or '0')
end
-- attach adds local path p to root q: primary when q has none, else a
-- duplicate.
local function attach(q, p)
  if redis.call('EXISTS', fk(q, 'filePath')) == 0 then setprimary(q, p)
  else redis.call('SADD', fk(q, 'duplicates'), p) end
  redis.call('HSET', pk(p), 'root', q)
end
local function deleteroot(r)
  local fp = redis.call('GET', fk(r, 'filePath'))
  if fp and redis.call('HGET', pk(fp), 'root') == r then unindexpath(fp) end
  for _, d in ipairs(redis.call('SMEMBERS', fk(r, 'duplicates'))) do
    if redis.call('HGET', pk(d), 'root') == r then unindexpath(d) end
  end
  redis.call('DEL', fk(r, 'duplicates'))
  for _, f in ipairs(redis.call('SMEMBERS', fieldsk(r))) do
    if string.sub(f, 1, 5) == 'cids/' then dropmember(r, string.sub(f, 6)) end
    redis.call('DEL', fk(r, f))
  end
  redis.call('DEL', fieldsk(r), ownk(r), supk(r), lrnk(r), 'peers:' .. r, 'conflicts:' .. r)
  redis.call('ZREM', 'peerroots', r)
  redis.call('SREM', IDX, r)
  kswhy(r, 'purge')
end
-- merge folds root r into q (they share a strong digest): paths, key-set
-- members and aliases move to q; q keeps its own value where both have a
-- field, and its own digests when it has them.
local function merge(r, q)
  local paths = redis.call('SMEMBERS', fk(r, 'duplicates'))
  table.sort(paths)
  local fp = redis.call('GET', fk(r, 'filePath'))
  if fp then table.insert(paths, 1, fp) end
  for _, p in ipairs(paths) do attach(q, p) end
  redis.call('DEL', fk(r, 'duplicates'))
  for _, f in ipairs(redis.call('SMEMBERS', fieldsk(r))) do
    if string.sub(f, 1, 5) == 'cids/' then
      local c = string.sub(f, 6)
      ksrem(r, c)
      -- What r learned of c from peers q learns too; what r vouched for
      -- (computed or supplied locally) q vouches for.
      local learned = redis.call('HGET', lrnk(r), c)
      if redis.call('EXISTS', fk(q, f)) == 0 then
        redis.call('SET', fk(q, f), 'true')
        redis.call('SADD', fieldsk(q), f)
        ksadd(q, c)
        if redis.call('SISMEMBER', supk(r), c) == 1 then redis.call('SADD', supk(q), c) end
        if learned then redis.call('HSET', lrnk(q), c, learned) end
      elseif learned then
        if redis.call('HEXISTS', lrnk(q), c) == 1 then learnall(q, c, learned) end
      else
        redis.call('HDEL', lrnk(q), c)
      end
      if redis.call('GET', 'cid:' .. c) == r then
        redis.call('SET', 'cid:' .. c, q)
        redis.call('SREM', 'cidalt:' .. c, q)
      else
        redis.call('SREM', 'cidalt:' .. c, r)
        if redis.call('GET', 'cid:' .. c) ~= q then redis.call('SADD', 'cidalt:' .. c, q) end
      end
    elseif f ~= 'filePath' and f ~= 'sizeByte' and f ~= 'mtime' then
      if redis.call('EXISTS', fk(q, f)) == 0 then setf(q, f, redis.call('GET', fk(r, f))) end
    end
    redis.call('DEL', fk(r, f))
  end
  if redis.call('EXISTS', ownk(q)) == 0 and redis.call('EXISTS', ownk(r)) == 1 then
    redis.call('HSET', ownk(q), unpack(redis.call('HGETALL', ownk(r))))
  end
  -- The peers that supplied r supplied q now.
  if redis.call('EXISTS', 'peers:' .. r) == 1 then
    redis.call('SUNIONSTORE', 'peers:' .. q, 'peers:' .. q, 'peers:' .. r)
  end
  if redis.call('EXISTS', 'conflicts:' .. r) == 1 then
    redis.call('SUNIONSTORE', 'conflicts:' .. q, 'conflicts:' .. q, 'conflicts:' .. r)
  end
  redis.call('DEL', fieldsk(r), ownk(r), supk(r), lrnk(r), 'peers:' .. r, 'conflicts:' .. r)
  redis.call('ZREM', 'peerroots', r)
  redis.call('SREM', IDX, r)
  kswhy(r, 'merge', nil, q)
  kswhy(q, 'merge')
end
-- arrive: a new local path with midhash mid joins the local root that
-- holds the midhash (as a duplicate pending confirmation), or mints root nr.
local function arrive(nr, p, size, mtime, mid, dev, ino, link)
  local cur = redis.call('HGET', pk(p), 'root')
  if cur then return {'exists', cur} end
  local h = redis.call('GET', 'cid:' .. mid)
  if h and redis.call('EXISTS', fk(h, 'filePath')) == 1 and not suponly(h, mid) then
    indexpath(p, h, size, mtime, mid, dev, ino, link)
    redis.call('SADD', fk(h, 'duplicates'), p)
    return {'duplicate', h}
  end
  indexpath(p, nr, size, mtime, mid, dev, ino, link)
  redis.call('SADD', IDX, nr)
  setprimary(nr, p)
  redis.call('HSET', ownk(nr), 'mid', mid)
  ownmember(nr, mid)
  kswhy(nr, 'mint', p)
  return {'minted', nr}
end
-- better reports whether duplicate a makes a better primary than b: a
-- confirmed path before an unconfirmed one, a real file before a symlink,
-- then the smaller path.
local function better(a, b)
  local sa = redis.call('HMGET', pk(a), 'hashed', 'link')
  local sb = redis.call('HMGET', pk(b), 'hashed', 'link')
  if (sa[1] == '1') ~= (sb[1] == '1') then return sa[1] == '1' end
  if (sa[2] == '1') ~= (sb[2] == '1') then return sb[2] == '1' end
  return a < b
end
-- remove detaches local path p: a duplicate leaves its set; a primary is
-- replaced by the best duplicate, or, with none left, the root is deleted.
-- A promoted duplicate whose bytes are not confirmed yet takes none of the
-- old primary's digests: they leave the key-set until it is confirmed.
local function remove(p)
  local r = redis.call('HGET', pk(p), 'root')
  if not r then return {'gone', ''} end
  unindexpath(p)
  if redis.call('GET', fk(r, 'filePath')) ~= p then
    redis.call('SREM', fk(r, 'duplicates'), p)
    return {'removed', r}
  end
  local dups = redis.call('SMEMBERS', fk(r, 'duplicates'))
  if #dups == 0 then
    deleteroot(r)
    return {'deleted', r}
  end
  local pick = dups[1]
  for i = 2, #dups do
    if better(dups[i], pick) then pick = dups[i] end
  end
  redis.call('SREM', fk(r, 'duplicates'), pick)
  setprimary(r, pick)
  if redis.call('HGET', pk(pick), 'hashed') ~= '1' then
    local own = redis.call('HMGET', ownk(r), 'sha', 'ipfs')
    for _, c in ipairs({own[1], own[2]}) do
      if c and redis.call('SISMEMBER', supk(r), c) == 0 then dropmember(r, c) end
    end
    redis.call('HDEL', ownk(r), 'sha', 'ipfs')
  end
  kswhy(r, 'promote', pick)
  return {'promoted', r, pick}
end
local confirm
-- rearrive handles a path whose confirmed bytes disagree with its root:
-- it leaves the root and arrives again, as a new file would.
local function rearrive(p, size, mtime, mid, dev, ino, link, sha, ipfs, nr, nr2)
  remove(p)
  arrive(nr2, p, size, mtime, mid, dev, ino, link)
  return confirm(p, size, mtime, mid, sha, ipfs, nr, nil)
end
-- confirm applies a full hash pass of path p. A primary gains its strong
-- digests (merging into a root whose own bytes have them); a duplicate is
-- confirmed by an equal sha2-256 of the root's own bytes, or split off to
-- the root holding its sha2-256, or to a new root nr (a midhash
-- collision). A primary whose bytes disagree with the root's confirmed
-- duplicates leaves the root (nr2).
confirm = function(p, size, mtime, mid, sha, ipfs, nr, nr2)
  local st = redis.call('HMGET', pk(p), 'root', 'size', 'mtime', 'mid', 'dev', 'ino', 'link')
  local r = st[1]
  if not r then return {'gone', ''} end
  if st[2] ~= size or st[3] ~= mtime or st[4] ~= mid then return {'stale', r} end
  local strong = {sha}
  if ipfs ~= sha then table.insert(strong, ipfs) end
  local own = redis.call('HGET', ownk(r), 'sha')
  local fp = redis.call('GET', fk(r, 'filePath'))
  if fp == p then
    if own and own ~= sha and nr2 then
      return rearrive(p, size, mtime, mid, st[5] or '', st[6] or '', st[7] or '', sha, ipfs, nr, nr2)
    end
    local kind = 'confirmed'
    for _, c in ipairs(strong) do
      local h = redis.call('GET', 'cid:' .. c)
      if h and h ~= r and not suponly(h, c) then
        local hown = redis.call('HGET', ownk(h), 'sha')
        if not hown or hown == sha then
          merge(r, h)
          r, kind = h, 'merged'
          break
        end
      end
    end
    for _, c in ipairs(strong) do ownmember(r, c) end
    redis.call('HSET', ownk(r), 'mid', mid, 'sha', sha, 'ipfs', ipfs)
    redis.call('HSET', pk(p), 'hashed', '1')
    if kind == 'confirmed' then kswhy(r, 'confirm', p) end
    return {kind, r}
  end
  if own == sha then
    redis.call('HSET', pk(p), 'hashed', '1')
    -- A real file is preferred as primary over a symlink.
    if st[7] ~= '1' and fp and redis.call('HGET', pk(fp), 'link') == '1' then
      redis.call('SREM', fk(r, 'duplicates'), p)
      redis.call('SADD', fk(r, 'duplicates'), fp)
      setprimary(r, p)
      kswhy(r, 'promote', p)
    end
    return {'confirmed', r}
  end
  if not own then return {'unknown', r} end
  redis.call('SREM', fk(r, 'duplicates'), p)
  local q = redis.call('GET', 'cid:' .. sha)
  if q then
    local qown = redis.call('HGET', ownk(q), 'sha')
    if qown and qown ~= sha or suponly(q, sha) then q = nil end
  end
  if not q then
    q = nr
    redis.call('SADD', IDX, q)
  end
  attach(q, p)
  redis.call('HSET', pk(p), 'hashed', '1')
  if redis.call('HEXISTS', ownk(q), 'sha') == 0 then
    redis.call('HSET', ownk(q), 'mid', mid, 'sha', sha, 'ipfs', ipfs)
  end
  ownmember(q, mid)
  for _, c in ipairs(strong) do ownmember(q, c) end
  kswhy(q, 'split', p)
  return {'split', q}
end
-- extracted writes the fields extracted from primary path p of root r
-- (a[i..j]: version, the number of owned prefixes, the prefixes, then
-- field/value pairs) unless
-- p's recorded extraction is at least that version. A field under an
-- owned prefix that the new extraction lacks is dropped (a newer parser
-- no longer finds it). Returns the number of fields written.
local function extracted(r, p, a, i, j)
  local xv = tonumber(a[i])
  if tonumber(redis.call('HGET', pk(p), 'xv') or '-1') >= xv then return 0 end
  local np = tonumber(a[i + 1])
  local prefixes = {}
  for k = 1, np do prefixes[k] = a[i + 1 + k] end
  local new, n = {}, 0
  for k = i + 2 + np, j, 2 do
    new[a[k]] = true
    if redis.call('GET', fk(r, a[k])) ~= a[k + 1] then n = n + 1 end
    setf(r, a[k], a[k + 1])
  end
  if np > 0 then
    for _, f in ipairs(redis.call('SMEMBERS', fieldsk(r))) do
      if not new[f] then
        for _, pre in ipairs(prefixes) do
          if f == pre or string.sub(f, 1, #pre + 1) == pre .. '/' then
            redis.call('DEL', fk(r, f))
            redis.call('SREM', fieldsk(r), f)
            n = n + 1
            break
          end
        end
      end
    end
  end
  redis.call('HSET', pk(p), 'xv', a[i])
  return n
end
-- ingestone applies a whole small file (a[i..j]: newRoot1, newRoot2,
-- newRoot3, path, size, mtime, dev, ino, link, midhash, sha, ipfs, then
-- extracted's arguments): arrive when the path is new, confirm, and write
-- its extracted metadata when it ends up a primary. Returns {kind, root,
-- fields written}.
local function ingestone(a, i, j)
  local p, size, mtime, dev, ino, link, mid = a[i + 3], a[i + 4], a[i + 5], a[i + 6], a[i + 7], a[i + 8], a[i + 9]
  local sha, ipfs = a[i + 10], a[i + 11]
  local cur = redis.call('HMGET', pk(p), 'root', 'size', 'mtime', 'mid')
  if not cur[1] and redis.call('EXISTS', 'cid:' .. mid, 'cid:' .. sha, 'cid:' .. ipfs) == 0 then
    -- New bytes at a new path (the common case of a first scan): the same
    -- writes as arrive, confirm and extracted, in a handful of calls.
    local r = a[i]
    local members = {mid, sha}
    if ipfs ~= sha then members[3] = ipfs end
    local kv, names = {fk(r, 'filePath'), p, fk(r, 'sizeByte'), size, fk(r, 'mtime'), mtime}, {'filePath', 'sizeByte', 'mtime'}
    local aliases = {}
    for _, c in ipairs(members) do
      kv[#kv + 1] = fk(r, 'cids/' .. c); kv[#kv + 1] = 'true'
      names[#names + 1] = 'cids/' .. c
      aliases[#aliases + 1] = 'cid:' .. c; aliases[#aliases + 1] = r
    end
    local np = tonumber(a[i + 13])
    for k = i + 14 + np, j, 2 do
      kv[#kv + 1] = fk(r, a[k]); kv[#kv + 1] = a[k + 1]
      names[#names + 1] = a[k]
    end
    redis.call('HSET', pk(p), 'root', r, 'size', size, 'mtime', mtime, 'mid', mid, 'hashed', '1',
      'dev', dev, 'ino', ino, 'link', link, 'xv', a[i + 12])
    redis.call('ZADD', PATHS, 0, p)
    if dev ~= '' and ino ~= '' then redis.call('SADD', inok(dev, ino), p) end
    redis.call('SADD', IDX, r)
    redis.call('MSET', unpack(kv))
    redis.call('SADD', fieldsk(r), unpack(names))
    redis.call('MSET', unpack(aliases))
    redis.call('HSET', ownk(r), 'mid', mid, 'sha', sha, 'ipfs', ipfs)
    -- One entry is both the path's add and the new root's key-set.
    table.sort(members)
    xadd('add', {'path', p, 'midhash256', mid, 'oldPath', '', 'timestamp', EVTS,
      'root', r, 'added', table.concat(members, ' '), 'removed', '', 'into', ''})
    return {'confirmed', r, #names - 3 - #members}
  end
  if not cur[1] then
    arrive(a[i], p, size, mtime, mid, dev, ino, link)
    emit('add', p, mid, '')
  elseif cur[2] ~= size or cur[3] ~= mtime or cur[4] ~= mid then
    return {'stale', cur[1], 0}
  end
  local res = confirm(p, size, mtime, mid, a[i + 10], a[i + 11], a[i + 1], a[i + 2])
  local n = 0
  if res[1] == 'confirmed' or res[1] == 'merged' or res[1] == 'split' then
    if redis.call('GET', fk(res[2], 'filePath')) == p then n = extracted(res[2], p, a, i + 12, j) end
  end
  return {res[1], res[2], n}
end
`

// luaReadPrelude is all the read-only scripts need: they write nothing,
// so they skip the schema helpers and the event flush.
const luaReadPrelude = `
local IDX = 'file:__index__'
local function fk(r, f) return 'file:' .. r .. '/' .. f end
local function fieldsk(r) return 'fields:' .. r end
local function pk(p) return 'path:' .. p end
-- docfor returns root r's document: {{field, value, …}, {duplicate, …},
-- duplicate count, {peer, …}, {learned member, its peers, …}}, at most
-- dmax duplicates (the smallest paths).
local function docfor(r, dmax)
  if redis.call('SISMEMBER', IDX, r) == 0 then return nil end
  local out = {}
  local names = redis.call('SMEMBERS', fieldsk(r))
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
  return {out, dups, n, redis.call('SMEMBERS', 'peers:' .. r), redis.call('HGETALL', 'learned:' .. r)}
end
`

// readScript wraps the body of a read-only script.
func readScript(body string) *redis.Script { return redis.NewScript(luaReadPrelude + body) }

// script wraps a body (the statements of a function returning the
// script's result) with the prelude and the key-set event flush. Every
// script takes the event cap and timestamp as its two last ARGV.
func script(body string) *redis.Script {
	return redis.NewScript(luaPrelude + "local function main()\n" + body + "\nend\nlocal res = main()\nksflush()\nreturn res\n")
}

var (
	// ARGV: newRoot, path, size, mtime, dev, ino, link, midhash, evmax, ts
	luaArrive = script(`
local res = arrive(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[8], ARGV[5], ARGV[6], ARGV[7])
if res[1] ~= 'exists' then emit('add', ARGV[2], ARGV[8], '') end
return res`)

	// ARGV: path, size, mtime, dev, ino, link, midhash, sha, ipfs, newRoot1, newRoot2, evmax, ts
	luaConfirm = script(`
return confirm(ARGV[1], ARGV[2], ARGV[3], ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11])`)

	// ARGV: path, size, mtime, dev, ino, link, midhash, sha, ipfs, newRoot1, newRoot2, newRoot3, evmax, ts
	// A changed file: same content (the sha2-256 of its root's own bytes)
	// only updates size and mtime; new content moves the path to the root
	// that content belongs to, dropping the old root if it became empty.
	luaChange = script(`
local p, size, mtime, dev, ino, link, mid, sha = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]
local r = redis.call('HGET', pk(p), 'root')
if not r then return {'gone', ''} end
if redis.call('HGET', ownk(r), 'sha') == sha then
  redis.call('HSET', pk(p), 'size', size, 'mtime', mtime, 'mid', mid, 'hashed', '1', 'dev', dev, 'ino', ino, 'link', link)
  if redis.call('GET', fk(r, 'filePath')) == p then setprimary(r, p) end
  emit('change', p, mid, '')
  return {'same', r}
end
remove(p)
arrive(ARGV[10], p, size, mtime, mid, dev, ino, link)
local res = confirm(p, size, mtime, mid, sha, ARGV[9], ARGV[11], ARGV[12])
emit('change', p, mid, '')
return res`)

	// ARGV: newRoot1, newRoot2, newRoot3, path, size, mtime, dev, ino, link,
	// midhash, sha, ipfs, then extracted's arguments (from 13), evmax, ts.
	// A whole small file in one step: arrive when the path is new, confirm,
	// and write its extracted metadata when it ends up a primary. Returns
	// {kind, root, fields written}.
	luaIngest = script(`return ingestone(ARGV, 1, #ARGV - 2)`)

	// ARGV: for each file the number of its arguments then ingestone's
	// arguments; evmax, ts. Returns ingestone's answers one after the
	// other (three values a file).
	luaIngestMany = script(`
local out, k = {}, 1
while k <= #ARGV - 2 do
  local n = tonumber(ARGV[k])
  local res = ingestone(ARGV, k + 1, k + n)
  out[#out + 1] = res[1]; out[#out + 1] = res[2]; out[#out + 1] = res[3]
  k = k + n + 1
end
return out`)

	// ARGV: path, then extracted's arguments (from 2), evmax, ts. Writes
	// the metadata extracted from a primary path. Returns {kind, root,
	// fields written}; kind 'gone' when the path is not a primary.
	luaExtracted = script(`
local p = ARGV[1]
local r = redis.call('HGET', pk(p), 'root')
if not r or redis.call('GET', fk(r, 'filePath')) ~= p then return {'gone', '', 0} end
return {'confirmed', r, extracted(r, p, ARGV, 2, #ARGV - 2)}`)

	// ARGV: path, eventType ('' for none), evmax, ts
	luaRemove = script(`
local mid = redis.call('HGET', pk(ARGV[1]), 'mid')
local res = remove(ARGV[1])
if res[1] ~= 'gone' and ARGV[2] ~= '' then emit(ARGV[2], ARGV[1], mid, '') end
return res`)

	// ARGV: oldPath, newPath, replace ('1' releases a known target), evmax, ts
	luaRename = script(`
local old, new = ARGV[1], ARGV[2]
local st = redis.call('HMGET', pk(old), 'root', 'mid', 'dev', 'ino')
local r = st[1]
if not r then return {'gone', ''} end
if old == new then return {'renamed', r} end
if redis.call('EXISTS', pk(new)) == 1 then
  if ARGV[3] ~= '1' then return {'exists', redis.call('HGET', pk(new), 'root')} end
  remove(new)
  r = redis.call('HGET', pk(old), 'root')
end
redis.call('RENAME', pk(old), pk(new))
redis.call('HDEL', pk(new), 'xv')
redis.call('ZREM', PATHS, old)
redis.call('ZADD', PATHS, 0, new)
if st[3] and st[3] ~= '' then
  redis.call('SREM', inok(st[3], st[4]), old)
  redis.call('SADD', inok(st[3], st[4]), new)
end
if redis.call('GET', fk(r, 'filePath')) == old then
  setf(r, 'filePath', new)
else
  redis.call('SREM', fk(r, 'duplicates'), old)
  redis.call('SADD', fk(r, 'duplicates'), new)
end
emit('rename', new, st[2], old)
return {'renamed', r}`)

	// ARGV: root, path, size, mtime, evmax, ts
	luaMint = script(`
local r, p = ARGV[1], ARGV[2]
local cur = redis.call('HGET', pk(p), 'root')
if cur then return {'exists', cur} end
indexpath(p, r, ARGV[3], ARGV[4], '', '', '', '')
redis.call('SADD', IDX, r)
setprimary(r, p)
kswhy(r, 'mint', p)
return {'minted', r}`)

	// ARGV: root, path, size, mtime, midhash, evmax, ts
	luaAddDuplicate = script(`
local r, p = ARGV[1], ARGV[2]
if redis.call('SISMEMBER', IDX, r) == 0 then return {'gone', ''} end
local cur = redis.call('HGET', pk(p), 'root')
if cur then return {'exists', cur} end
indexpath(p, r, ARGV[3], ARGV[4], ARGV[5], '', '', '')
attach(r, p)
return {'duplicate', r}`)

	// ARGV: root, cid, evmax, ts. The member is recorded as supplied (not
	// computed from this node's bytes) unless the root already had it.
	luaAddAlias = script(`
local r, c = ARGV[1], ARGV[2]
if redis.call('SISMEMBER', IDX, r) == 0 then return {'gone', ''} end
local had = redis.call('EXISTS', fk(r, 'cids/' .. c))
if had == 0 then redis.call('SADD', supk(r), c) end
-- Supplied locally: the node vouches for it, whoever else said so.
redis.call('HDEL', lrnk(r), c)
local h = member(r, c)
if h ~= r then return {'conflict', h} end
if had == 1 then return {'exists', r} end
return {'added', r}`)

	// ARGV: newRoot, cid, evmax, ts
	luaMergeIf = script(`
local r, c = ARGV[1], ARGV[2]
if redis.call('SISMEMBER', IDX, r) == 0 then return {'gone', ''} end
local h = redis.call('GET', 'cid:' .. c)
if not h or h == r or redis.call('SISMEMBER', IDX, h) == 0 then
  if redis.call('EXISTS', fk(r, 'cids/' .. c)) == 0 then redis.call('SADD', supk(r), c) end
  member(r, c)
  return {'kept', r}
end
merge(r, h)
if redis.call('EXISTS', fk(h, 'cids/' .. c)) == 0 then redis.call('SADD', supk(h), c) end
member(h, c)
return {'merged', h}`)

	// ARGV: deleteOrphans ('1'), then keys file:<root>/<field>, evmax, ts.
	// Brings the field index in step with what the keys are now: a STRING
	// key of an indexed root is listed (a cids/<cid> one joins the key-set
	// as a supplied member, with its alias when free), a missing one is
	// unlisted (a key-set member leaves, its alias passes on). Keys of roots
	// that are not indexed are left, or deleted with deleteOrphans. Other
	// types and the duplicates set are not fields. Returns {listed,
	// unlisted, deleted}.
	luaTrack = script(`
local orphans = ARGV[1] == '1'
local listed, unlisted, deleted = 0, 0, 0
for i = 2, #ARGV - 2 do
  local k = ARGV[i]
  local rest = string.sub(k, 6)
  local slash = string.find(rest, '/', 1, true)
  if string.sub(k, 1, 5) == 'file:' and slash and slash > 1 and slash < #rest then
    local r, f = string.sub(rest, 1, slash - 1), string.sub(rest, slash + 1)
    local c = nil
    if string.sub(f, 1, 5) == 'cids/' then c = string.sub(f, 6) end
    if f == 'duplicates' then
    elseif redis.call('SISMEMBER', IDX, r) == 0 then
      if orphans and redis.call('EXISTS', k) == 1 then
        redis.call('DEL', k)
        deleted = deleted + 1
      end
    else
      local t = redis.call('TYPE', k)['ok']
      local had = redis.call('SISMEMBER', fieldsk(r), f) == 1
      if t == 'string' then
        if c then
          if not had then redis.call('SADD', supk(r), c); listed = listed + 1 end
          member(r, c)
        elseif not had then
          redis.call('SADD', fieldsk(r), f)
          listed = listed + 1
        end
      elseif t == 'none' and had then
        if c then
          ksrem(r, c)
          dropmember(r, c)
        else
          redis.call('SREM', fieldsk(r), f)
        end
        unlisted = unlisted + 1
      end
    end
  end
end
return {listed, unlisted, deleted}`)

	// ARGV: root, evmax, ts
	luaDeleteRoot = script(`
if redis.call('SISMEMBER', IDX, ARGV[1]) == 0 then return {'gone', ''} end
deleteroot(ARGV[1])
return {'deleted', ARGV[1]}`)

	// ARGV: root, field1, value1, …, evmax, ts. Returns the number of
	// fields written.
	luaSetFields = script(`
local r = ARGV[1]
if redis.call('SISMEMBER', IDX, r) == 0 then return -1 end
local n = 0
for i = 2, #ARGV - 2, 2 do
  if redis.call('GET', fk(r, ARGV[i])) ~= ARGV[i + 1] then n = n + 1 end
  setf(r, ARGV[i], ARGV[i + 1])
end
return n`)

	// ARGV: path. Returns {root, size, mtime, mid, hashed, primary, dev,
	// ino, link, xv} or nil.
	luaPath = readScript(`
local st = redis.call('HMGET', pk(ARGV[1]), 'root', 'size', 'mtime', 'mid', 'hashed', 'dev', 'ino', 'link', 'xv')
if not st[1] then return nil end
local primary = '0'
if redis.call('GET', fk(st[1], 'filePath')) == ARGV[1] then primary = '1' end
return {st[1], st[2] or '', st[3] or '', st[4] or '', st[5] or '', primary, st[6] or '', st[7] or '', st[8] or '', st[9] or ''}`)
)
