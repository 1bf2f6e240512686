-- The claim script (prefixed with job_of.lua and released.lua): takes
-- over entries idle too long elsewhere. KEYS = jobs, results, dead;
-- ARGV[1] = group, ARGV[2] = consumer, ARGV[3] = min idle ms, ARGV[4] =
-- cursor, ARGV[5] = count. Own entries are skipped: the history read
-- handles them. XCLAIM of an entry deleted while pending drops it from the
-- pending list and returns nothing, so its dead letter is written here,
-- the only place that still knows.
local start = ARGV[4] == '-' and '-' or '(' .. ARGV[4]
local p = redis.call('XPENDING', KEYS[1], ARGV[1], 'IDLE', ARGV[3],
                     start, '+', ARGV[5])
local out = {#p < tonumber(ARGV[5]) and '-' or p[#p][1]}
for _, e in ipairs(p) do
  if e[2] ~= ARGV[2] then
    local c, dl
    if e[3] >= RELEASED then
      -- Handed back by a draining daemon: no delivery is used up.
      c = redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3],
                     e[1], 'JUSTID')
      if #c > 0 then c = redis.call('XRANGE', KEYS[1], e[1], e[1]) end
      dl = e[4]
    else
      c = redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], e[1])
      dl = e[4] + 1
    end
    if #c == 0 then
      redis.call('XADD', KEYS[3], '*', 'job', '', 'error',
        'the job entry was deleted from the stream while pending',
        'deliveries', e[4], 'id', e[1])
      out[#out + 1] = e[1]
      out[#out + 1] = e[4]
      out[#out + 1] = false
    else
      out[#out + 1] = e[1]
      out[#out + 1] = dl
      out[#out + 1] = job_of(c[1][2])
    end
  end
end
return out
