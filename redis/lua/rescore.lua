-- The rescore script (prefixed with contest.lua): writes rescored
-- summaries. No keys; ARGV[1] = prefix, ARGV[2] = n, then n x
-- (submission, rev, summary, error, and the direct rescore's 11 texts,
-- all "" for none: see rescore_direct), then any number of places whose
-- task score tally computed (see take_whole).
-- The change JSON's old or new member.
local function scores(sc, ps)
  if sc == nil then return 'null' end
  return '{"score":' .. num(sc) .. ',"public_score":' .. num(ps) ..
    '}'
end

-- Whether stored summary a is of the same place as summary b (whose
-- place is known) and has no match, told without decoding a: the two
-- are the same bytes up to b's timestamp member, and neither names a
-- participant, task or contest after that (where a member would count
-- instead). A false answer only means "decode a".
local PLACE_KEYS = {'"participant":', '"task":', '"contest":'}
local function same_place(a, b)
  local i = string.find(b, ',"timestamp":', 1, true)
  if not i or string.sub(a, 1, i) ~= string.sub(b, 1, i) or
     string.find(a, '"match":', 1, true) then
    return false
  end
  for _, k in ipairs(PLACE_KEYS) do
    if string.find(a, k, i, true) or string.find(b, k, i, true) then
      return false
    end
  end
  return true
end

