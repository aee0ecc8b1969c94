-- deleteroot.lua (Store.DeleteRoot): deletes a root with every alias it
-- holds (the prelude's deleteroot).
--
-- ARGV (deleteRootArgs): root, evmax, ts
-- Reply (decodeOutcome): {kind, root}; kind deleted or gone ('' root).
if redis.call('SISMEMBER', IDX, ARGV[1]) == 0 then return {'gone', ''} end
deleteroot(ARGV[1])
return {'deleted', ARGV[1]}
