-- track.lua (Store.Follow, Store.Repair): brings the field index in step
-- with what the keys are now: a STRING key of an indexed root is listed
-- (a cids/<cid> one joins the key-set as a supplied member, with its
-- alias when free), a missing one is unlisted (a key-set member leaves,
-- its alias passes on). Keys of roots that are not indexed are left, or
-- deleted with deleteOrphans. Other types and the duplicates set are not
-- fields.
--
-- ARGV (trackArgs): deleteOrphans ('1'), then keys file:<root>/<field>,
--   evmax, ts
-- Reply (decodeTrack): {listed, unlisted, deleted}.
local orphans = ARGV[1] == '1'
local listed, unlisted, deleted = 0, 0, 0
for i = 2, #ARGV - 2 do
  local k = ARGV[i]
  local rest = string.sub(k, 6)
  local slash = string.find(rest, '/', 1, true)
  if string.sub(k, 1, 5) == 'file:' and slash and slash > 1 and slash < #rest then
    local r, f = string.sub(rest, 1, slash - 1), string.sub(rest, slash + 1)
    local c = nil
    if string.sub(f, 1, 5) == 'cids/' then c = string.sub(f, 6) end
    if f == 'duplicates' or not flname(f) then -- luacheck: ignore 542 (the duplicates set and names the field index cannot list are not fields)
    elseif redis.call('SISMEMBER', IDX, r) == 0 then
      if orphans and redis.call('EXISTS', k) == 1 then
        redis.call('DEL', k)
        deleted = deleted + 1
      end
    else
      local t = redis.call('TYPE', k)['ok']
      local had = flhas(r, f)
      if t == 'string' then
        if c then
          if not had then redis.call('SADD', supk(r), c); listed = listed + 1 end
          member(r, c)
        elseif not had then
          fladd(r, f)
          listed = listed + 1
        end
      elseif t == 'none' and had then
        if c then
          ksrem(r, c)
          dropmember(r, c)
        else
          flrem(r, f)
        end
        unlisted = unlisted + 1
      end
    end
  end
end
return {listed, unlisted, deleted}
