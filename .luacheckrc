-- luacheck configuration for the Redis scripts of package store
-- (store/lua; `make lint` runs `luacheck store/lua`). Redis runs Lua 5.1
-- with a few libraries of its own; a script file is the body the store
-- composes with a prelude (store/lua.go), so the prelude's top-level
-- locals are read-only globals to it.

-- What Redis gives every script.
stds.redis = {
  read_globals = {"KEYS", "ARGV", "redis", "cjson", "cmsgpack", "bit", "struct"},
}

-- What store/lua.go writes before common.lua (luaFieldCodes).
stds.codes = {read_globals = {"FLCODE", "FLNAME"}}

-- The top-level locals of common.lua: what every script sees.
local common = {
  "fieldsk", "flenc", "flcid", "fldec", "flall", "fladd", "flrem", "flhas", "flname",
  "ROLE", "ownmap", "ownget", "ownmove", "owndel", "ownset", "ownall",
  "PATHS", "PF", "pget", "pput", "pset", "pathstate",
  "IDX", "fk", "docfor",
}

-- The top-level locals of prelude.lua: what a write script sees.
local prelude = {
  "EVMAX", "EVTS",
  "supk", "lrnk", "inok",
  "setf", "learn", "learnall", "xadd", "emit",
  "KS", "KSO", "kst", "ksadd", "ksrem", "kswhy", "joined", "ksflush",
  "inodeadd", "indexpath", "proot", "unindexpath", "member", "dropmember", "suponly", "ownmember",
  "setprimary", "attach", "deleteroot", "merge", "arrive", "better", "remove",
  "confirm", "rearrive", "extracted", "ingestone",
}

stds.common = {read_globals = common}
stds.prelude = {read_globals = prelude}

-- A prelude defines helpers for the scripts, not for itself.
local function unused(names)
  local out = {}
  for i, n in ipairs(names) do out[i] = "211/" .. n end
  return out
end

std = "lua51+redis+codes+common+prelude"
max_line_length = false

files["store/lua/common.lua"] = {std = "lua51+redis+codes", ignore = unused(common)}
files["store/lua/prelude.lua"] = {std = "lua51+redis+codes+common", ignore = unused(prelude)}

-- Read scripts and bare ones: common.lua and the body (no prelude).
for _, f in ipairs({"path", "document", "documentbycid", "canonical", "catalog", "upgrade2", "upgrade3", "repairpaths"}) do
  files["store/lua/" .. f .. ".lua"] = {std = "lua51+redis+codes+common"}
end
