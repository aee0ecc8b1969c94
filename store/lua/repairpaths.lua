-- repairpaths.lua (Store.Repair): puts back in the path index the local
-- paths some roots list (filePath, duplicates) that it lost. A bare
-- script after common.lua. The state put back is what the root knows:
-- its size, its own midhash, the primary's mtime (a duplicate's as 0),
-- not hashed, so the next scan hashes the file again and confirms it.
--
-- ARGV (rootsArgs): roots...
-- Reply (decodeUpgrade): the number of paths put back.
local n = 0
local function back(p, r, size, mtime, mid)
  if pget(p) then return end
  pput(p, {root = r, size = size, mtime = mtime, mid = mid, hashed = '0'})
  n = n + 1
end
for _, r in ipairs(ARGV) do
  local fk = 'file:' .. r .. '/'
  local fp = redis.call('GET', fk .. 'filePath')
  if fp then
    local size = redis.call('GET', fk .. 'sizeByte') or '0'
    local mid = ownget(r, 'mid')[1] or ''
    back(fp, r, size, redis.call('GET', fk .. 'mtime') or '0', mid)
    for _, d in ipairs(redis.call('SMEMBERS', fk .. 'duplicates')) do back(d, r, size, '0', mid) end
  end
end
return n
