-- change.lua (Store.Change): a changed file. Same content (the sha2-256
-- of its root's own bytes) only updates size and mtime; new content moves
-- the path to the root that content belongs to, dropping the old root if
-- it became empty. Emits "change". When extracted's arguments come along
-- and the path ends up its root's primary, the metadata is written as
-- extracted.lua writes it: a changed file is one round trip.
--
-- ARGV (changeArgs): path, size, mtime, dev, ino, link, midhash, sha, ipfs,
--   arriveRoot (minted when the new content is new), splitRoot,
--   leaveRoot (as confirm.lua's), then extracted's arguments or none
--   (extractedMeta: version, #owned, owned..., field, value, ...), evmax,
--   ts
-- Reply (decodeOutcome): {kind, root}; kind same, gone or one of
--   confirm.lua's.
-- withmeta writes the metadata that came along when p is root r's
-- primary.
local function withmeta(r)
  if #ARGV - 2 > 12 and r and r ~= '' and redis.call('GET', fk(r, 'filePath')) == ARGV[1] then
    extracted(r, ARGV[1], ARGV, 13, #ARGV - 2)
  end
end

local p, size, mtime, dev, ino, link, mid, sha = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]
local st = pget(p)
if not st then return {'gone', ''} end
local r = st.root
if ownget(r, 'sha')[1] == sha then
  -- The same bytes may be a new inode (a file written anew and renamed
  -- over the old one) or a new count of links.
  if st.dev ~= '' and st.ino ~= '' then redis.call('SREM', inok(st.dev, st.ino), p) end
  st.size, st.mtime, st.mid, st.hashed, st.dev, st.ino, st.link = size, mtime, mid, '1', dev, ino, link
  pput(p, st)
  inodeadd(p, r, dev, ino, link)
  if redis.call('GET', fk(r, 'filePath')) == p then setprimary(r, p) end
  emit('change', p, mid, '')
  withmeta(r)
  return {'same', r}
end
remove(p)
arrive(ARGV[10], p, size, mtime, mid, dev, ino, link)
local res = confirm(p, size, mtime, mid, sha, ARGV[9], ARGV[11], ARGV[12])
emit('change', p, mid, '')
withmeta(res[2])
return res
