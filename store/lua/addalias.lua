-- addalias.lua (Store.AddAlias): adds cid to root's key-set and points
-- the alias at it when free. The member is recorded as supplied (not
-- computed from this node's bytes) unless the root already had it, and
-- the root vouches for it.
--
-- ARGV (addAliasArgs): root, cid, evmax, ts
-- Reply (decodeOutcome): {kind, root}; kind added, exists, conflict (root:
--   the alias holder) or gone ('' root).
local r, c = ARGV[1], ARGV[2]
if redis.call('SISMEMBER', IDX, r) == 0 then return {'gone', ''} end
local had = redis.call('EXISTS', fk(r, 'cids/' .. c))
if had == 0 then redis.call('SADD', supk(r), c) end
-- Supplied locally: the node vouches for it, whoever else said so.
redis.call('HDEL', lrnk(r), c)
local h = member(r, c)
if h ~= r then return {'conflict', h} end
if had == 1 then return {'exists', r} end
return {'added', r}
