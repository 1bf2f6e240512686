-- The rescore script (prefixed with contest.lua): writes rescored
-- summaries. No keys; ARGV[1] = prefix, ARGV[2] = n, then n x
-- (submission, rev, summary, error, and the direct rescore's 11 texts,
-- all "" for none: see rescore_direct).
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
-- its place, scored: tally made what rescore_one would of it (dv:
-- contest, participant, task, score, public score, version, the change
-- entry or "" when the scores are the stored ones, whether the public
-- score and the score moved, the event's head, its view untokened and
-- tokened), from the stored fields that the rev check vouches for; only
-- the tokened flag is read here, as a token does not count a revision.
local function rescore_direct(rec, S, h, text, dv, evs)
  local tok = h[7] == '1'
  local d = place_of(dv[1], dv[2], dv[3], {})
  write_summary(rec, text, nil, tok, nil, {},
                {err = h[8] ~= nil, rev = h[2]}, {dv[4], dv[5], dv[6]})
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

P = ARGV[1]
local out, evs = {}, {}
for i = 0, tonumber(ARGV[2]) - 1 do
  local b = 3 + i * 15
  local S, rev = ARGV[b], ARGV[b + 1]
  local rec = P .. ':submission:' .. S
  local h = redis.call('HMGET', rec, 'job', 'rev', 'summary', 'score',
                       'public_score', 'scored', 'tokened', 'error')
  if not h[1] then
    out[#out + 1] = -3
  elseif (h[2] or '0') ~= (rev ~= '' and rev or '0') then
    out[#out + 1] = -1
  elseif ARGV[b + 12] ~= '' then
    out[#out + 1] = rescore_direct(rec, S, h, ARGV[b + 2],
                                   {unpack(ARGV, b + 4, b + 14)}, evs)
  else
    out[#out + 1] = rescore_one(rec, S, h, ARGV[b + 2], ARGV[b + 3],
                                evs)
  end
end
local tss = flush()
for _, e in ipairs(evs) do
  publish('rescore', e.d, e.S, e.tok, e.view, tss[e.d.pk], e.head)
end
announce()
return out
