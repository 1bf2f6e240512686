-- The contest state of docs/contest.md, shared by the post and rescore
-- scripts: the key names, the task score of each score mode as
-- contest/scoremode.c computes it, the rankings, and the JSON the scripts
-- write. Numbers are written by num(), never by cjson.encode, which keeps
-- 14 digits only; worker-rendered views are embedded as they are. Each
-- script sets P, the key prefix, before it calls any of it.
local P = ''
-- Tokens kept per participant for submissions not scored yet.
local MAX_PENDING_TOKENS = 100 -- luacheck: no unused (used by post only)

-- Publishes msg on a contest's channel: for a named queue (whose prefix
-- ends with its hash tag; a --prefix has no braces) a shard channel
-- (SPUBLISH, read with SSUBSCRIBE), which on a cluster stays on the
-- queue's shard; for queue main a plain one (PUBLISH), as before queues.
local function send_event(channel, msg)
  if string.sub(P, -1) == '}' then
    redis.call('SPUBLISH', channel, msg)
  else
    redis.call('PUBLISH', channel, msg)
  end
end

-- enc(x) of docs/contest.md: '%' -> %25, ':' -> %3A.
local function enc(x)
  if not string.find(x, '[%%:]') then return x end
  return (string.gsub(string.gsub(x, '%%', '%%25'), ':', '%%3A'))
end

-- The common prefix of every key of contest c: <p>:{<c>}, the contest's
-- id inside a Redis Cluster hash tag, so that all of them fall in one
-- slot. %, :, { and } are percent-encoded; the empty id is written %,
-- which no other id encodes to.
local bases = {}
local function cbase(c)
  local b = bases[c]
  if b then return b end
  if c == '' then
    b = P .. ':{%}'
  else
    b = P .. ':{' .. string.gsub(c, '[%%:{}]', function(ch)
      return string.format('%%%02X', string.byte(ch))
    end) .. '}'
  end
  bases[c] = b
  return b
end

