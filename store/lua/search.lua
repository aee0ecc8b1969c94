-- search.lua (Store.Search): the roots holding the query's words
-- (store/match.go). Each word matches its own token exactly, the tokens
-- it begins (prefix), and the tokens one edit away that the vocabulary
-- holds. A root's rank: every word exact, then every word, then fewer
-- words (more first); then more words exact, then more by prefix (a word
-- one edit away ranks below both); then score (a word's best weight: 2
-- in a title, 1 elsewhere; descending); then its sort key (the entry '//' of
-- fields:<root>: title, season, episode); then root ID. A root no longer
-- in file:__index__ is left out. A read script (readprelude.lua).
--
-- ARGV (searchArgs): offset, limit, most tokens a prefix expands to,
--   then per word: token, prefix ('1' or '0'), number of edits, edits...
-- Reply (decodeSearch): the number of matches, then for each root of the
--   page {root, matched words, score, docfor's answer (false when gone),
--   words matched exactly}.
local off, lim, pmax = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local n, e, pf, w, roots = {}, {}, {}, {}, {}
local words = 0
local i = 4
while i <= #ARGV do
  local t, prefix, ne = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  words = words + 1
  -- The word's tokens: itself (exact), then those it begins and those one
  -- edit away in the vocabulary.
  -- quality: 0 exact, 1 prefix, 2 one edit away.
  local toks, quality = {t}, {[t] = 0}
  if prefix == '1' then
    for _, x in ipairs(redis.call('ZRANGEBYLEX', VOCAB, '(' .. t, '[' .. t .. '\255', 'LIMIT', 0, pmax)) do
      toks[#toks + 1] = x
      quality[x] = 1
    end
  end
  if ne > 0 then
    local cand = {}
    for k = 1, ne do cand[k] = ARGV[i + 2 + k] end
    local sc = redis.call('ZMSCORE', VOCAB, unpack(cand))
    for k = 1, ne do
      if sc[k] and not quality[cand[k]] then
        toks[#toks + 1] = cand[k]
        quality[cand[k]] = 2
      end
    end
  end
  i = i + 3 + ne
  -- Each root's best match of this word: the best quality, then weight.
  local bq, bw = {}, {}
  for _, x in ipairs(toks) do
    local z = tkall(x)
    local q = quality[x]
    for k = 1, #z, 2 do
      local r, wt = z[k], tonumber(z[k + 1])
      if bq[r] == nil or q < bq[r] or (q == bq[r] and wt > bw[r]) then
        bq[r], bw[r] = q, wt
      end
    end
  end
  for r, wt in pairs(bw) do
    if not n[r] then
      n[r], e[r], pf[r], w[r] = 0, 0, 0, 0
      roots[#roots + 1] = r
    end
    n[r] = n[r] + 1
    w[r] = w[r] + wt
    if bq[r] == 0 then e[r] = e[r] + 1 elseif bq[r] == 1 then pf[r] = pf[r] + 1 end
  end
end
local live = {}
for _, r in ipairs(roots) do
  if redis.call('SISMEMBER', IDX, r) == 1 then live[#live + 1] = r end
end
-- tier: 0 every word exact, 1 every word, 2 fewer.
local function tier(r)
  if n[r] < words then return 2 end
  if e[r] < words then return 1 end
  return 0
end
local function before(a, b)
  local ta, tb = tier(a), tier(b)
  if ta ~= tb then return ta < tb end
  if n[a] ~= n[b] then return n[a] > n[b] end
  if e[a] ~= e[b] then return e[a] > e[b] end
  if pf[a] ~= pf[b] then return pf[a] > pf[b] end
  if w[a] ~= w[b] then return w[a] > w[b] end
  return nil
end
table.sort(live, function(a, b)
  local o = before(a, b)
  if o ~= nil then return o end
  return a < b
end)
-- Roots that rank alike are ordered by their sort keys, read only for the
-- runs of equals the page cuts into.
local first, last = off + 1, math.min(off + lim, #live)
if first <= last then
  while first > 1 and before(live[first - 1], live[first]) == nil do first = first - 1 end
  while last < #live and before(live[last], live[last + 1]) == nil do last = last + 1 end
  local key, run = {}, {}
  for k = first, last do
    local r = live[k]
    key[r] = redis.call('HGET', fieldsk(r), '//') or ''
    run[#run + 1] = r
  end
  table.sort(run, function(a, b)
    local o = before(a, b)
    if o ~= nil then return o end
    if key[a] ~= key[b] then return key[a] < key[b] end
    return a < b
  end)
  for k, r in ipairs(run) do live[first + k - 1] = r end
end
local out = {#live}
for k = off + 1, math.min(off + lim, #live) do
  local r = live[k]
  local d = docfor(r, 0)
  out[#out + 1] = {r, n[r], w[r], d or false, e[r]}
end
return out
