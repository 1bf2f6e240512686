-- The retention script (docs/operations.md): trims each stream tally
-- writes with XTRIM MINID, by age and by count, never past an entry a
-- consumer group still needs. KEYS = n streams, then their n
-- checkpoint sorted sets; ARGV[1] = the time in ms (0: Redis's clock,
-- which made the stream IDs), then per stream its age limit in ms, its
-- count limit (0: none) and 1 when its entries name keys that go with
-- them (the field "body" of the results stream, "view" of the
-- contestant stream), else 0. The keys
-- of at most MAX_BODIES entries go per run, and the trim stops there
-- (the next run goes on), so a run stays short. The count is kept with
-- checkpoints, not MAXLEN: each run records the stream's entries-added
-- and last ID, and the newest checkpoint at least the limit behind
-- gives the MINID, so a stream keeps at least its count (at most one
-- run's worth more). Returns per stream {trimmed, length}.
local n = #KEYS / 2
local now = tonumber(ARGV[1])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function split(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end

local function less(a, b)
  local am, as = split(a)
  local bm, bs = split(b)
  return am < bm or (am == bm and as < bs)
end

local function succ(id)
  local ms, seq = split(id)
  return string.format('%.0f-%.0f', ms, seq + 1)
end

-- A flat reply's field.
local function field(flat, name)
  for i = 1, #flat, 2 do
    if flat[i] == name then return flat[i + 1] end
  end
end

-- The first entry a consumer group of s still needs: its oldest pending
-- entry, else the one after the last delivered.
local function needed(s)
  local bound
  for _, g in ipairs(redis.call('XINFO', 'GROUPS', s)) do
    local name = field(g, 'name')
    local b = succ(field(g, 'last-delivered-id'))
    if field(g, 'pending') > 0 then
      local p = redis.call('XPENDING', s, name, '-', '+', 1)
      if p[1] and less(p[1][1], b) then b = p[1][1] end
    end
    if not bound or less(b, bound) then bound = b end
  end
  return bound
end

local MAX_BODIES = 100000

-- Deletes the body keys of the entries of s before minid, at most
-- MAX_BODIES of them; returns the ID the trim may go up to.
local function drop_bodies(s, minid)
  local from, done = '-', 0
  while done < MAX_BODIES do
    local e = redis.call('XRANGE', s, from, '(' .. minid, 'COUNT', 1000)
    if #e == 0 then return minid end
    local keys = {}
    for _, x in ipairs(e) do
      local k = field(x[2], 'body') or field(x[2], 'view')
      if k then keys[#keys + 1] = k end
    end
    if #keys > 0 then redis.call('UNLINK', unpack(keys)) end
    done = done + #e
    from = '(' .. e[#e][1]
    if #e < 1000 then return minid end
    if done >= MAX_BODIES then return succ(e[#e][1]) end
  end
  return minid
end

local out = {}
for i = 1, n do
  local s, cp = KEYS[i], KEYS[n + i]
  local age = tonumber(ARGV[3 * i - 1])
  local count = tonumber(ARGV[3 * i])
  local bodies = ARGV[3 * i + 1] == '1'
  local trimmed, len = 0, 0
  if redis.call('EXISTS', s) == 1 then
    local info = redis.call('XINFO', 'STREAM', s)
    len = field(info, 'length')
    local added = field(info, 'entries-added')
    local last = field(info, 'last-generated-id')
    -- A full Redis refuses the checkpoint, not the trim that frees memory.
    if added > 0 and count > 0 then
      redis.pcall('ZADD', cp, added, last)
    end
    local minid
    if age > 0 and now > age then
      minid = string.format('%.0f-0', now - age)
    end
    if count > 0 and added > count then
      local c = redis.call('ZREVRANGEBYSCORE', cp, added - count, '-inf',
                          'WITHSCORES', 'LIMIT', 0, 1)
      if c[1] then
        local m = succ(c[1])
        if not minid or less(minid, m) then minid = m end
        -- Older checkpoints are never needed again.
        redis.call('ZREMRANGEBYSCORE', cp, '-inf', '(' .. c[2])
      end
    end
    if minid then
      local bound = needed(s)
      if bound and less(bound, minid) then minid = bound end
      if bodies then minid = drop_bodies(s, minid) end
      trimmed = redis.call('XTRIM', s, 'MINID', minid)
      len = len - trimmed
    end
    -- A bound on the checkpoints of a stream trimmed by age alone.
    redis.call('ZREMRANGEBYRANK', cp, 0, -100001)
  end
  out[i] = {trimmed, len}
end
return out
