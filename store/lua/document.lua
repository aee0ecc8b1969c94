-- document.lua (Store.Document): one root's document (common.lua's
-- docfor). A read script.
--
-- ARGV (documentArgs): root, maxDuplicates
-- Reply (decodeDocument): docfor's answer, or nil when root is not
--   indexed.
return docfor(ARGV[1], ARGV[2])
