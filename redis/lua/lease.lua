-- Takes or refreshes the consumer lease: KEYS[1] the lease, ARGV[1] this
-- daemon's value, ARGV[2] its time to live in ms. Returns 1 when this
-- daemon holds it; 2 when it could not be written (out of memory: the
-- daemon goes on without one); the holder's value when another holds it.
local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[1] then return v end
if v then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
local ok = pcall(redis.call, 'SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if ok then return 1 end
return 2
