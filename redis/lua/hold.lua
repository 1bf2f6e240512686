-- The hold script (prefixed with owned.lua): keeps the entries this
-- consumer holds while their samples wait for a judge's verdict from
-- looking idle, so that no other daemon claims them meanwhile (a claim
-- takes any entry idle longer than --claim-idle). KEYS = jobs; ARGV[1] =
-- group, ARGV[2] = consumer, then pairs of (id, deliveries). XCLAIM with
-- JUSTID resets an entry's idle time without counting a delivery; an
-- entry another consumer took, or delivered again, is left alone.
-- Returns how many were held.
local n = 0
for i = 3, #ARGV - 1, 2 do
  if owned(ARGV[i], ARGV[i + 1]) == 1 then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
    n = n + 1
  end
end
return n
