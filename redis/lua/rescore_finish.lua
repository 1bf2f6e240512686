-- Clears task ARGV[1]'s pending mark in KEYS[1] if it is still for
-- version ARGV[2].
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0