-- a < b in byte order (Lua's < follows the server's locale).
local function bless(a, b)
  if a == b then return false end
  local n, i = math.min(#a, #b), 1
  while i <= n and string.byte(a, i) == string.byte(b, i) do
    i = i + 1
  end
  if i > n then return #a < #b end
  return string.byte(a, i) < string.byte(b, i)
end

-- nearbyint: to the nearest integer, ties to even.
local function rint(m)
  local f = math.floor(m)
  local d = m - f
  if d > 0.5 then return f + 1 end
  if d < 0.5 or f % 2 == 0 then return f end
  return f + 1
end

local P10 = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

-- The shortest text that reads back as v, as tally_json_num writes it
-- (config/jsonw.c). cjson.encode would keep only 14 digits.
local function num(v)
  if type(v) ~= 'number' or v ~= v or v == math.huge or
     v == -math.huge then
    return 'null'
  end
  if v == 0 then
    if 1 / v < 0 then return '-0.0' end
    return '0'
  end
  for k = 0, 9 do
    local m = v * P10[k + 1]
    if math.abs(m) >= 9007199254740992 then break end
    local r = rint(m)
    if r / P10[k + 1] == v then
      local d = string.format('%.0f', math.abs(r))
      if k > 0 then
        if #d <= k then d = string.rep('0', k + 1 - #d) .. d end
        d = string.sub(d, 1, #d - k) .. '.' .. string.sub(d, #d - k + 1)
      end
      if r < 0 then d = '-' .. d end
      return d
    end
  end
  local s
  for prec = 15, 17 do
    s = string.format('%.' .. prec .. 'g', v)
    if tonumber(s) == v then break end
  end
  return s
end

local function str(s) return cjson.encode(s) end
local function bool(b) if b then return 'true' end return 'false' end

-- The decoded object of a JSON text, or nil.
local function decode(s)
  if not s or s == '' then return nil end
  local ok, v = pcall(cjson.decode, s)
  if ok and type(v) == 'table' then return v end
  return nil
end

-- An id as text: a string as is, a number as num writes it.
local function idtext(v)
  if type(v) == 'string' then return v end
  if type(v) == 'number' then return num(v) end
  return nil
end

-- The place of contest c, participant u and task t, of summary s:
-- {c, u, t, s} with its pt key pk, place cache key ck and task scores
-- key tk.
local function place_of(c, u, t, s)
  local b, ut = cbase(c), enc(u) .. ':' .. enc(t)
  return {c = c, u = u, t = t, pk = b .. ':pt:' .. ut,
          ck = b .. ':ptagg:' .. ut, tk = b .. ':taskscores:' .. enc(u),
          s = s}
end

-- Where a summary counts (place_of), or nil when it names no
-- participant or task.
local function ident(s)
  if not s then return nil end
  local u, t = idtext(s.participant), idtext(s.task)
  if not u or not t then return nil end
  return place_of(idtext(s.contest) or 'default', u, t, s)
end

local function same(a, b)
  return a ~= nil and b ~= nil and a.c == b.c and a.u == b.u and
         a.t == b.t
end

local function is_scored(s)
  return s.scored ~= false and type(s.score) == 'number' and
         type(s.public_score) == 'number'
end

-- tally_round: the C library's "%.*f" then strtod, as in result.c.
local function round(x, n)
  n = math.floor(n)
  if x ~= x or x == math.huge or x == -math.huge or n < 0 or n > 10 then
    return x
  end
  return tonumber(string.format('%.' .. n .. 'f', x))
end

-- Whether (ts, id) comes after (bts, bid): by timestamp, ties by
-- submission id in byte order.
local function later(ts, id, bts, bid)
  return ts > bts or (ts == bts and bless(bid, id))
end

-- The members of a summary that a task score reads, in the order the
-- worker writes them (docs/contest.md), from timestamp on; a summary
-- in another order is decoded instead.
local SCORED = '^"timestamp":([^,]*),"official":(%a+),' ..
  '"tokened":%a+,"version":"[^"]*",' ..
  '"score_mode":"([%w_]*)",' ..
  '"score_precision":([^,]*),"score_rounding":"(%a*)",' ..
  '"score":([^,]*),"public_score":([^,]*),"max_score":[^,]*,' ..
  '"max_public_score":[^,]*,"compiled":(%a+),()'
local UNSCORED = '^"timestamp":([^,]*),"official":(%a+),' ..
  '"tokened":%a+,"scored":false}$'
-- The full side's text, and where the public side's begins: null or an
-- array of numbers (read by subtasks_of up to its closing bracket, so
-- that members after it, as judgement and language, are not read into
-- it).
local SUBTASKS = '^"subtasks":(.-),"public_subtasks":()'

-- A number list from a JSON array of numbers (null counts 0), or nil
-- when the text is not a non-empty array.
local function numbers(a)
  if type(a) == 'string' then
    if string.sub(a, 1, 1) ~= '[' then return nil end
    local out = {}
    for v in string.gmatch(a, '[^,%[%]%s]+') do
      out[#out + 1] = tonumber(v) or 0
    end
    if #out == 0 then return nil end
    return out
  end
  if type(a) ~= 'table' or #a == 0 then return nil end
  local out = {}
  for k = 1, #a do
    out[k] = type(a[k]) == 'number' and a[k] or 0
  end
  return out
end

-- What a task score needs of one pt value v of submission id: {id, ts,
-- off, ok (scored), tok, sc, ps, cmp (compiled), mode, prec, rnd}, and
-- where its subtasks are, read when asked for (subtasks_of). Each table
-- is made by one constructor, which sizes it once.
local function entry(id, v)
  local tok = string.byte(v, 1) == 49
  local i = string.find(v, '"timestamp":', 1, true)
  if i then
    local ts, off, mode, prec, rnd, sc, ps, cmp, at =
      string.match(v, SCORED, i)
    ts, sc, ps = tonumber(ts), tonumber(sc), tonumber(ps)
    if ts and sc and ps then
      return {id = id, ts = ts, off = off ~= 'false', ok = true,
              tok = tok, sc = sc, ps = ps, cmp = cmp ~= 'false',
              mode = mode, prec = tonumber(prec) or 0, rnd = rnd, v = v,
              at = at, sf = 0, sp = 0}
    end
    ts, off = string.match(v, UNSCORED, i)
    ts = tonumber(ts)
    if ts then
      return {id = id, ts = ts, off = off ~= 'false', ok = false,
              tok = tok}
    end
  end
  local s = decode(string.sub(v, 2))
  if not s then return nil end
  local ts = s.timestamp
  if type(ts) ~= 'number' then ts = 0 end
  return {id = id, ts = ts, off = s.official ~= false,
          ok = is_scored(s), tok = tok, sc = s.score,
          ps = s.public_score, cmp = s.compiled ~= false,
          mode = s.score_mode, prec = tonumber(s.score_precision) or 0,
          rnd = s.score_rounding, s = s}
end

-- The subtask scores of e's full side (or public side when pub), or nil
-- when the side is one subtask.
local function subtasks_of(e, pub)
  if e.s then
    if pub then return numbers(e.s.public_subtasks) end
    return numbers(e.s.subtasks)
  end
  -- Both sides' texts come from one match, kept for the other side in
  -- sf and sp (0 until then, false for none).
  if e.sf == 0 then
    local a, i = string.match(e.v, SUBTASKS, e.at)
    local b = i and (string.match(e.v, '^%b[]', i) or
                     string.match(e.v, '^null', i))
    e.sf, e.sp = a or false, b or false
  end
  if pub then return numbers(e.sp or nil) end
  return numbers(e.sf or nil)
end

-- The aggregate of one side of tally_task_score over subs (official
-- ones), with last the last of them; pub picks the side. What finish
-- makes the side's score of, and what a new submission can be merged
-- into (merge): under max {best}; under max_tokened_last {best tokened,
-- last's score}; under max_subtask {best of the results that are one
-- subtask, n, best of subtask 1, .., best of subtask n}.
local function aggregate(mode, subs, last, pub)
  local sk = pub and 'ps' or 'sc'
  if mode == 'max' then
    local best = 0.0
    for _, e in ipairs(subs) do
      if e.ok and e[sk] > best then best = e[sk] end
    end
    return {best}
  end
  if mode == 'max_tokened_last' then
    local ls, bt = 0.0, 0.0
    if last.ok then ls = last[sk] end
    for _, e in ipairs(subs) do
      if e.ok and e.tok and e[sk] > bt then bt = e[sk] end
    end
    return {bt, ls}
  end
  -- max_subtask: each subtask's best, in index order, and the best of
  -- the results that are one subtask; a compilation failure adds
  -- nothing.
  local nsub, whole, arrs = 0, 0.0, {}
  for _, e in ipairs(subs) do
    if e.ok and e.cmp then
      local a = subtasks_of(e, pub)
      if a then
        arrs[#arrs + 1] = a
        if #a > nsub then nsub = #a end
      elseif e[sk] > whole then
        whole = e[sk]
      end
    end
  end
  local agg = {whole, nsub}
  for k = 1, nsub do
    local best = 0.0
    for _, a in ipairs(arrs) do
      local v = a[k]
      if v and v > best then best = v end
    end
    agg[2 + k] = best
  end
  return agg
end

-- One side's score from its aggregate, as tally_task_score sums it.
local function finish(mode, a)
  if mode == 'max' then return a[1] end
  if mode == 'max_tokened_last' then
    if a[1] > a[2] then return a[1] end
    return a[2]
  end
  local total = 0.0
  for k = 1, a[2] do total = total + a[2 + k] end
  return total + a[1]
end

local function fin(x)
  return type(x) == 'number' and x == x and x ~= math.huge and
         x ~= -math.huge
end

-- Merges entry e (scored and official) into a, one side's aggregate
-- under mode (pub picks the side); is_last says that e becomes the last
-- submission. Returns false when a subtask score of e is not finite.
local function merge(mode, a, e, pub, is_last)
  local v = pub and e.ps or e.sc
  if mode == 'max' then
    if v > a[1] then a[1] = v end
    return true
  end
  if mode == 'max_tokened_last' then
    if e.tok and v > a[1] then a[1] = v end
    if is_last then a[2] = v end
    return true
  end
  if not e.cmp then return true end
  local arr = subtasks_of(e, pub)
  if not arr then
    if v > a[1] then a[1] = v end
    return true
  end
  local n = a[2]
  for k = 1, #arr do
    local x = arr[k]
    if not fin(x) then return false end
    local best = 0.0
    if k <= n then best = a[2 + k] end
    if x > best then best = x end
    a[2 + k] = best
  end
  if #arr > n then a[2] = #arr end
  return true
end

-- The task score over a pt hash read by HGETALL (submission id, then
-- '1' or '0' for tokened followed by its summary): {score,
-- public_score, partial, submissions}. The mode, precision and rounding
-- are those of the newest scored summary (by timestamp, then id).
-- Second, what the place's cache keeps: {n (fields), subs (official
-- ones), unsc (official ones not scored), par (the newest scored
-- entry), last, aggs (both sides' aggregates under par's mode)}.
local function compute(flat)
  local subs, last, par, unsc = {}, nil, nil, 0
  local out = {score = 0, public_score = 0, partial = false}
  for j = 1, #flat, 2 do
    local e = entry(flat[j], flat[j + 1])
    if e then
      if e.ok and (not par or later(e.ts, e.id, par.ts, par.id)) then
        par = e
      end
      if e.off then
        subs[#subs + 1] = e
        if not e.ok then
          out.partial = true
          unsc = unsc + 1
        end
        if not last or later(e.ts, e.id, last.ts, last.id) then
          last = e
        end
      end
    end
  end
  out.submissions = #subs
  local st = {n = #flat / 2, subs = #subs, unsc = unsc, par = par,
              last = last, aggs = {}}
  if #subs == 0 then return out, st end
  par = par or {prec = 0}
  for i, pub in ipairs({false, true}) do
    st.aggs[i] = aggregate(par.mode, subs, last, pub)
    local v = finish(par.mode, st.aggs[i])
    if par.rnd ~= 'none' then v = round(v, par.prec) end
    if pub then out.public_score = v else out.score = v end
  end
  return out, st
end

-- The place cache (<p>:ptagg:...): st of compute packed (the layout is
-- at CACHE_HEAD below), or nil when it cannot be kept (no official or no
-- scored submission, a mode or rounding of another name, a number that
-- is not finite).
local MODES = {max = true, max_subtask = true, max_tokened_last = true}

-- The place cache is binary, packed with Redis's struct library, so that
-- numbers go in and out exactly (the sign of zero too) without
-- formatting or parsing text: '2', then n, subs and unsc (int32), prec,
-- par.ts and last.ts (doubles), mode, rnd, par.id and last.id (each an
-- int32 length and its bytes), then each side's aggregate (an int32
-- count and that many doubles). All little-endian.
local CACHE_HEAD = '<c1i4i4i4ddd'

local function packed_str(x)
  return struct.pack('<i4', #x) .. x
end

local function cache_text(st)
  local par, last = st.par, st.last
  if not par or not last or not MODES[par.mode] or
     type(par.rnd) ~= 'string' or not string.find(par.rnd, '^[%w_]+$') or
     not fin(par.prec) or not fin(par.ts) or not fin(last.ts) then
    return nil
  end
  local w = {struct.pack(CACHE_HEAD, '2', st.n, st.subs, st.unsc, par.prec,
                         par.ts, last.ts),
             packed_str(par.mode), packed_str(par.rnd), packed_str(par.id),
             packed_str(last.id)}
  for _, a in ipairs(st.aggs) do
    for k = 1, #a do
      if not fin(a[k]) then return nil end
    end
    w[#w + 1] = struct.pack('<i4', #a)
    if #a > 0 then
      w[#w + 1] = struct.pack('<' .. string.rep('d', #a), unpack(a))
    end
  end
  return table.concat(w)
end

-- The string at position i of cache c (an int32 length, then its bytes)
-- and the position after it, or nil.
local function unpacked_str(c, i)
  if i + 3 > #c then return nil end
  local n = struct.unpack('<i4', c, i)
  if n < 0 or i + 3 + n > #c then return nil end
  return string.sub(c, i + 4, i + 3 + n), i + 4 + n
end

-- The st that cache c was made of (par and last with ts and id, par with
-- mode, prec and rnd), or nil when c is not such a cache (a cache of an
-- earlier format, as text, is not: the place is recomputed and its cache
-- written again).
local function load_cache(c)
  if string.sub(c, 1, 1) ~= '2' or #c < 37 then return nil end
  local _, n, subs, unsc, prec, pts, lts, i =
    struct.unpack(CACHE_HEAD, c)
  local mode, rnd, pid, lid
  mode, i = unpacked_str(c, i)
  if not mode or not MODES[mode] then return nil end
  rnd, i = unpacked_str(c, i)
  if not rnd then return nil end
  pid, i = unpacked_str(c, i)
  if not pid then return nil end
  lid, i = unpacked_str(c, i)
  if not lid then return nil end
  local st = {n = n, subs = subs, unsc = unsc, aggs = {},
              par = {ts = pts, id = pid, mode = mode, prec = prec,
                     rnd = rnd},
              last = {ts = lts, id = lid}}
  for side = 1, 2 do
    if i + 3 > #c then return nil end
    local len = struct.unpack('<i4', c, i)
    i = i + 4
    local want = 1
    if mode == 'max_tokened_last' then
      want = 2
    elseif mode == 'max_subtask' then
      want = nil
    end
    if len < 1 or (want and len ~= want) or i + 8 * len - 1 > #c then
      return nil
    end
    local a = {struct.unpack('<' .. string.rep('d', len), c, i)}
    a[len + 1] = nil -- the position after them
    if mode == 'max_subtask' and (len < 2 or a[2] ~= len - 2) then
      return nil
    end
    st.aggs[side] = a
    i = i + 8 * len
  end
  if i ~= #c + 1 then return nil end
  return st
end

-- The JSON of task score ts, as <p>:taskscores holds it.
local function score_json(ts)
  return '{"score":' .. num(ts.score) .. ',"public_score":' ..
    num(ts.public_score) .. ',"partial":' .. bool(ts.partial) ..
    ',"submissions":' .. ts.submissions .. '}'
end

-- The place caches this call wrote, by key (false: deleted); the places
-- (pt keys) whose precomputed task score was taken, and the contest and
-- task sets that places given a submission are to be in (flush writes
-- them).
local caches_written, pre_taken, sets_pending = {}, {}, {}

-- Stores task score ts of d, and the place cache (nil: none).
local function store(d, ck, ts, cache)
  redis.call('HSET', d.tk, d.t, score_json(ts))
  if cache then
    redis.call('SET', ck, cache)
  else
    redis.call('DEL', ck)
  end
  caches_written[ck] = cache or false
end

-- The fast path computed by tallyd (contest/placecalc.c) for d's new
-- field v: {expect, cache, score, meta}. Taken when the place cache c
-- is expect byte for byte, v's tokened flag is the one it assumed and
-- the place has the field count it says; it is then what add_score
-- would compute from c, written as given. Returns the task score, or
-- nil when it does not apply.
local function add_precomputed(d, ck, c, v, pre)
  if c ~= pre.expect or string.byte(v, 1) ~= string.byte(pre.meta, 1) then
    return nil
  end
  local part, n, ps = string.match(pre.meta, '^.(.)(%d+):(.+)$')
  ps = tonumber(ps)
  if not ps or redis.call('HLEN', d.pk) ~= tonumber(n) then return nil end
  redis.call('HSET', d.tk, d.t, pre.score)
  redis.call('SET', ck, pre.cache)
  caches_written[ck] = pre.cache
  pre_taken[d.pk] = true
  return {public_score = ps, partial = part == '1'}
end

-- The fast path of a task score: d's pt hash got one new field, S = v
-- (a field it did not have), and nothing else changed. When v is a
-- scored summary and the place cache ck fits (its field count, and the
-- mode, precision and rounding of the newest scored summary, which v
-- may become), v is merged into the cached aggregates and the task
-- score stored as compute would make it. Returns it, or nil, having
-- written nothing, when the place is to be recomputed.
local function add_score(d, ck, S, v)
  local c = redis.call('GET', ck)
  if not c then return nil end
  if d.pre then
    local ts = add_precomputed(d, ck, c, v, d.pre)
    if ts then return ts end
  end
  local st = load_cache(c)
  local e = st and entry(S, v)
  if not e or not e.ok or not fin(e.ts) or not fin(e.sc) or
     not fin(e.ps) then
    return nil
  end
  local par, last = st.par, st.last
  if later(e.ts, e.id, par.ts, par.id) then
    if e.mode ~= par.mode or e.prec ~= par.prec or e.rnd ~= par.rnd then
      return nil
    end
    par.ts, par.id = e.ts, e.id
  end
  if e.off then
    local is_last = later(e.ts, e.id, last.ts, last.id)
    for i, pub in ipairs({false, true}) do
      if not merge(par.mode, st.aggs[i], e, pub, is_last) then
        return nil
      end
    end
    if is_last then last.ts, last.id = e.ts, e.id end
    st.subs = st.subs + 1
  end
  if redis.call('HLEN', d.pk) ~= st.n + 1 then return nil end
  st.n = st.n + 1
  local out = {partial = st.unsc > 0, submissions = st.subs}
  for i, pub in ipairs({false, true}) do
    local x = finish(par.mode, st.aggs[i])
    if par.rnd ~= 'none' then x = round(x, par.prec) end
    if pub then out.public_score = x else out.score = x end
  end
  store(d, ck, out, cache_text(st))
  return out
end

-- Stores the task score of d: as computed by tally rescore when d.whole
-- holds it, by the fast path when d was touched with its one new field,
-- else recomputed from the whole place; nil when d has no submissions
-- left.
local function task_score(d)
  local ck = d.ck
  local w = d.whole
  if w then
    -- Computed by tally rescore from the whole place (rescore.lua's
    -- take_whole checked the place it assumed).
    redis.call('HSET', d.tk, d.t, w.score)
    redis.call('SET', ck, w.cache)
    caches_written[ck] = w.cache
    pre_taken[d.pk] = true
    return {public_score = w.ps, partial = w.partial}
  end
  if d.add then
    local ts = add_score(d, ck, d.add, d.addv)
    if ts then return ts end
  end
  local flat = redis.call('HGETALL', d.pk)
  if #flat == 0 then
    redis.call('HDEL', d.tk, d.t)
    redis.call('DEL', ck)
    caches_written[ck] = false
    return nil
  end
  local ts, st = compute(flat)
  store(d, ck, ts, cache_text(st))
  return ts
end

-- A sorted set's score argument for x: Redis keeps the double the text
-- reads as, and 17 significant digits read back as x exactly, so the
-- shortest form (num, 3 times slower) is not needed; num still writes
-- what is not finite.
local function score_arg(x)
  if x ~= x or x == math.huge or x == -math.huge then return num(x) end
  return string.format('%.17g', x)
end

-- Sums d's participant's task scores in task name byte order into both
-- rankings.
local function totals(d)
  local flat = redis.call('HGETALL', d.tk)
  local rk = cbase(d.c) .. ':ranking'
  if #flat == 0 then
    redis.call('ZREM', rk, d.u)
    redis.call('ZREM', rk .. ':public', d.u)
    return
  end
  local order = {}
  for j = 1, #flat, 2 do order[#order + 1] = j end
  table.sort(order, function(a, b) return bless(flat[a], flat[b]) end)
  local s, ps = 0.0, 0.0
  for _, j in ipairs(order) do
    local a, b = string.match(flat[j + 1],
      '^{"score":([^,]*),"public_score":([^,]*),')
    s = s + (tonumber(a) or 0)
    ps = ps + (tonumber(b) or 0)
  end
  redis.call('ZADD', rk, score_arg(s), d.u)
  redis.call('ZADD', rk .. ':public', score_arg(ps), d.u)
end

-- Elo ratings (docs/challenges.md). A participant's rating in a contest
-- is a pure function of their rated matches: the official, scored
-- summaries with a "match" member. <p>:{<c>}:matches:<enc u> keeps
-- them (submission id -> match text), and every change to it replays
-- them in (timestamp, submission id) order into <p>:{<c>}:elo:<enc u>
-- and the contest's rating ranking <p>:{<c>}:elo; a new match later
-- than all the others is played on the stored rating instead, which is
-- the same arithmetic.
local ELO_START, ELO_FLOOR = 1000, 100
local RESULT_S = {win = 1, draw = 0.5, loss = 0}

-- The match text of summary s: 'timestamp result opponent verified
-- attempt memoryless' (numbers as num writes them, flags 1 or 0), or
-- nil when s is not a rated match.
local function match_text(s)
  local m = s.match
  if type(m) ~= 'table' or s.official == false or not is_scored(s) or
     type(s.timestamp) ~= 'number' or not fin(s.timestamp) or
     not RESULT_S[m.result] or type(m.opponent) ~= 'number' or
     not fin(m.opponent) then
    return nil
  end
  local att = type(m.attempt) == 'number' and m.attempt or 0
  return num(s.timestamp) .. ' ' .. m.result .. ' ' .. num(m.opponent) ..
    ' ' .. (m.verified == true and '1' or '0') .. ' ' .. num(att) ..
    ' ' .. (m.memoryless == true and '1' or '0')
end

-- The match of submission id from its text t, or nil.
local function parse_match(id, t)
  local ts, r, opp, ver, att, mem =
    string.match(t, '^(%S+) (%a+) (%S+) ([01]) (%S+) ([01])$')
  ts, opp, att = tonumber(ts), tonumber(opp), tonumber(att)
  if not ts or not RESULT_S[r] or not opp or not att then return nil end
  return {id = id, ts = ts, s = RESULT_S[r], opp = opp, ver = ver == '1',
          att = att, mem = mem == '1'}
end

-- Plays match m on rating state st, as tally_elo_play (contest/elo.c).
local function play(st, m)
  local r = st.rating
  local e = 1 / (1 + 10 ^ ((m.opp - r) / 400))
  local k = 32
  if st.matches >= 30 then k = 16 end
  local change = math.floor(r + k * (m.s - e) + 0.5) - r
  if m.ver and change > 0 then
    local f = 1.1
    if m.att == 1 and m.mem then f = 1.2 end
    change = math.floor(change * f + 0.5)
  end
  st.rating = math.max(ELO_FLOOR, r + change)
  st.matches = st.matches + 1
  if m.s >= 1 then
    st.wins = st.wins + 1
  elseif m.s > 0 then
    st.draws = st.draws + 1
  else
    st.losses = st.losses + 1
  end
  st.ts, st.id = m.ts, m.id
end

-- The ratings to be recomputed, each once, and the rating events that
-- wait for the scripts' other events (announce).
local rerated, rerated_list, rating_events = {}, {}, {}

-- Marks the rating of d's participant in d's contest to be recomputed.
-- S and m, when given, say that the one change to its matches is the
-- new match S with text m; a rating touched twice is replayed.
local function rerate(d, S, m)
  local cu = enc(d.c) .. ':' .. enc(d.u)
  local r = rerated[cu]
  if r then
    r.add = nil
    return
  end
  local b = cbase(d.c)
  r = {c = d.c, u = d.u, mk = b .. ':matches:' .. enc(d.u),
       rk = b .. ':elo:' .. enc(d.u), zk = b .. ':elo', add = S,
       addm = m}
  rerated[cu] = r
  rerated_list[#rerated_list + 1] = r
end

-- Keeps submission S's match text m (nil: none) among d's participant's
-- matches in d's contest.
local function keep_match(d, S, m)
  local mk = cbase(d.c) .. ':matches:' .. enc(d.u)
  local prev = redis.call('HGET', mk, S) or nil
  if prev == m then return end
  if m then
    redis.call('HSET', mk, S, m)
  else
    redis.call('HDEL', mk, S)
  end
  if m and not prev then
    rerate(d, S, m)
  else
    rerate(d)
  end
end

-- Recomputes rating r (rerate) and stores it; queues a rating event
-- when the rating changed, appeared or went.
local function rate(r)
  local cur = redis.call('HMGET', r.rk, 'rating', 'matches', 'wins',
                         'draws', 'losses', 'timestamp', 'last')
  local prev, st = tonumber(cur[1]), nil
  if r.add and prev then
    st = {rating = prev, matches = tonumber(cur[2]),
          wins = tonumber(cur[3]), draws = tonumber(cur[4]),
          losses = tonumber(cur[5]), ts = tonumber(cur[6]), id = cur[7]}
    local m = parse_match(r.add, r.addm)
    if m and st.matches and st.wins and st.draws and st.losses and
       st.ts and st.id and later(m.ts, m.id, st.ts, st.id) and
       redis.call('HLEN', r.mk) == st.matches + 1 then
      play(st, m)
    else
      st = nil
    end
  end
  if not st then
    local flat = redis.call('HGETALL', r.mk)
    local ms = {}
    for j = 1, #flat, 2 do
      ms[#ms + 1] = parse_match(flat[j], flat[j + 1])
    end
    table.sort(ms, function(a, b) return later(b.ts, b.id, a.ts, a.id) end)
    st = {rating = ELO_START, matches = 0, wins = 0, draws = 0,
          losses = 0}
    for _, m in ipairs(ms) do play(st, m) end
  end
  if st.matches == 0 then
    redis.call('DEL', r.rk)
    redis.call('ZREM', r.zk, r.u)
  else
    redis.call('HSET', r.rk, 'rating', num(st.rating), 'matches',
               st.matches, 'wins', st.wins, 'draws', st.draws, 'losses',
               st.losses, 'timestamp', num(st.ts), 'last', st.id)
    redis.call('ZADD', r.zk, num(st.rating), r.u)
  end
  local now = st.matches > 0 and st.rating or nil
  if now ~= prev then
    local ev = '{"type":"rating","contest":' .. str(r.c) ..
      ',"participant":' .. str(r.u) .. ',"rating":' ..
      (now and num(now) or 'null') .. ',"previous":' ..
      (prev and num(prev) or 'null') .. ',"matches":' .. st.matches ..
      ',"wins":' .. st.wins .. ',"draws":' .. st.draws .. ',"losses":' ..
      st.losses .. '}'
    rating_events[#rating_events + 1] = {c = r.c, ev = ev}
  end
end

-- Writes the rating events that wait on <p>:public and publishes them,
-- after the events of the scores that moved them.
local function announce()
  for _, e in ipairs(rating_events) do
    redis.call('XADD', P .. ':public', '*', 'event', e.ev)
    send_event(cbase(e.c) .. ':events', e.ev)
  end
  rating_events = {}
end

-- The places whose task scores are to be recomputed, each once.
local dirty, dirty_list = {}, {}

-- Marks place d (nil: none) to be recomputed. S and v, when given, say
-- that the one change to d's pt hash is its new field S = v, which the
-- fast path may merge into the place cache (pre: as tallyd computed it,
-- add_precomputed); a place touched twice is recomputed.
local function touch(d, S, v, pre)
  if not d then return end
  if dirty[d.pk] then
    dirty[d.pk].add = nil
    return
  end
  d.add, d.addv, d.pre = S, v, pre
  dirty[d.pk] = d
  dirty_list[#dirty_list + 1] = d
end

-- Recomputes the touched places, then each participant's totals once.
-- Returns the new task scores by pt key.
local function flush()
  local res, seen = {}, {}
  for _, d in ipairs(dirty_list) do res[d.pk] = task_score(d) end
  -- The contest and task of each place given a submission, but a place
  -- whose precomputed task score was taken: its cache was there, so
  -- they are already.
  for _, w in ipairs(sets_pending) do
    if not pre_taken[w.pk] then
      redis.call('SADD', P .. ':contests', w.c)
      redis.call('SADD', cbase(w.c) .. ':tasks', w.t)
    end
  end
  sets_pending, pre_taken = {}, {}
  for _, d in ipairs(dirty_list) do
    if not seen[d.tk] then
      seen[d.tk] = true
      totals(d)
    end
  end
  for _, r in ipairs(rerated_list) do rate(r) end
  dirty, dirty_list, rerated, rerated_list = {}, {}, {}, {}
  return res
end

-- Moves submission S's pt value from old to new (either may be nil),
-- keeping the index sets. Returns 1 when new's pt hash had no field S
-- before, else 0.
local function place(S, old, new, value)
  local om = old and type(old.s.match) == 'table'
  if om and not (new and new.c == old.c and new.u == old.u) then
    keep_match(old, S, nil)
  end
  if new and (om or type(new.s.match) == 'table') then
    keep_match(new, S, match_text(new.s))
  end
  if old and not same(old, new) then
    redis.call('HDEL', old.pk, S)
    for k, name in pairs({c = 'contest', u = 'participant',
                          t = 'task'}) do
      if not new or new[k] ~= old[k] then
        redis.call('SREM', P .. ':index:' .. name .. ':' .. enc(old[k]),
                   S)
      end
    end
  end
  if not new then return 0 end
  local added = redis.call('HSET', new.pk, S, value)
  if same(old, new) then return added end
  redis.call('SADD', P .. ':index:task:' .. enc(new.t), S)
  redis.call('SADD', P .. ':index:contest:' .. enc(new.c), S)
  redis.call('SADD', P .. ':index:participant:' .. enc(new.u), S)
  sets_pending[#sets_pending + 1] = {pk = new.pk, c = new.c, t = new.t}
  return added
end

-- Writes summary text (s decoded) to the submission hash rec, with the
-- fields of extra (a flat list), and counts one more revision. An
-- unscored summary is stored with err. When known is given, the
-- record was read in this call: known.rev its rev (nil: none) and
-- known.err whether it has an error field, so that the revision is
-- written with the rest and no error is deleted that is not there.
-- nums, when given, are a scored summary's score, public score and
-- version as tally wrote them (s is then not read).
local function write_summary(rec, text, s, tok, err, extra, known, nums)
  local a = {'HSET', rec, 'summary', text, 'tokened',
             tok and '1' or '0'}
  local del
  if nums or is_scored(s) then
    if not nums then
      nums = {num(s.score), num(s.public_score), idtext(s.version) or ''}
    end
    for _, x in ipairs({'scored', '1', 'score', nums[1],
                        'public_score', nums[2], 'version', nums[3]}) do
      a[#a + 1] = x
    end
    if not known or known.err then del = {'HDEL', rec, 'error'} end
  else
    for _, x in ipairs({'scored', '0', 'error', err}) do
      a[#a + 1] = x
    end
    del = {'HDEL', rec, 'score', 'public_score', 'version'}
  end
  for _, x in ipairs(extra) do a[#a + 1] = x end
  local rev = known and tonumber(known.rev or '0')
  if rev and rev == math.floor(rev) and rev >= 0 and rev < 2^53 then
    a[#a + 1] = 'rev'
    a[#a + 1] = string.format('%d', rev + 1)
  else
    rev = nil
  end
  redis.call(unpack(a))
  if del then redis.call(unpack(del)) end
  if not rev then redis.call('HINCRBY', rec, 'rev', 1) end
end

-- Marks S stale unless v is task t's current version (which it becomes
-- when t has none). Returns true when stale.
local function check_version(S, t, v)
  local cur = redis.call('HGET', P .. ':taskversions', t)
  if not cur then
    redis.call('HSETNX', P .. ':taskversions', t, v)
    cur = v
  end
  if cur ~= v then
    redis.call('SADD', P .. ':stale', S)
    return true
  end
  redis.call('SREM', P .. ':stale', S)
  return false
end

-- The view {score, max_score} of a summary: full when tokened, public
-- otherwise; nulls when it is not scored.
local function brief(s, tok)
  if not s or not is_scored(s) then
    return '{"score":null,"max_score":null}'
  end
  if tok then
    return '{"score":' .. num(s.score) .. ',"max_score":' ..
      num(s.max_score) .. '}'
  end
  return '{"score":' .. num(s.public_score) .. ',"max_score":' ..
    num(s.max_public_score) .. '}'
end

-- Writes a contestant event on <p>:public and publishes it. ts is the
-- new task score of d (nil when none): only its public side is shown.
-- Whether view argument v is the key the view was written to (it starts
-- with the prefix and a colon) rather than the view's JSON itself.
local function is_key(v)
  return v ~= nil and string.sub(v, 1, #P + 1) == P .. ':'
end

-- Adds event ev of contest c to the contestant stream and publishes
-- it; view, when it is a view's key, goes with it as the entry's field
-- "view" (which the retention deletes with the entry).
local function publish_event(c, ev, view)
  if is_key(view) then
    redis.call('XADD', P .. ':public', '*', 'event', ev, 'view', view)
  else
    redis.call('XADD', P .. ':public', '*', 'event', ev)
  end
  send_event(cbase(c) .. ':events', ev)
end

-- Adds a contestant event to the contestant stream and publishes it. A
-- view given by its key is named, not copied: "view_key" in the event.
-- head, when given, is the event's text up to its "tokened" member's
-- value, as tally made it (the direct rescore).
local function publish(typ, d, S, tok, view, ts, head)
  local v
  if is_key(view) then
    v = ',"view_key":' .. str(view)
  else
    v = ',"view":' .. view
  end
  head = head or ('{"type":' .. str(typ) .. ',"contest":' .. str(d.c) ..
    ',"participant":' .. str(d.u) .. ',"task":' .. str(d.t) ..
    ',"submission":' .. str(S) .. ',"tokened":')
  local ev = head .. bool(tok) ..
    v .. ',"task_score":{"score":' ..
    num(ts and ts.public_score or 0) .. ',"partial":' ..
    bool(ts and ts.partial) .. '}}'
  publish_event(d.c, ev, view)
end
