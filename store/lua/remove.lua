-- remove.lua (Store.RemovePath): detaches a local path (the prelude's
-- remove) and emits eventType for it.
--
-- ARGV (removeArgs): path, eventType ('' for none), evmax, ts
-- Reply (decodeOutcome): {kind, root[, path]}; kind removed, deleted,
--   promoted (path: the promoted duplicate) or gone ('' root).
local mid = (pget(ARGV[1]) or {}).mid
local res = remove(ARGV[1])
if res[1] ~= 'gone' and ARGV[2] ~= '' then emit(ARGV[2], ARGV[1], mid, '') end
return res
