-- Refreshes the rescore lock KEYS[1] for ARGV[2] ms if its holder is
-- ARGV[1]. Returns 1 when refreshed, 0 when another holds it.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
