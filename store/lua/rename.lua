-- rename.lua (Store.Replace; Store.Rename in export_test.go): moves a
-- local path, keeping its root; emits "rename". With replace, a known
-- target is released first (remove).
--
-- ARGV (renameArgs): oldPath, newPath, replace ('1' releases a known
--   target), evmax, ts
-- Reply (decodeOutcome): {kind, root}; kind renamed, exists (root: the
--   target's) or gone ('' root).
local old, new = ARGV[1], ARGV[2]
local st = redis.call('HMGET', pk(old), 'root', 'mid', 'dev', 'ino')
local r = st[1]
if not r then return {'gone', ''} end
if old == new then return {'renamed', r} end
if redis.call('EXISTS', pk(new)) == 1 then
  if ARGV[3] ~= '1' then return {'exists', redis.call('HGET', pk(new), 'root')} end
  remove(new)
  r = redis.call('HGET', pk(old), 'root')
end
redis.call('RENAME', pk(old), pk(new))
redis.call('HDEL', pk(new), 'xv')
redis.call('ZREM', PATHS, old)
redis.call('ZADD', PATHS, 0, new)
if st[3] and st[3] ~= '' and redis.call('SREM', inok(st[3], st[4]), old) == 1 then
  redis.call('SADD', inok(st[3], st[4]), new)
end
if redis.call('GET', fk(r, 'filePath')) == old then
  setf(r, 'filePath', new)
else
  redis.call('SREM', fk(r, 'duplicates'), old)
  redis.call('SADD', fk(r, 'duplicates'), new)
end
emit('rename', new, st[2], old)
return {'renamed', r}
