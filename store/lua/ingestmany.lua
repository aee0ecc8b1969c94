-- ingestmany.lua (Store.IngestBatch): ingest.lua for many files, in
-- order.
--
-- ARGV (ingestManyArgs): for each file the number n of its arguments,
--   then the n arguments ingest.lua takes (without evmax and ts); evmax,
--   ts
-- Reply (decodeCountedList): ingest.lua's answers one after the other
--   (three values a file).
local out, k = {}, 1
while k <= #ARGV - 2 do
  local n = tonumber(ARGV[k])
  local res = ingestone(ARGV, k + 1, k + n)
  out[#out + 1] = res[1]; out[#out + 1] = res[2]; out[#out + 1] = res[3]
  k = k + n + 1
end
return out
