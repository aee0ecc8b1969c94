-- still.lua (Store.SetStill): links a local video's root to its still
-- (the field still), or drops the link. A root with a poster (art/poster)
-- gets none: the poster is what lists show.
--
-- ARGV (stillArgs): root, cid ("" drops the link), evmax, ts
-- Reply (decodeStill): 1 when the link changed, 0 when it did not (or
--   a poster keeps it from being set), -1 when root is gone (or, to set
--   a link, not a local root: a link is dropped from any root).
local r, c = ARGV[1], ARGV[2]
if redis.call('SISMEMBER', IDX, r) == 0 then return -1 end
local cur = redis.call('GET', fk(r, 'still'))
if c ~= '' and not redis.call('GET', fk(r, 'filePath')) then return -1 end
if c == '' then
  if not cur then return 0 end
  redis.call('DEL', fk(r, 'still'))
  flrem(r, 'still')
  return 1
end
if redis.call('GET', fk(r, 'art/poster')) or cur == c then return 0 end
setf(r, 'still', c)
return 1