-- Rescores one submission whose hash h was read as (job, rev,
-- summary, score, public_score, scored, tokened, error). Events wait in evs
-- for the task scores. Returns 1 when a score changed, else 0.
local function rescore_one(rec, S, h, text, err, evs)
  local tok = h[7] == '1'
  local s = decode(text)
  if err == '' then err = 'not scored' end
  local new = ident(s)
  local old
  if new and h[3] and same_place(h[3], text) then
    old = {c = new.c, u = new.u, t = new.t, pk = new.pk, ck = new.ck,
           tk = new.tk, s = {}}
  else
    old = ident(decode(h[3]))
  end
  if s then
    write_summary(rec, text, s, tok, err, {},
                  {err = h[8] ~= nil, rev = h[2]})
  else
    redis.call('HSET', rec, 'scored', '0', 'error', err)
    redis.call('HDEL', rec, 'summary', 'score', 'public_score',
               'version')
    redis.call('HINCRBY', rec, 'rev', 1)
  end
  place(S, old, new, (tok and '1' or '0') .. (text or ''))
  touch(old)
  touch(new)
  local now = s ~= nil and is_scored(s)
  if now and new and s.version ~= nil then
    check_version(S, new.t, idtext(s.version) or '')
  else
    redis.call('SREM', P .. ':stale', S)
  end
  local os, ops, ns, nps
  if h[6] == '1' then os, ops = tonumber(h[4]), tonumber(h[5]) end
  if now then ns, nps = s.score, s.public_score end
  if os == ns and ops == nps then return 0 end
  local d = new or old or {}
  local function s_or_null(x)
    if x == nil then return 'null' end
    return str(x)
  end
  redis.call('XADD', P .. ':changes', '*', 'change', '{"contest":' ..
    s_or_null(d.c) .. ',"participant":' .. s_or_null(d.u) ..
    ',"task":' .. s_or_null(d.t) .. ',"submission":' .. str(S) ..
    ',"version":' ..
    s_or_null(now and idtext(s.version) or nil) .. ',"old":' ..
    scores(os, ops) .. ',"new":' .. scores(ns, nps) .. '}')
  local ov, nv = ops, nps
  if tok then ov, nv = os, ns end
  if ov ~= nv and new then
    evs[#evs + 1] = {d = new, S = S, tok = tok, view = brief(s, tok)}
  end
  return 1
end

-- The direct rescore (docs/contest.md) of a submission that stays in
-- its place, scored, whose hash h was read as (rev, tokened, error):
-- tally made what rescore_one would of it (dv:
-- contest, participant, task, score, public score, version, the change
-- entry or "" when the scores are the stored ones, whether the public
-- score and the score moved, the event's head, its view untokened and
-- tokened, and the tokened flag it was read with), from the stored
-- fields that the rev check vouches for; only the tokened flag is read
-- here, as a token does not count a revision. Each place's direct
-- rescores are counted, and whether each had the flag tally read.
local direct_n, direct_bad = {}, {}
local function rescore_direct(rec, S, h, text, dv, evs)
  local tok = h[2] == '1'
  local d = place_of(dv[1], dv[2], dv[3], {})
  direct_n[d.pk] = (direct_n[d.pk] or 0) + 1
  if string.byte(dv[8], 3) ~= (tok and 49 or 48) then
    direct_bad[d.pk] = true
  end
  write_summary(rec, text, nil, tok, nil, {},
                {err = h[3] ~= nil, rev = h[1]}, {dv[4], dv[5], dv[6]})
  redis.call('HSET', d.pk, S, (tok and '1' or '0') .. text)
  touch(d)
  check_version(S, d.t, dv[6])
  if dv[7] == '' then return 0 end
  redis.call('XADD', P .. ':changes', '*', 'change', dv[7])
  if string.byte(dv[8], tok and 2 or 1) == 49 then
    evs[#evs + 1] = {d = d, S = S, tok = tok, head = dv[9],
                     view = tok and dv[11] or dv[10]}
  end
  return 1
end

-- A place whose task score tally computed from all of its fields
-- (docs/contest.md, "The task scores of a direct rescore"), at ARGV[j]:
-- its contest, participant and task, how many of its fields this call
-- rescores directly, the task score's JSON, the place cache, '0' or '1'
-- for partial followed by the public task score, k, then k x
-- (submission, rev, tokened) for the other fields, which it keeps.
-- Taken when the place is the one tally computed from: every field
-- rescored directly here with the tokened flag tally read, each kept
-- field (once) at the rev and tokened flag read, and no other field.
-- A kept field at its rev still has the summary read, so it is still a
-- field of this place (every script writes a summary and its place's
-- field together); then the count says that no field is missing.
-- Returns the index after it.
local function take_whole(j)
  local k = tonumber(ARGV[j + 7])
  local after = j + 8 + 3 * k
  local d = dirty[place_of(ARGV[j], ARGV[j + 1], ARGV[j + 2], {}).pk]
  local n = direct_n[d and d.pk or '']
  if not n or direct_bad[d.pk] or n ~= tonumber(ARGV[j + 3]) or
     redis.call('HLEN', d.pk) ~= n + k then
    return after
  end
  local seen = {}
  for i = j + 8, after - 1, 3 do
    local S = ARGV[i]
    local h = redis.call('HMGET', P .. ':submission:' .. S, 'rev',
                         'tokened')
    if seen[S] or (h[1] or '0') ~= ARGV[i + 1] or
       (h[2] == '1' and '1' or '0') ~= ARGV[i + 2] then
      return after
    end
    seen[S] = true
  end
  local meta = ARGV[j + 6]
  d.whole = {score = ARGV[j + 4], cache = ARGV[j + 5],
             partial = string.byte(meta, 1) == 49,
             ps = tonumber(string.sub(meta, 2))}
  return after
end

P = ARGV[1]
local n = tonumber(ARGV[2])
local out, evs = {}, {}
for i = 0, n - 1 do
  local b = 3 + i * 15
  local S, rev = ARGV[b], ARGV[b + 1]
  local rec = P .. ':submission:' .. S
  if ARGV[b + 12] ~= '' and rev ~= '' and rev ~= '0' then
    -- A direct rescore reads neither the job nor the summary: a record
    -- at the rev it was read at, not 0, still has the job it was read
    -- with (no script removes a job but with the whole record).
    local h = redis.call('HMGET', rec, 'rev', 'tokened', 'error')
    if not h[1] then
      out[#out + 1] = -3
    elseif h[1] ~= rev then
      out[#out + 1] = -1
    else
      out[#out + 1] = rescore_direct(rec, S, h, ARGV[b + 2],
                                     {unpack(ARGV, b + 4, b + 14)}, evs)
    end
  else
    local h = redis.call('HMGET', rec, 'job', 'rev', 'summary', 'score',
                         'public_score', 'scored', 'tokened', 'error')
    if not h[1] then
      out[#out + 1] = -3
    elseif (h[2] or '0') ~= (rev ~= '' and rev or '0') then
      out[#out + 1] = -1
    else
      out[#out + 1] = rescore_one(rec, S, h, ARGV[b + 2], ARGV[b + 3],
                                  evs)
    end
  end
end
local j = 3 + n * 15
while j <= #ARGV do j = take_whole(j) end
local tss = flush()
for _, e in ipairs(evs) do
  publish('rescore', e.d, e.S, e.tok, e.view, tss[e.d.pk], e.head)
end
announce()
return out
