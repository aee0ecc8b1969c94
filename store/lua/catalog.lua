-- catalog.lua (Store.CatalogEntries): what a list of the library shows of
-- some roots, without reading their documents: only the fields named,
-- the key-set and learned members (to elect the canonical CID) and the
-- peers. A read script.
--
-- ARGV (catalogArgs): the number of roots n, n roots, then the field
--   names to read; a name ending in "/" stands for every field under it.
--   A peer's claim origin/<peer>/<name> is read when <name> is named.
-- Reply (decodeCatalog): for each root, false when there is no such
--   root, else {root, {member, …}, {learned member, …}, {peer, …},
--   {field, value, …}, {edited field, …}}. A root is local when its fields hold filePath, as
--   for Store.Document.
local n = tonumber(ARGV[1])
local exact, prefixes = {}, {}
for i = n + 2, #ARGV do
  local f = ARGV[i]
  if string.sub(f, -1) == '/' then prefixes[#prefixes + 1] = f else exact[f] = true end
end
local function wanted(f)
  if string.sub(f, 1, 7) == 'origin/' then
    local slash = string.find(f, '/', 8, true)
    if not slash then return false end
    f = string.sub(f, slash + 1)
  end
  if exact[f] then return true end
  for _, p in ipairs(prefixes) do
    if string.sub(f, 1, #p) == p then return true end
  end
  return false
end
local function entry(r)
  if redis.call('SISMEMBER', IDX, r) == 0 then return false end
  local ms, names = {}, {}
  for _, e in ipairs(redis.call('HKEYS', fieldsk(r))) do
    local c = flcid(e)
    if c then
      ms[#ms + 1] = c
    else
      local f = fldec(e)
      if wanted(f) then names[#names + 1] = f end
    end
  end
  local kv = {}
  if #names > 0 then
    local keys = {}
    for i, f in ipairs(names) do keys[i] = fk(r, f) end
    -- MGET answers nil for a key of another type (an outside writer's).
    for i, v in ipairs(redis.call('MGET', unpack(keys))) do
      if v then kv[#kv + 1] = names[i]; kv[#kv + 1] = v end
    end
  end
  return {r, ms, redis.call('HKEYS', 'learned:' .. r), redis.call('SMEMBERS', 'peers:' .. r), kv,
    redis.call('SMEMBERS', 'edited:' .. r)}
end
local out = {}
for i = 2, n + 1 do out[#out + 1] = entry(ARGV[i]) end
return out
