-- rename.lua (Store.Replace; Store.Rename in export_test.go): moves a
-- local path, keeping its root; emits "rename". With replace, a known
-- target is released first (remove).
--
-- ARGV (renameArgs): oldPath, newPath, replace ('1' releases a known
--   target), evmax, ts
-- Reply (decodeOutcome): {kind, root}; kind renamed, exists (root: the
--   target's) or gone ('' root).
local old, new = ARGV[1], ARGV[2]
local st = pget(old)
if not st then return {'gone', ''} end
local r = st.root
if old == new then return {'renamed', r} end
local target = proot(new)
if target then
  if ARGV[3] ~= '1' then return {'exists', target} end
  remove(new)
  st = pget(old)
  r = st.root
end
redis.call('ZREM', PATHS, st.m)
st.m, st.xv = nil, ''
pput(new, st)
if st.dev ~= '' and redis.call('SREM', inok(st.dev, st.ino), old) == 1 then
  redis.call('SADD', inok(st.dev, st.ino), new)
end
if redis.call('GET', fk(r, 'filePath')) == old then
  setf(r, 'filePath', new)
else
  redis.call('SREM', fk(r, 'duplicates'), old)
  redis.call('SADD', fk(r, 'duplicates'), new)
end
emit('rename', new, st.mid, old)
return {'renamed', r}
