-- The bare cycle's post script (bench_tallyd): tallyd's post script
-- (redis/lua/post.lua) without the owner check or the contest state: for
-- each entry, read the job, post the result, write the record, XACK, XDEL.
-- The arguments are laid out as tallyd lays out its own: KEYS = jobs,
-- results, dead; ARGV[4] = n, then n x (id, deliveries, kind, body,
-- record).
local out = {}
for i = 0, tonumber(ARGV[4]) - 1 do
  local b = 5 + i * 5
  local id, body, rec = ARGV[b], ARGV[b + 3], ARGV[b + 4]
  local e = redis.call('XRANGE', KEYS[1], id, id)
  local job = ''
  if #e > 0 then
    local fields = e[1][2]
    for j = 1, #fields, 2 do
      if fields[j] == 'job' then job = fields[j + 1] end
    end
  end
  redis.call('XADD', KEYS[2], '*', 'result', body)
  redis.call('HSET', rec, 'job', job, 'result', body, 'entry', id)
  redis.call('XACK', KEYS[1], ARGV[1], id)
  redis.call('XDEL', KEYS[1], id)
  out[#out + 1] = 1
end
return out
