-- indexroot.lua (Store.IndexRoot): brings root's search index (tk:<token>
-- and the //<token> entries of fields:<root>, common.lua) in step with the
-- tokens given, keeps every token in the vocabulary (VOCAB: a store of an
-- earlier release fills it as its roots are indexed again), and writes
-- the root's sort key (the entry '//'). A root no longer in
-- file:__index__ loses every token whatever was read. A bare script: no
-- prelude (common.lua only), no events.
--
-- ARGV (indexRootArgs): root, present ('1' when the document was read),
--   sort key, then token, weight pairs
-- Reply (decodeIndexRoot): 0.
local r = ARGV[1]
local fl = fieldsk(r)
local want = {}
if ARGV[2] == '1' and redis.call('SISMEMBER', 'file:__index__', r) == 1 then
  for i = 4, #ARGV, 2 do want[ARGV[i]] = ARGV[i + 1] end
end
local kept = false
for t, w in pairs(tokall(r)) do
  if not want[t] then
    tkdel(t, r)
    redis.call('HDEL', fl, '//' .. t)
  else
    kept = true
    if want[t] == w then
      redis.call('ZADD', VOCAB, 'NX', 0, t)
      want[t] = nil
    end
  end
end
for t, w in pairs(want) do
  tkadd(t, r, w)
  redis.call('HSET', fl, '//' .. t, w)
  kept = true
end
if not kept or ARGV[3] == '' then
  redis.call('HDEL', fl, '//')
elseif redis.call('HGET', fl, '//') ~= ARGV[3] then
  redis.call('HSET', fl, '//', ARGV[3])
end
return 0
