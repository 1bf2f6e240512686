-- The release script (prefixed with owned.lua and released.lua): hands
-- entries back when draining. KEYS = jobs, results, dead; ARGV[1] =
-- group, ARGV[2] = consumer, ARGV[3] unused, ARGV[4] = n, then n x (id,
-- deliveries). A released entry keeps its count and is marked idle for
-- ten years, so the next claim takes it at once, and without counting a
-- delivery.
local out = {}
for i = 0, tonumber(ARGV[4]) - 1 do
  local id, dl = ARGV[5 + i * 2], ARGV[6 + i * 2]
  local code = owned(id, dl)
  if code == 1 then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, id,
               'IDLE', RELEASED, 'RETRYCOUNT', tonumber(dl), 'JUSTID')
  end
  out[#out + 1] = code
end
return out
