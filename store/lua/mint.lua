-- mint.lua (Store.Mint): creates root for a local path, with no aliases.
--
-- ARGV (mintArgs): root, path, size, mtime, evmax, ts
-- Reply (decodeOutcome): {kind, root}; kind minted, or exists (root: the
--   path's).
local r, p = ARGV[1], ARGV[2]
local cur = proot(p)
if cur then return {'exists', cur} end
indexpath(p, r, ARGV[3], ARGV[4], '', '', '', '')
redis.call('SADD', IDX, r)
setprimary(r, p)
kswhy(r, 'mint', p)
return {'minted', r}
