-- edit.lua (Store.Edit): the household's own values of a local file's
-- fields, written as one. A set field becomes an edit: edited:<r> lists
-- it, and the value it had (the extractors', when it was not an edit
-- yet) waits in extracted:<r>, where later extractions write too
-- (prelude's extracted), so that no rescan overwrites the edit. A
-- dropped field that is an edit gets that value back (or goes, when
-- there is none); one that is not is deleted. Appends a "change" entry
-- naming the root and the fields whose values changed.
--
-- ARGV (editArgs): cid, #set, (field, value)..., #del, field..., evmax, ts
-- Reply (decodeEdit): {kind, root, changed field...}; kind ok, notfound
--   (no root holds cid) or notlocal (a file known only from peers).
local r = redis.call('GET', 'cid:' .. ARGV[1])
if not r then return {'notfound', ''} end
local fp = redis.call('GET', fk(r, 'filePath'))
if not fp then return {'notlocal', r} end
local ek, xk = 'edited:' .. r, 'extracted:' .. r
local changed = {}
local ns = tonumber(ARGV[2])
local i = 3
for _ = 1, ns do
  local f, v = ARGV[i], ARGV[i + 1]
  i = i + 2
  local cur = redis.call('GET', fk(r, f))
  if redis.call('SADD', ek, f) == 1 and cur then redis.call('HSET', xk, f, cur) end
  if cur ~= v then changed[#changed + 1] = f end
  setf(r, f, v)
end
local nd = tonumber(ARGV[i])
i = i + 1
for _ = 1, nd do
  local f = ARGV[i]
  i = i + 1
  local cur = redis.call('GET', fk(r, f))
  local was = nil
  if redis.call('SREM', ek, f) == 1 then
    was = redis.call('HGET', xk, f)
    redis.call('HDEL', xk, f)
  end
  if was then
    if cur ~= was then changed[#changed + 1] = f end
    setf(r, f, was)
  elseif cur then
    redis.call('DEL', fk(r, f))
    flrem(r, f)
    changed[#changed + 1] = f
  end
end
table.sort(changed)
local st = pget(fp)
xadd('change', {'path', fp, 'midhash256', st and st.mid or '', 'oldPath', '', 'root', r,
  'keys', table.concat(changed, ' '), 'timestamp', EVTS})
return {'ok', r, unpack(changed)}
