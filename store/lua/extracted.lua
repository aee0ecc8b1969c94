-- extracted.lua (Store.SetExtracted): writes the metadata extracted from
-- a primary path (the prelude's extracted).
--
-- ARGV (extractedArgs): path, then extracted's arguments (extractedMeta:
--   version ('=' before it: written even when not newer), #owned,
--   owned..., field, value, ...), evmax, ts
-- Reply (decodeCounted): {kind, root, fields written}; kind confirmed, or
--   gone ('' root) when the path is not a primary.
local p = ARGV[1]
local r = proot(p)
if not r or redis.call('GET', fk(r, 'filePath')) ~= p then return {'gone', '', 0} end
return {'confirmed', r, extracted(r, p, ARGV, 2, #ARGV - 2)}
