-- The history script (prefixed with job_of.lua): re-reads this
-- consumer's own pending entries. KEYS = jobs, results, dead; ARGV[1] =
-- group, ARGV[2] = consumer, ARGV[3] = cursor, ARGV[4] = count. Redis
-- counts a read of one's own history as a delivery (except of a deleted
-- entry); tally does not: the count is how many times the job was handed
-- out to be scored and not posted (a first read, a claim from a consumer
-- that stopped, a retry after a worker crashed or timed out), and a
-- re-read after a reconnect or a restart hands out nothing new. So the
-- count the read added is taken back (XCLAIM with JUSTID does not count)
-- before it is returned.
local r = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT',
                     ARGV[4], 'STREAMS', KEYS[1], ARGV[3])
local out = {}
if not r or #r == 0 then return out end
for _, e in ipairs(r[1][2]) do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], e[1], e[1], 1)
  if #p > 0 then
    local dl = p[1][4]
    if e[2] and dl > 1 then
      dl = dl - 1
      redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, e[1],
                 'RETRYCOUNT', dl, 'JUSTID')
    end
    out[#out + 1] = e[1]
    out[#out + 1] = dl
    out[#out + 1] = job_of(e[2])
  end
end
return out
