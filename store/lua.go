package store

import "github.com/redis/go-redis/v9"

// luaPrelude holds the schema helpers every script shares. Scripts run
// atomically inside Redis, so no reader ever sees a half-done mint, merge,
// delete or promote. Keys are built inside the scripts (the node talks to a
// single, non-clustered Redis).
const luaPrelude = `
local EVMAX, EVTS
local IDX = 'file:__index__'
local PATHS = 'path:__index__'
local function fk(r, f) return 'file:' .. r .. '/' .. f end
local function fieldsk(r) return 'fields:' .. r end
local function pk(p) return 'path:' .. p end
local function setf(r, f, v)
  if redis.call('GET', fk(r, f)) ~= v then redis.call('SET', fk(r, f), v) end
  redis.call('SADD', fieldsk(r), f)
end
local function emit(typ, p, mid, old)
  if EVMAX == nil then return end
  redis.call('XADD', 'meta:events', 'MAXLEN', '~', EVMAX, '*',
    'type', typ, 'path', p, 'midhash256', mid or '', 'oldPath', old or '', 'timestamp', EVTS)
end
local function indexpath(p, r, size, mtime, mid)
  redis.call('HSET', pk(p), 'root', r, 'size', size, 'mtime', mtime, 'mid', mid, 'hashed', '0')
  redis.call('ZADD', PATHS, 0, p)
end
local function unindexpath(p)
  redis.call('DEL', pk(p))
  redis.call('ZREM', PATHS, p)
end
-- member puts cid c in r's key-set and points the alias at r when it is
-- free; an alias held by another root is never repointed (r is recorded as
-- an alternative holder). Returns the alias holder.
local function member(r, c)
  setf(r, 'cids/' .. c, 'true')
  local h = redis.call('GET', 'cid:' .. c)
  if not h then
    redis.call('SET', 'cid:' .. c, r)
    return r
  end
  if h ~= r then redis.call('SADD', 'cidalt:' .. c, r) end
  return h
end
-- dropmember takes c out of r's key-set; an alias r held passes to an
-- alternative holder, if there is one.
local function dropmember(r, c)
  redis.call('DEL', fk(r, 'cids/' .. c))
  redis.call('SREM', fieldsk(r), 'cids/' .. c)
  if redis.call('GET', 'cid:' .. c) == r then
    local nxt = redis.call('SPOP', 'cidalt:' .. c)
    if nxt then redis.call('SET', 'cid:' .. c, nxt) else redis.call('DEL', 'cid:' .. c) end
  else
    redis.call('SREM', 'cidalt:' .. c, r)
  end
end
local function setprimary(r, p)
  local st = redis.call('HMGET', pk(p), 'size', 'mtime')
  setf(r, 'filePath', p)
  setf(r, 'sizeByte', st[1] or '0')
  setf(r, 'mtime', st[2] or '0')
end
local function mint(r, p)
  redis.call('SADD', IDX, r)
  setprimary(r, p)
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
  redis.call('DEL', fieldsk(r))
  redis.call('SREM', IDX, r)
end
-- merge folds root r into q (they share a strong digest): paths, key-set
-- members and aliases move to q; q keeps its own value where both have a
-- field.
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
      setf(q, f, 'true')
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
  redis.call('DEL', fieldsk(r))
  redis.call('SREM', IDX, r)
end
-- arrive: a new local path with midhash mid joins the root that holds
-- the midhash (as a duplicate pending confirmation), or mints root nr.
local function arrive(nr, p, size, mtime, mid)
  local cur = redis.call('HGET', pk(p), 'root')
  if cur then return {'exists', cur} end
  local h = redis.call('GET', 'cid:' .. mid)
  if h and redis.call('EXISTS', fk(h, 'filePath')) == 1 then
    indexpath(p, h, size, mtime, mid)
    redis.call('SADD', fk(h, 'duplicates'), p)
    return {'duplicate', h}
  end
  indexpath(p, nr, size, mtime, mid)
  mint(nr, p)
  member(nr, mid)
  return {'minted', nr}
end
-- remove detaches local path p: a duplicate leaves its set; a primary is
-- replaced by a duplicate (a confirmed one first, then the smallest path),
-- or, with none left, the root is deleted.
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
  table.sort(dups)
  local pick = dups[1]
  for _, d in ipairs(dups) do
    if redis.call('HGET', pk(d), 'hashed') == '1' then pick = d; break end
  end
  redis.call('SREM', fk(r, 'duplicates'), pick)
  setprimary(r, pick)
  return {'promoted', r, pick}
end
-- confirm applies a full hash pass of path p. A primary gains its strong
-- digests (merging into a root that already holds one of them); a
-- duplicate is confirmed by an equal sha2-256, or split off to the root
-- holding its sha2-256, or to a new root nr (a midhash collision).
local function confirm(p, size, mtime, mid, sha, ipfs, nr)
  local st = redis.call('HMGET', pk(p), 'root', 'size', 'mtime', 'mid')
  local r = st[1]
  if not r then return {'gone', ''} end
  if st[2] ~= size or st[3] ~= mtime or st[4] ~= mid then return {'stale', r} end
  local strong = {sha}
  if ipfs ~= sha then table.insert(strong, ipfs) end
  if redis.call('GET', fk(r, 'filePath')) == p then
    local kind = 'confirmed'
    for _, c in ipairs(strong) do
      local h = redis.call('GET', 'cid:' .. c)
      if h and h ~= r then
        merge(r, h)
        r, kind = h, 'merged'
        break
      end
    end
    for _, c in ipairs(strong) do member(r, c) end
    redis.call('HSET', pk(p), 'hashed', '1')
    return {kind, r}
  end
  if redis.call('EXISTS', fk(r, 'cids/' .. sha)) == 1 then
    redis.call('HSET', pk(p), 'hashed', '1')
    return {'confirmed', r}
  end
  local fp = redis.call('GET', fk(r, 'filePath'))
  if not fp or redis.call('HGET', pk(fp), 'hashed') ~= '1' then return {'unknown', r} end
  redis.call('SREM', fk(r, 'duplicates'), p)
  local q = redis.call('GET', 'cid:' .. sha)
  if not q then
    q = nr
    redis.call('SADD', IDX, q)
  end
  attach(q, p)
  redis.call('HSET', pk(p), 'hashed', '1')
  member(q, mid)
  for _, c in ipairs(strong) do member(q, c) end
  return {'split', q}
end
`

