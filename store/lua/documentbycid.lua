-- documentbycid.lua (Store.DocumentByCID): resolves a CID and reads its
-- root's document in one step. A read script.
--
-- ARGV (documentByCIDArgs): cid, maxDuplicates
-- Reply (decodeDocumentByCID): the root, then docfor's answer; nil when
--   no indexed root holds cid.
local r = redis.call('GET', 'cid:' .. ARGV[1])
if not r then return nil end
local d = docfor(r, ARGV[2])
if not d then return nil end
table.insert(d, 1, r)
return d
