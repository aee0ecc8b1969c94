-- search.lua (Store.Search): the roots holding the query's tokens, those
-- holding most first. Roots are ordered by matched tokens, then score
-- (descending), then root ID; a root no longer in file:__index__ is left
-- out. A read script (readprelude.lua).
--
-- ARGV (searchArgs): offset, limit, tokens...
-- Reply (decodeSearch): the number of matches, then for each root of the
--   page {root, matched tokens, score, docfor's answer (false when gone)}.
local off, lim = tonumber(ARGV[1]), tonumber(ARGV[2])
local n, w, roots = {}, {}, {}
for i = 3, #ARGV do
  local z = tkall(ARGV[i])
  for k = 1, #z, 2 do
    local r = z[k]
    if not n[r] then
      n[r] = 0; w[r] = 0
      roots[#roots + 1] = r
    end
    n[r] = n[r] + 1
    w[r] = w[r] + tonumber(z[k + 1])
  end
end
local live = {}
for _, r in ipairs(roots) do
  if redis.call('SISMEMBER', IDX, r) == 1 then live[#live + 1] = r end
end
table.sort(live, function(a, b)
  if n[a] ~= n[b] then return n[a] > n[b] end
  if w[a] ~= w[b] then return w[a] > w[b] end
  return a < b
end)
local out = {#live}
for k = off + 1, math.min(off + lim, #live) do
  local r = live[k]
  local d = docfor(r, 0)
  out[#out + 1] = {r, n[r], w[r], d or false}
end
return out
