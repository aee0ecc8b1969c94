-- mergeif.lua (Store.MergeIfAliasExists, export_test.go): when cid
-- belongs to another indexed root, root is merged into it; else cid
-- becomes root's supplied member.
--
-- ARGV (mergeIfArgs): root, cid, evmax, ts
-- Reply (decodeOutcome): {kind, root}; kind merged (root: the one merged
--   into), kept or gone ('' root).
local r, c = ARGV[1], ARGV[2]
if redis.call('SISMEMBER', IDX, r) == 0 then return {'gone', ''} end
local h = redis.call('GET', 'cid:' .. c)
if not h or h == r or redis.call('SISMEMBER', IDX, h) == 0 then
  if redis.call('EXISTS', fk(r, 'cids/' .. c)) == 0 then redis.call('SADD', supk(r), c) end
  member(r, c)
  return {'kept', r}
end
merge(r, h)
if redis.call('EXISTS', fk(h, 'cids/' .. c)) == 0 then redis.call('SADD', supk(h), c) end
member(h, c)
return {'merged', h}
