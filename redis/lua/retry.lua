-- The retry script (prefixed with owned.lua): counts one more delivery
-- before a job is sent to a worker again. KEYS = jobs, results, dead;
-- ARGV[1] = group, ARGV[2] = consumer, ARGV[3] = id, ARGV[4] =
-- deliveries.
local code = owned(ARGV[3], ARGV[4])
if code ~= 1 then return code end
local n = tonumber(ARGV[4]) + 1
redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3],
           'RETRYCOUNT', n, 'JUSTID')
return n
