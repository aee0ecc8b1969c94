-- arrive.lua (Store.Arrive): a new local path with midhash mid joins the
-- local root that holds the midhash (as a duplicate pending
-- confirmation), or mints root newRoot. Emits "add" unless the path was
-- known.
--
-- ARGV (arriveArgs): newRoot, path, size, mtime, dev, ino, link, midhash,
--   evmax, ts
-- Reply (decodeArrive): {kind, root}; kind minted, duplicate or exists
--   (root: the path's root), and for exists the path's state after them
--   (common.lua's pathstate): a caller that did not know the path goes on
--   from there without reading it.
local res = arrive(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[8], ARGV[5], ARGV[6], ARGV[7])
if res[1] ~= 'exists' then
  emit('add', ARGV[2], ARGV[8], '')
  return res
end
for _, x in ipairs(pathstate(ARGV[2])) do res[#res + 1] = x end
return res
