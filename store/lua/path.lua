-- path.lua (Store.Path): one path's entry in the path index. A read
-- script (readprelude.lua).
--
-- ARGV (pathArgs): path
-- Reply (decodePath): {root, size, mtime, mid, hashed, primary, dev, ino,
--   link, xv}, or nil when the path is not known.
local st = redis.call('HMGET', pk(ARGV[1]), 'root', 'size', 'mtime', 'mid', 'hashed', 'dev', 'ino', 'link', 'xv')
if not st[1] then return nil end
local primary = '0'
if redis.call('GET', fk(st[1], 'filePath')) == ARGV[1] then primary = '1' end
return {st[1], st[2] or '', st[3] or '', st[4] or '', st[5] or '', primary, st[6] or '', st[7] or '', st[8] or '', st[9] or ''}
