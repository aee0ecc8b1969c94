-- prelude.lua: the schema helpers every write script shares. store/lua.go
-- puts it before a write script's body, which runs as the function main:
--
--   <prelude> local function main() <body> end
--   local res = main() ksflush() return res
--
-- Scripts run atomically inside Redis, so no reader ever sees a half-done
-- mint, merge, delete or promote. Keys are built inside the scripts (the
-- node talks to a single, non-clustered Redis): no script takes KEYS.
--
-- Every write script takes the event cap and timestamp as its two last
-- ARGV (EVMAX, EVTS below; the Go runner appends them) and ends by
-- appending one key-set event per root whose key-set or local paths it
-- changed (ksflush), so the feed misses nothing. The rank ladder is not
-- known here: which members are a root's own strong digests is recorded
-- among its own digests (the roles of its members in fields:<root>;
-- common.lua),
-- never derived in Lua.
--
-- Every top-level local here is a helper the scripts call; .luacheckrc
-- lists them (add a new one there too).
local EVMAX = ARGV[#ARGV - 1]
local EVTS = ARGV[#ARGV]
local function supk(r) return 'supplied:' .. r end
local function lrnk(r) return 'learned:' .. r end
local function inok(dev, ino) return 'inode:' .. dev .. ':' .. ino end
local function setf(r, f, v)
  if redis.call('GET', fk(r, f)) ~= v then redis.call('SET', fk(r, f), v) end
  fladd(r, f)
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

-- inodeadd puts path p of root r in the inode index when its inode may
-- have another known name: link '1' (a symbolic link: its target's inode)
-- or 'h' (a file with several hard links, or of unknown count; statArgs).
-- A file's only name (link '') is left out. The root's other paths (the
-- same bytes: where another name of the inode can be) recorded with the
-- same inode join the set: the first name of a file hard-linked later was
-- left out when it was alone.
local function inodeadd(p, r, dev, ino, link)
  if dev == '' or ino == '' or link == '' then return end
  local k = inok(dev, ino)
  redis.call('SADD', k, p)
  local others = redis.call('SMEMBERS', fk(r, 'duplicates'))
  others[#others + 1] = redis.call('GET', fk(r, 'filePath')) or nil
  for _, q in ipairs(others) do
    if q ~= p then
      local st = pget(q)
      if st and st.dev == dev and st.ino == ino then redis.call('SADD', k, q) end
    end
  end
end
local function indexpath(p, r, size, mtime, mid, dev, ino, link)
  local st = pget(p) or {}
  st.root, st.size, st.mtime, st.mid, st.hashed, st.dev, st.ino, st.link = r, size, mtime, mid, '0', dev, ino, link
  pput(p, st)
  inodeadd(p, r, dev, ino, link)
end
-- proot returns the root of local path p, or nil.
local function proot(p)
  local st = pget(p)
  return st and st.root
end
local function unindexpath(p)
  local st = pget(p)
  if not st then return end
  if st.dev ~= '' and st.ino ~= '' then redis.call('SREM', inok(st.dev, st.ino), p) end
  redis.call('ZREM', PATHS, st.m)
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
  fladd(r, 'cids/' .. c)
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
  flrem(r, 'cids/' .. c)
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
  local own = ownget(h, 'mid', 'sha', 'ipfs')
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
  local st = pget(p) or {}
  setf(r, 'filePath', p)
  setf(r, 'sizeByte', st.size or '0')
  setf(r, 'mtime', st.mtime or '0')
end
-- attach adds local path p to root q: primary when q has none, else a
-- duplicate.
local function attach(q, p)
  if redis.call('EXISTS', fk(q, 'filePath')) == 0 then setprimary(q, p)
  else redis.call('SADD', fk(q, 'duplicates'), p) end
  pset(p, 'root', q)
end
local function deleteroot(r)
  local fp = redis.call('GET', fk(r, 'filePath'))
  if fp and proot(fp) == r then unindexpath(fp) end
  for _, d in ipairs(redis.call('SMEMBERS', fk(r, 'duplicates'))) do
    if proot(d) == r then unindexpath(d) end
  end
  redis.call('DEL', fk(r, 'duplicates'))
  for _, f in ipairs(flall(r)) do
    if string.sub(f, 1, 5) == 'cids/' then dropmember(r, string.sub(f, 6)) end
    redis.call('DEL', fk(r, f))
  end
  redis.call('DEL', fieldsk(r), supk(r), lrnk(r), 'peers:' .. r, 'conflicts:' .. r, 'edited:' .. r, 'extracted:' .. r)
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
  for _, f in ipairs(flall(r)) do
    if string.sub(f, 1, 5) == 'cids/' then
      local c = string.sub(f, 6)
      ksrem(r, c)
      -- What r learned of c from peers q learns too; what r vouched for
      -- (computed or supplied locally) q vouches for.
      local learned = redis.call('HGET', lrnk(r), c)
      if redis.call('EXISTS', fk(q, f)) == 0 then
        redis.call('SET', fk(q, f), 'true')
        fladd(q, f)
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
  local rown = ownall(r)
  if #ownall(q) == 0 and #rown > 0 then ownset(q, unpack(rown)) end
  -- The peers that supplied r supplied q now.
  if redis.call('EXISTS', 'peers:' .. r) == 1 then
    redis.call('SUNIONSTORE', 'peers:' .. q, 'peers:' .. q, 'peers:' .. r)
  end
  if redis.call('EXISTS', 'conflicts:' .. r) == 1 then
    redis.call('SUNIONSTORE', 'conflicts:' .. q, 'conflicts:' .. q, 'conflicts:' .. r)
  end
  redis.call('DEL', fieldsk(r), supk(r), lrnk(r), 'peers:' .. r, 'conflicts:' .. r)
  redis.call('ZREM', 'peerroots', r)
  redis.call('SREM', IDX, r)
  kswhy(r, 'merge', nil, q)
  kswhy(q, 'merge')
end
-- arrive: a new local path with midhash mid joins the local root that
-- holds the midhash (as a duplicate pending confirmation), or mints root nr.
local function arrive(nr, p, size, mtime, mid, dev, ino, link)
  local cur = proot(p)
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
  ownset(nr, 'mid', mid)
  ownmember(nr, mid)
  kswhy(nr, 'mint', p)
  return {'minted', nr}
end
-- better reports whether duplicate a makes a better primary than b: a
-- confirmed path before an unconfirmed one, a real file before a symlink,
-- then the smaller path.
local function better(a, b)
  local sa, sb = pget(a) or {}, pget(b) or {}
  if (sa.hashed == '1') ~= (sb.hashed == '1') then return sa.hashed == '1' end
  if (sa.link == '1') ~= (sb.link == '1') then return sb.link == '1' end
  return a < b
end
-- remove detaches local path p: a duplicate leaves its set; a primary is
-- replaced by the best duplicate, or, with none left, the root is deleted.
-- A promoted duplicate whose bytes are not confirmed yet takes none of the
-- old primary's digests: they leave the key-set until it is confirmed.
local function remove(p)
  local r = proot(p)
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
  if (pget(pick) or {}).hashed ~= '1' then
    local own = ownget(r, 'sha', 'ipfs')
    for _, c in ipairs({own[1], own[2]}) do
      if c and redis.call('SISMEMBER', supk(r), c) == 0 then dropmember(r, c) end
    end
    owndel(r, 'sha', 'ipfs')
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
  local st = pget(p)
  if not st then return {'gone', ''} end
  local r = st.root
  if st.size ~= size or st.mtime ~= mtime or st.mid ~= mid then return {'stale', r} end
  local strong = {sha}
  if ipfs ~= sha then table.insert(strong, ipfs) end
  local own = ownget(r, 'sha')[1]
  local fp = redis.call('GET', fk(r, 'filePath'))
  if fp == p then
    if own and own ~= sha and nr2 then
      return rearrive(p, size, mtime, mid, st.dev, st.ino, st.link, sha, ipfs, nr, nr2)
    end
    local kind = 'confirmed'
    for _, c in ipairs(strong) do
      local h = redis.call('GET', 'cid:' .. c)
      if h and h ~= r and not suponly(h, c) then
        local hown = ownget(h, 'sha')[1]
        if not hown or hown == sha then
          merge(r, h)
          r, kind = h, 'merged'
          break
        end
      end
    end
    for _, c in ipairs(strong) do ownmember(r, c) end
    ownset(r, 'mid', mid, 'sha', sha, 'ipfs', ipfs)
    pset(p, 'hashed', '1')
    if kind == 'confirmed' then kswhy(r, 'confirm', p) end
    return {kind, r}
  end
  if own == sha then
    pset(p, 'hashed', '1')
    -- A real file is preferred as primary over a symlink.
    if st.link ~= '1' and fp and (pget(fp) or {}).link == '1' then
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
    local qown = ownget(q, 'sha')[1]
    if qown and qown ~= sha or suponly(q, sha) then q = nil end
  end
  if not q then
    q = nr
    redis.call('SADD', IDX, q)
  end
  attach(q, p)
  pset(p, 'hashed', '1')
  if not ownget(q, 'sha')[1] then
    ownset(q, 'mid', mid, 'sha', sha, 'ipfs', ipfs)
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
  -- The version, '=' before it to write even when the last extraction is
  -- as new (what the extractors read beside the file changed: an NFO).
  local v = a[i]
  local refresh = string.sub(v, 1, 1) == '='
  if refresh then v = string.sub(v, 2) end
  local xv = tonumber(v)
  local st = pget(p)
  if not refresh and tonumber(st and st.xv ~= '' and st.xv or '-1') >= xv then return 0 end
  local np = tonumber(a[i + 1])
  local prefixes = {}
  for k = 1, np do prefixes[k] = a[i + 1 + k] end
  -- The household's edits (edited:<r>) stand: what the extractors give
  -- for an edited field waits in extracted:<r>, to come back when the
  -- edit is dropped (edit.lua).
  local edited = {}
  for _, f in ipairs(redis.call('SMEMBERS', 'edited:' .. r)) do edited[f] = true end
  local new, n = {}, 0
  for k = i + 2 + np, j, 2 do
    new[a[k]] = true
    if edited[a[k]] then
      redis.call('HSET', 'extracted:' .. r, a[k], a[k + 1])
    else
      if redis.call('GET', fk(r, a[k])) ~= a[k + 1] then n = n + 1 end
      setf(r, a[k], a[k + 1])
    end
  end
  if np > 0 then
    for _, f in ipairs(flall(r)) do
      if not new[f] then
        for _, pre in ipairs(prefixes) do
          if f == pre or string.sub(f, 1, #pre + 1) == pre .. '/' then
            if edited[f] then
              redis.call('HDEL', 'extracted:' .. r, f)
            else
              redis.call('DEL', fk(r, f))
              flrem(r, f)
              n = n + 1
            end
            break
          end
        end
      end
    end
  end
  if st then
    st.xv = v
    pput(p, st)
  end
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
  local cur = pget(p)
  if not cur and redis.call('EXISTS', 'cid:' .. mid, 'cid:' .. sha, 'cid:' .. ipfs) == 0 then
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
    pput(p, {root = r, size = size, mtime = mtime, mid = mid, hashed = '1', dev = dev, ino = ino, link = link, xv = a[i + 12]})
    inodeadd(p, r, dev, ino, link)
    redis.call('SADD', IDX, r)
    redis.call('MSET', unpack(kv))
    local roles = {[mid] = 'm', [sha] = 's'}
    if ipfs == sha then roles[sha] = 'si' else roles[ipfs] = 'i' end
    local hv = {}
    for _, f in ipairs(names) do
      hv[#hv + 1] = flenc(f)
      hv[#hv + 1] = string.sub(f, 1, 5) == 'cids/' and roles[string.sub(f, 6)] or ''
    end
    redis.call('HSET', fieldsk(r), unpack(hv))
    redis.call('MSET', unpack(aliases))
    -- One entry is both the path's add and the new root's key-set.
    table.sort(members)
    xadd('add', {'path', p, 'midhash256', mid, 'oldPath', '', 'timestamp', EVTS,
      'root', r, 'added', table.concat(members, ' '), 'removed', '', 'into', ''})
    return {'confirmed', r, #names - 3 - #members}
  end
  if not cur then
    arrive(a[i], p, size, mtime, mid, dev, ino, link)
    emit('add', p, mid, '')
  elseif cur.size ~= size or cur.mtime ~= mtime or cur.mid ~= mid then
    return {'stale', cur.root, 0}
  end
  local res = confirm(p, size, mtime, mid, a[i + 10], a[i + 11], a[i + 1], a[i + 2])
  local n = 0
  if res[1] == 'confirmed' or res[1] == 'merged' or res[1] == 'split' then
    if redis.call('GET', fk(res[2], 'filePath')) == p then n = extracted(res[2], p, a, i + 12, j) end
  end
  return {res[1], res[2], n}
end