func script(body string) *redis.Script { return redis.NewScript(luaPrelude + body) }

// evArgs reads the event cap and timestamp from the two last ARGV.
const evArgs = `
EVMAX = ARGV[#ARGV - 1]
EVTS = ARGV[#ARGV]
`

var (
	// ARGV: newRoot, path, size, mtime, midhash, evmax, ts
	luaArrive = script(evArgs + `
local res = arrive(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
if res[1] ~= 'exists' then emit('add', ARGV[2], ARGV[5], '') end
return res`)

	// ARGV: path, size, mtime, midhash, sha, ipfs, newRoot
	luaConfirm = script(`
return confirm(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])`)

	// ARGV: path, size, mtime, midhash, sha, ipfs, newRoot1, newRoot2, evmax, ts
	// A changed file: same content (sha2-256 already in its root's key-set)
	// only updates size and mtime; new content moves the path to the root
	// that content belongs to, dropping the old root if it became empty.
	luaChange = script(evArgs + `
local p, size, mtime, mid, sha = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local r = redis.call('HGET', pk(p), 'root')
if not r then return {'gone', ''} end
if redis.call('EXISTS', fk(r, 'cids/' .. sha)) == 1 then
  redis.call('HSET', pk(p), 'size', size, 'mtime', mtime, 'mid', mid, 'hashed', '1')
  if redis.call('GET', fk(r, 'filePath')) == p then setprimary(r, p) end
  emit('change', p, mid, '')
  return {'same', r}
end
remove(p)
arrive(ARGV[7], p, size, mtime, mid)
local res = confirm(p, size, mtime, mid, sha, ARGV[6], ARGV[8])
emit('change', p, mid, '')
return res`)

	// ARGV: path, eventType ('' for none), evmax, ts
	luaRemove = script(evArgs + `
local mid = redis.call('HGET', pk(ARGV[1]), 'mid')
local res = remove(ARGV[1])
if res[1] ~= 'gone' and ARGV[2] ~= '' then emit(ARGV[2], ARGV[1], mid, '') end
return res`)

	// ARGV: oldPath, newPath, evmax, ts
	luaRename = script(evArgs + `
local old, new = ARGV[1], ARGV[2]
local st = redis.call('HMGET', pk(old), 'root', 'mid')
local r = st[1]
if not r then return {'gone', ''} end
if old == new then return {'renamed', r} end
if redis.call('EXISTS', pk(new)) == 1 then return {'exists', redis.call('HGET', pk(new), 'root')} end
redis.call('RENAME', pk(old), pk(new))
redis.call('ZREM', PATHS, old)
redis.call('ZADD', PATHS, 0, new)
if redis.call('GET', fk(r, 'filePath')) == old then
  setf(r, 'filePath', new)
else
  redis.call('SREM', fk(r, 'duplicates'), old)
  redis.call('SADD', fk(r, 'duplicates'), new)
end
emit('rename', new, st[2], old)
return {'renamed', r}`)

	// ARGV: root, path, size, mtime
	luaMint = script(`
local r, p = ARGV[1], ARGV[2]
local cur = redis.call('HGET', pk(p), 'root')
if cur then return {'exists', cur} end
indexpath(p, r, ARGV[3], ARGV[4], '')
mint(r, p)
return {'minted', r}`)

	// ARGV: root, path, size, mtime, midhash
	luaAddDuplicate = script(`
local r, p = ARGV[1], ARGV[2]
if redis.call('SISMEMBER', IDX, r) == 0 then return {'gone', ''} end
local cur = redis.call('HGET', pk(p), 'root')
if cur then return {'exists', cur} end
indexpath(p, r, ARGV[3], ARGV[4], ARGV[5])
attach(r, p)
return {'duplicate', r}`)

	// ARGV: root, cid
	luaAddAlias = script(`
local r, c = ARGV[1], ARGV[2]
if redis.call('SISMEMBER', IDX, r) == 0 then return {'gone', ''} end
local had = redis.call('EXISTS', fk(r, 'cids/' .. c))
local h = member(r, c)
if h ~= r then return {'conflict', h} end
if had == 1 then return {'exists', r} end
return {'added', r}`)

	// ARGV: newRoot, cid
	luaMergeIf = script(`
local r, c = ARGV[1], ARGV[2]
if redis.call('SISMEMBER', IDX, r) == 0 then return {'gone', ''} end
local h = redis.call('GET', 'cid:' .. c)
if not h or h == r or redis.call('SISMEMBER', IDX, h) == 0 then
  member(r, c)
  return {'kept', r}
end
merge(r, h)
member(h, c)
return {'merged', h}`)

	// ARGV: root
	luaDeleteRoot = script(`
if redis.call('SISMEMBER', IDX, ARGV[1]) == 0 then return {'gone', ''} end
deleteroot(ARGV[1])
return {'deleted', ARGV[1]}`)

	// ARGV: root, field1, value1, …  Returns the number of fields written.
	luaSetFields = script(`
local r = ARGV[1]
if redis.call('SISMEMBER', IDX, r) == 0 then return -1 end
local n = 0
for i = 2, #ARGV, 2 do
  if redis.call('GET', fk(r, ARGV[i])) ~= ARGV[i + 1] then n = n + 1 end
  setf(r, ARGV[i], ARGV[i + 1])
end
return n`)

	// ARGV: path. Returns {root, size, mtime, mid, hashed, primary} or nil.
	luaPath = script(`
local st = redis.call('HMGET', pk(ARGV[1]), 'root', 'size', 'mtime', 'mid', 'hashed')
if not st[1] then return nil end
local primary = '0'
if redis.call('GET', fk(st[1], 'filePath')) == ARGV[1] then primary = '1' end
return {st[1], st[2] or '', st[3] or '', st[4] or '', st[5] or '', primary}`)

	// ARGV: root. Returns {{field, value, …}, {duplicate, …}} or nil.
	luaDocument = script(`
local r = ARGV[1]
if redis.call('SISMEMBER', IDX, r) == 0 then return nil end
local out = {}
for _, f in ipairs(redis.call('SMEMBERS', fieldsk(r))) do
  local v = redis.call('GET', fk(r, f))
  if v then out[#out + 1] = f; out[#out + 1] = v end
end
return {out, redis.call('SMEMBERS', fk(r, 'duplicates'))}`)
)
