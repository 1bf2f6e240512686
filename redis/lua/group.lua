-- Creates the consumer group ARGV[1] on the jobs stream KEYS[1], or
-- finds it without a write: out of memory, Redis refuses XGROUP CREATE
-- before it finds an existing group, and tallyd must still start.
-- Returns 1 when it created the group, 0 when it was there.
if redis.call('EXISTS', KEYS[1]) == 1 then
  for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
    for i = 1, #g, 2 do
      if g[i] == 'name' and g[i + 1] == ARGV[1] then return 0 end
    end
  end
end
redis.call('XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')
return 1
