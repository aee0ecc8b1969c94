-- ingest.lua (Store.Ingest): a whole small file in one step: arrive when
-- the path is new, confirm, and write its extracted metadata when it ends
-- up a primary (the prelude's ingestone).
--
-- ARGV (ingestArgs): arriveRoot, splitRoot, leaveRoot, path, size, mtime,
--   dev, ino, link, midhash, sha, ipfs, then extracted's arguments
--   (extractedMeta: version, #owned, owned..., field, value, ...), evmax,
--   ts
-- Reply (decodeCounted): {kind, root, fields written}.
return ingestone(ARGV, 1, #ARGV - 2)
