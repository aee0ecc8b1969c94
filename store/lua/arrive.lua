-- arrive.lua (Store.Arrive): a new local path with midhash mid joins the
-- local root that holds the midhash (as a duplicate pending
-- confirmation), or mints root newRoot. Emits "add" unless the path was
-- known.
--
-- ARGV (arriveArgs): newRoot, path, size, mtime, dev, ino, link, midhash,
--   evmax, ts
-- Reply (decodeOutcome): {kind, root}; kind minted, duplicate or exists
--   (root: the path's root).
local res = arrive(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[8], ARGV[5], ARGV[6], ARGV[7])
if res[1] ~= 'exists' then emit('add', ARGV[2], ARGV[8], '') end
return res
