-- luacheck settings for the scripts tally runs on Redis (Lua 5.1 with
-- the libraries Redis gives scripts).
std = "lua51"
read_globals = {"redis", "KEYS", "ARGV", "cjson", "cmsgpack", "bit", "struct"}
-- The contest library alone (lib.lua) defines what post and rescore use;
-- each uses only some of it, and is checked whole besides.
files["lib.lua"] = {ignore = {"211"}}
-- The place caches a call wrote are returned by post only.
files["lib.lua"].ignore[#files["lib.lua"].ignore + 1] = "241/caches_written"
files["rescore.lua"] = {ignore = {"241/caches_written"}}
