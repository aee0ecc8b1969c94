-- indexroot.lua (Store.IndexRoot): brings root's search index (tk:<token>,
-- common.lua; toks:<root>) in step with the tokens given. A root no longer in
-- file:__index__ loses every token whatever was read. A bare script: no
-- prelude (common.lua only), no events.
--
-- ARGV (indexRootArgs): root, present ('1' when the document was read),
--   then token, weight pairs
-- Reply (decodeIndexRoot): 0.
local r = ARGV[1]
local tk = 'toks:' .. r
local want = {}
if ARGV[2] == '1' and redis.call('SISMEMBER', 'file:__index__', r) == 1 then
  for i = 3, #ARGV, 2 do want[ARGV[i]] = ARGV[i + 1] end
end
local cur = redis.call('HGETALL', tk)
for i = 1, #cur, 2 do
  local t = cur[i]
  if not want[t] then
    tkdel(t, r)
    redis.call('HDEL', tk, t)
  elseif want[t] == cur[i + 1] then
    want[t] = nil
  end
end
for t, w in pairs(want) do
  tkadd(t, r, w)
  redis.call('HSET', tk, t, w)
end
return 0
