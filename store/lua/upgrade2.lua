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
