-- indexroot.lua (Store.IndexRoot): brings root's search index (tk:<token>
-- and the //<token> entries of fields:<root>, common.lua) in step with the
-- tokens given. A root no longer in
-- file:__index__ loses every token whatever was read. A bare script: no
-- prelude (common.lua only), no events.
--
-- ARGV (indexRootArgs): root, present ('1' when the document was read),
--   then token, weight pairs
-- Reply (decodeIndexRoot): 0.
local r = ARGV[1]
local fl = fieldsk(r)
local want = {}
if ARGV[2] == '1' and redis.call('SISMEMBER', 'file:__index__', r) == 1 then
  for i = 3, #ARGV, 2 do want[ARGV[i]] = ARGV[i + 1] end
end
for t, w in pairs(tokall(r)) do
  if not want[t] then
    tkdel(t, r)
    redis.call('HDEL', fl, '//' .. t)
  elseif want[t] == w then
    want[t] = nil
  end
end
for t, w in pairs(want) do
  tkadd(t, r, w)
  redis.call('HSET', fl, '//' .. t, w)
end
return 0
