-- upgrade3.lua (Store.upgrade, layout 2 → 3): converts one batch of the
-- keys a SCAN of the whole database returned, then records the SCAN
-- cursor to resume from. A bare script after common.lua. Converting a key
-- twice changes nothing, so a batch cut short by a crash is simply
-- converted again.
--
--   path:<path> HASH   → its state joins the path's member of
--                        path:__index__ (common.lua: pput), and the hash
--                        is deleted: the path is stored once
--   tk:<token>…        → deleted: the search index is on disk
--   fields:<root>      → its //<token> entries are deleted, the names
--                        that have a code (FLCODE) are listed as it; and
--                        when the
--                        root has peers and no learned:<root> (a store
--                        written before learned: existed), every member
--                        of supplied:<root> that is no digest of the
--                        root's own bytes is recorded as learned from
--                        all of peers:<root> (docs/schema.md says why)
--
-- ARGV (upgradeArgs): cursor, keys...
-- Reply (decodeUpgrade): the number of keys converted.
local function path(k)
  local p = string.sub(k, 6)
  local v = redis.call('HMGET', k, unpack(PF))
  -- m: the bare member layout 2 kept, which pput takes out.
  local st = {m = p}
  for i, f in ipairs(PF) do st[f] = v[i] or '' end
  pput(p, st)
  redis.call('DEL', k)
end
local function settle(r)
  local lk = 'learned:' .. r
  if redis.call('EXISTS', lk) == 1 then return end
  local peers = redis.call('SMEMBERS', 'peers:' .. r)
  if #peers == 0 then return end
  table.sort(peers)
  local list = table.concat(peers, ' ')
  for _, c in ipairs(redis.call('SMEMBERS', 'supplied:' .. r)) do
    local roles = redis.call('HGET', fieldsk(r), '/' .. c)
    if roles == '' then redis.call('HSET', lk, c, list) end
  end
end
local function fields(k, r)
  local drop, coded = {}, {}
  for _, e in ipairs(redis.call('HKEYS', k)) do
    if string.sub(e, 1, 2) == '//' then
      drop[#drop + 1] = e
    elseif FLCODE[e] then
      drop[#drop + 1] = e
      coded[#coded + 1] = FLCODE[e]
      coded[#coded + 1] = ''
    end
  end
  for i = 1, #drop, 512 do
    redis.call('HDEL', k, unpack(drop, i, math.min(i + 511, #drop)))
  end
  if #coded > 0 then redis.call('HSET', k, unpack(coded)) end
  settle(r)
end
local n = 0
for i = 2, #ARGV do
  local k = ARGV[i]
  local fam, rest = string.match(k, '^(%a+):(.*)$')
  if fam == 'path' and k ~= PATHS and redis.call('TYPE', k).ok == 'hash' then
    path(k); n = n + 1
  elseif fam == 'tk' then
    redis.call('DEL', k); n = n + 1
  elseif fam == 'fields' and redis.call('TYPE', k).ok == 'hash' then
    fields(k, rest); n = n + 1
  end
end
redis.call('HSET', 'meta:upgrade', 'cursor', ARGV[1])
return n
