-- readprelude.lua: all the read-only scripts need. store/lua.go puts it
-- before a read script's body. They write nothing, so they skip the
-- schema helpers and the event flush, and take no event arguments. No
-- script takes KEYS.
--
-- Every top-level local here is a helper the read scripts call;
-- .luacheckrc lists them (add a new one there too).
local IDX = 'file:__index__'
local function fk(r, f) return 'file:' .. r .. '/' .. f end
-- docfor returns root r's document: {{field, value, …}, {duplicate, …},
-- duplicate count, {peer, …}, {learned member, its peers, …}}, at most
-- dmax duplicates (the smallest paths).
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
  return {out, dups, n, redis.call('SMEMBERS', 'peers:' .. r), redis.call('HGETALL', 'learned:' .. r)}
end
