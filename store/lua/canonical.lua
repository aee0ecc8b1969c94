-- canonical.lua (Store.CanonicalCIDs): what the canonical CIDs of some
-- roots, and of the local files some CIDs name, are elected from, without
-- reading the documents. A read script.
--
-- ARGV (canonicalArgs): the number of roots n, n roots, then CIDs.
-- Reply (decodeCanonical): for each root, then each CID, false when
--   there is no such root (or the CID names no local file), else
--   {root, local (1 or 0), {member, …}, {learned member, …}}.
local function info(r)
  if not r or redis.call('SISMEMBER', IDX, r) == 0 then return false end
  local ms = {}
  for _, e in ipairs(redis.call('HKEYS', fieldsk(r))) do
    local c = flcid(e)
    if c then ms[#ms + 1] = c end
  end
  return {r, redis.call('EXISTS', fk(r, 'filePath')), ms, redis.call('HKEYS', 'learned:' .. r)}
end
local out = {}
local n = tonumber(ARGV[1])
for i = 2, n + 1 do out[#out + 1] = info(ARGV[i]) end
for i = n + 2, #ARGV do
  local x = info(redis.call('GET', 'cid:' .. ARGV[i]))
  if x and x[2] == 0 then x = false end
  out[#out + 1] = x
end
return out
