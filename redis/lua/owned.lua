-- owned(id, dl): 1 when this consumer (ARGV[2] of group ARGV[1]) still
-- holds entry id of the jobs stream (KEYS[1]) with delivery count dl; 0
-- when the entry is no longer pending, -1 when another consumer owns it,
-- -2 when it was delivered again since. Every script on the stream that
-- writes checks this first: XACK alone checks neither.
local function owned(id, dl)
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1)
  if #p == 0 then return 0 end
  if p[1][2] ~= ARGV[2] then return -1 end
  if p[1][4] ~= tonumber(dl) then return -2 end
  return 1
end
