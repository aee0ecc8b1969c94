-- upgrade2.lua (Store.upgrade, layout 1 → 2): converts one batch of the
-- keys a SCAN of the whole database returned, then records the SCAN
-- cursor to resume from. A bare script after common.lua. Converting a key
-- twice changes nothing, so a batch cut short by a crash is simply
-- converted again.
--
--   fields:<root> SET   → the fields:<root> HASH of layout 2, with the
--                         root's own:<root> digests and its toks:<root>
--                         tokens (posted under tk:<token>)
--   own:<root>          → into fields:<root> (a root the SET pass has
--                         not reached yet), deleted for a root that no
--                         longer exists
--   toks:<root>         → into fields:<root> (as own:), deleted
--   tok:<token> ZSET    → deleted (its postings are rebuilt from toks:)
--   inode:<dev>:<ino>   → deleted when it lists one path that is not a
--                         symbolic link: layout 2 indexes only inodes that
--                         may have another known name
--
-- ARGV (upgradeArgs): cursor, keys...
-- Reply (decodeUpgrade): the number of keys converted.
local IDX = 'file:__index__'
-- The search postings of layout 2: tk:<token> is a HASH root → weight ('2'
-- title, '1' elsewhere); past POSTMAX postings per bucket on average it is
-- split into buckets tk:<token>:<suffix> by the last L characters of the
-- root (uniformly random in a UUIDv7), each listpack-sized; tk:<token>
-- then holds only '*' (L) and '#' (the postings in all). Layout 3 has
-- none (upgrade3.lua).
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
local function convert(r)
  local fk = fieldsk(r)
  if redis.call('TYPE', fk).ok == 'set' then
    local names = redis.call('SMEMBERS', fk)
    redis.call('DEL', fk)
    for _, f in ipairs(names) do
      if flname(f) then redis.call('HSET', fk, flenc(f), '') end
    end
  end
  local ok = 'own:' .. r
  local kv = redis.call('HGETALL', ok)
  if #kv > 0 then ownset(r, unpack(kv)) end
  redis.call('DEL', ok)
  local tk = 'toks:' .. r
  local tv = redis.call('HGETALL', tk)
  for j = 1, #tv, 2 do
    tkadd(tv[j], r, tv[j + 1])
    redis.call('HSET', fk, '//' .. tv[j], tv[j + 1])
  end
  redis.call('DEL', tk)
end
local n = 0
for i = 2, #ARGV do
  local k = ARGV[i]
  local fam, rest = string.match(k, '^(%a+):(.*)$')
  if fam == 'fields' and redis.call('TYPE', k).ok == 'set' then
    convert(rest); n = n + 1
  elseif fam == 'own' or fam == 'toks' then
    if redis.call('SISMEMBER', IDX, rest) == 1 then convert(rest) else redis.call('DEL', k) end
    n = n + 1
  elseif fam == 'tok' and redis.call('TYPE', k).ok == 'zset' then
    redis.call('DEL', k); n = n + 1
  elseif fam == 'inode' and redis.call('SCARD', k) == 1 then
    local m = redis.call('SRANDMEMBER', k)
    if redis.call('HGET', 'path:' .. m, 'link') ~= '1' then redis.call('DEL', k); n = n + 1 end
  end
end
redis.call('HSET', 'meta:upgrade', 'cursor', ARGV[1])
return n
