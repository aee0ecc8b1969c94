-- path.lua (Store.Path): one path's entry in the path index. A read
-- script.
--
-- ARGV (pathArgs): path
-- Reply (decodePath): common.lua's pathstate, or nil when the path is not
--   known.
return pathstate(ARGV[1])
