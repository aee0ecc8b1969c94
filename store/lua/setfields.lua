-- setfields.lua (Store.SetFields): writes flat fields of a root, each
-- only when its value differs.
--
-- ARGV (setFieldsArgs): root, field1, value1, ..., evmax, ts
-- Reply (decodeSetFields): the number of fields written; -1 when root is
--   not indexed.
local r = ARGV[1]
if redis.call('SISMEMBER', IDX, r) == 0 then return -1 end
local n = 0
for i = 2, #ARGV - 2, 2 do
  if redis.call('GET', fk(r, ARGV[i])) ~= ARGV[i + 1] then n = n + 1 end
  setf(r, ARGV[i], ARGV[i + 1])
end
return n
