-- The post script (prefixed with owned.lua, job_of.lua and contest.lua).
-- KEYS = jobs, results, dead; ARGV[1] = group, ARGV[2] = consumer,
-- ARGV[3] = prefix, ARGV[4] = n, then n x (id, deliveries, kind, body,
-- record, summary, public view, full view, a result's task score as
-- tallyd computed it: expected cache, cache, score, meta, all "" for
-- none (see add_precomputed), and its direct post: contest,
-- participant, task, score, public score, version, event, all "" for
-- none (see post_direct; the event is never "" otherwise)), where a
-- full view of "-" is one withheld (TALLY_POST_NEED_FULL). Returns the
-- n codes, then n place caches: each result's as its item left it (""
-- for none), for tallyd to compute from next time. A result's body is
-- not here: it is the key the caller wrote the result to, in the same
-- MULTI, so that Lua never copies it; so may a view be (is_key). The
-- job is deleted once acknowledged, so the jobs stream never needs a
-- MAXLEN trim (which on Redis 7.0 deletes pending entries too).
-- Deletes v when it is a view's or a body's key that no entry will name.
local function drop_key(v)
  if is_key(v) then redis.call('DEL', v) end
end

local function dead(job, err, dl, id)
  redis.call('XADD', KEYS[3], '*', 'job', job, 'error', err,
             'deliveries', dl, 'id', id)
end

-- Adds a result, stores its summary and updates the contest state.
-- Returns the item's code; 3, having written nothing, when the
-- submission is tokened and the full view was withheld ('-').
-- The fields of submission hash rec that a post reads: summary,
-- tokened, token_participant, token_entry, error and rev.
local function read_record(rec)
  return redis.call('HMGET', rec, 'summary', 'tokened',
                    'token_participant', 'token_entry', 'error', 'rev')
end

-- What write_summary may know of record h (read_record).
local function known(h)
  return {err = h[5] ~= nil, rev = h[6]}
end

-- Whether record h (read_record) holds a token that may be applied
-- to a submission of participant u: a token kept while the submission
-- was not scored (no summary) names its participant, checked now.
-- Returns that, and the cause when the kept token is refused.
local function token_ok(h, S, u)
  if h[2] ~= '1' then return false end
  if h[1] or not h[3] or h[3] == '' or h[3] == u then return true end
  return false, 'token for participant ' .. str(h[3]) ..
    ', but submission ' .. str(S) .. ' is of participant ' .. str(u)
end

-- Settles a token kept until submission S came: it leaves the pending
-- set of its participant; refused (bad), it is dead-lettered and the
-- submission is not tokened.
local function settle_token(rec, h, S, bad)
  if h[2] ~= '1' or h[1] then return end
  redis.call('SREM', P .. ':pendingtokens:' .. enc(h[3] or ''), S)
  redis.call('HDEL', rec, 'token_participant', 'token_entry')
  if bad then
    redis.call('HSET', rec, 'tokened', '0')
    redis.call('XADD', KEYS[3], '*', 'job', '', 'error', bad,
               'deliveries', 1, 'id', h[4] or '')
  end
end

-- The results entry of a result stored at key: small, for Lua and for
-- readers; the body is fetched from key.
local function add_result(S, id, key)
  if S then
    return redis.call('XADD', KEYS[2], '*', 'submission', S, 'entry', id,
                      'body', key)
  end
  return redis.call('XADD', KEYS[2], '*', 'entry', id, 'body', key)
end

local function post_result(rec, job, id, body, text, pubv, fullv, pre)
  local S = string.sub(rec, #P + 13)
  local h = read_record(rec)
  local s = decode(text)
  local new = ident(s)
  local tokd, bad = token_ok(h, S, new and new.u)
  if new and fullv == '-' and (tokd or s.tokened == true) then
    return 3
  end
  if new then settle_token(rec, h, S, bad) end
  if fullv == '-' then fullv = '' end
  local rid = add_result(S, id, body)
  local old = ident(decode(h[1]))
  if not new then
    drop_key(pubv)
    drop_key(fullv)
    -- A new job is a new revision, so that a rescore that read the
    -- record before writes nothing scored from the job it replaced.
    redis.call('HSET', rec, 'job', job, 'entry', id, 'result_entry',
               rid)
    redis.call('HINCRBY', rec, 'rev', 1)
    if old then
      redis.call('HDEL', rec, 'summary', 'version', 'score',
                 'public_score', 'scored', 'error')
      place(S, old, nil)
      touch(old)
      flush()
      announce()
    end
    return 1
  end
  local tok = tokd or s.tokened == true
  write_summary(rec, text, s, tok, 'not scored',
                {'job', job, 'entry', id, 'result_entry', rid}, known(h))
  local value = (tok and '1' or '0') .. text
  if place(S, old, new, value) == 1 and not old then
    touch(new, S, value, pre)
  else
    touch(old)
    touch(new)
  end
  local ts = flush()[new.pk]
  local code = 1
  if is_scored(s) and s.version ~= nil and
     check_version(S, new.t, idtext(s.version) or '') then
    code = 2
  end
  local view, unused = pubv, fullv
  if tok then view, unused = fullv, pubv end
  drop_key(unused)
  if view == '' then view = brief(s, tok) end
  publish('score', new, S, tok, view, ts)
  announce()
  return code, caches_written[new.ck]
end

-- The direct post of a result (docs/contest.md, "The direct post"):
-- tallyd made every text that post_result would write for a new scored
-- submission (dv: contest, participant, task, score, public score,
-- version, event) with its task score (pre). It is written as given
-- when the state is the one tallyd assumed: the record holds no
-- summary, token or error; the task's version is the summary's; the
-- place's cache is pre.expect, and the place has one field less than
-- pre.meta counts and not S. Otherwise nothing is written and nil
-- returned: post_result then posts from the summary. Returns the
-- item's code and the place cache it left.
local function post_direct(rec, job, id, body, text, pubv, fullv, pre, dv)
  local S = string.sub(rec, #P + 13)
  local h = read_record(rec)
  if h[1] or h[2] == '1' or h[5] then return nil end
  local rev = tonumber(h[6] or '0')
  if not rev or rev ~= math.floor(rev) or rev < 0 or rev >= 2^53 or
     redis.call('HGET', P .. ':taskversions', dv[3]) ~= dv[6] then
    return nil
  end
  local d = place_of(dv[1], dv[2], dv[3], {})
  local n = tonumber(string.match(pre.meta, '^0.(%d+):'))
  if not n or redis.call('GET', d.ck) ~= pre.expect or
     redis.call('HLEN', d.pk) ~= n - 1 or
     redis.call('HEXISTS', d.pk, S) == 1 then
    return nil
  end
  local rid = add_result(S, id, body)
  redis.call('HSET', rec, 'summary', text, 'tokened', '0', 'scored', '1',
             'score', dv[4], 'public_score', dv[5], 'version', dv[6],
             'job', job, 'entry', id, 'result_entry', rid, 'rev',
             string.format('%d', rev + 1))
  redis.call('HSET', d.pk, S, '0' .. text)
  redis.call('SADD', P .. ':index:task:' .. enc(d.t), S)
  redis.call('SADD', P .. ':index:contest:' .. enc(d.c), S)
  redis.call('SADD', P .. ':index:participant:' .. enc(d.u), S)
  redis.call('HSET', d.tk, d.t, pre.score)
  redis.call('SET', d.ck, pre.cache)
  totals(d)
  redis.call('SREM', P .. ':stale', S)
  drop_key(fullv)
  publish_event(d.c, dv[7], pubv)
  return 1, pre.cache
end

-- Stores a dead-lettered scoring job as unscored, from the summary
-- the worker wrote of what the job decoder checked; without one (the
-- decoder refused the job, or no worker decoded it) the dead letter
-- is all.
local function post_dead(job, id, err, text)
  local s = decode(text)
  local S = s and idtext(s.submission)
  if not S or s.scored ~= false then return end
  local rec = P .. ':submission:' .. S
  local h = read_record(rec)
  local old, new = ident(decode(h[1])), ident(s)
  local tokd, bad = token_ok(h, S, new and new.u)
  settle_token(rec, h, S, bad)
  local tok = tokd or s.tokened == true
  write_summary(rec, text, s, tok, err, {'job', job, 'entry', id},
                known(h))
  redis.call('HDEL', rec, 'result_entry')
  redis.call('SREM', P .. ':stale', S)
  place(S, old, new, (tok and '1' or '0') .. text)
  touch(old)
  touch(new)
  flush()
  announce()
end

-- Applies a token, or keeps it until the submission is scored. Returns
-- the cause when the token is to be dead-lettered instead, else nil,
-- whether the summary written is stale and whether the full view was
-- published.
local function post_token(rec, _, id, body, text, fullv)
  local tk = decode(body) or {}
  local S = idtext(tk.submission) or ''
  if rec == '' then rec = P .. ':submission:' .. S end
  local hh = read_record(rec)
  local h = hh[1]
  local st = decode(h)
  local tp = idtext(tk.participant)
  if st and tp and tp ~= idtext(st.participant) then
    return 'token for participant ' .. str(tp) ..
      ', but submission ' .. str(S) .. ' is of participant ' ..
      str(idtext(st.participant) or '')
  end
  local function note(state)
    redis.call('XADD', KEYS[2], '*', 'token', '{"submission":' ..
               str(S) .. ',"id":' .. str(id) .. ',"state":' ..
               str(state) .. '}')
  end
  if hh[2] == '1' then
    -- Used already (or kept already): nothing more to do or show.
    if not st and hh[3] and hh[3] ~= '' and tp and tp ~= hh[3] then
      return 'token for participant ' .. str(tp) .. ', but one for ' ..
        'participant ' .. str(hh[3]) .. ' is already kept for ' ..
        'submission ' .. str(S)
    end
    note('duplicate')
    return nil, false
  end
  if not st and not decode(text) then
    -- Kept until the submission is scored, bounded per participant;
    -- its participant is checked when the submission comes.
    local pk = P .. ':pendingtokens:' .. enc(tp or '')
    if redis.call('SCARD', pk) >= MAX_PENDING_TOKENS then
      return 'participant ' .. str(tp or '') .. ' has ' ..
        MAX_PENDING_TOKENS .. ' tokens kept for submissions not ' ..
        'scored yet: no more are kept'
    end
    redis.call('SADD', pk, S)
    redis.call('HSET', rec, 'tokened', '1', 'token_participant',
               tp or '', 'token_entry', id)
    note('pending')
    return nil, false
  end
  local old = ident(st)
  local s = decode(text)
  -- A summary scored from a job the submission no longer holds is
  -- not written: the stored one stands.
  if s and tk.entry ~= nil and
     tk.entry ~= redis.call('HGET', rec, 'entry') then
    s, fullv = nil, ''
  end
  if s then
    write_summary(rec, text, s, true, 'not scored', {}, known(hh))
    st, h = s, text
  else
    redis.call('HSET', rec, 'tokened', '1')
  end
  local state, new = 'pending', ident(st)
  local stale, used = false, false
  if s and new and is_scored(s) and s.version ~= nil then
    stale = check_version(S, new.t, idtext(s.version) or '')
  end
  if new then
    place(S, old, new, '1' .. h)
    touch(old)
    touch(new)
    local ts = flush()[new.pk]
    if is_scored(st) then
      state = 'applied'
      if fullv == '' then fullv = brief(st, true) end
      publish('token', new, S, true, fullv, ts)
      used = true
    end
    announce()
  end
  redis.call('XADD', KEYS[2], '*', 'token', '{"submission":' ..
             str(S) .. ',"id":' .. str(id) .. ',"state":' ..
             str(state) .. '}')
  return nil, stale, used
end

P = ARGV[3]
local out, caches = {}, {}
local n = tonumber(ARGV[4])
for i = 0, n - 1 do
  local b = 5 + i * 19
  local id, dl, kind, body, rec =
    ARGV[b], ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4]
  local code = owned(id, dl)
  local cache
  if code == 1 then
    local e = redis.call('XRANGE', KEYS[1], id, id)
    local job = ''
    if #e > 0 then job = job_of(e[1][2]) end
    if kind == 'result' and rec ~= '' then
      local pre
      if ARGV[b + 8] ~= '' then
        pre = {expect = ARGV[b + 8], cache = ARGV[b + 9],
               score = ARGV[b + 10], meta = ARGV[b + 11]}
      end
      code = nil
      if pre and ARGV[b + 18] ~= '' then
        code, cache = post_direct(rec, job, id, body, ARGV[b + 5],
                                  ARGV[b + 6], ARGV[b + 7], pre,
                                  {unpack(ARGV, b + 12, b + 18)})
      end
      if not code then
        code, cache = post_result(rec, job, id, body, ARGV[b + 5],
                                  ARGV[b + 6], ARGV[b + 7], pre)
      end
    elseif kind == 'result' then
      add_result(nil, id, body)
    elseif kind == 'token' then
      local err, stale, used = post_token(rec, job, id, body, ARGV[b + 5],
                                          ARGV[b + 7])
      if not used then drop_key(ARGV[b + 7]) end
      if err then dead(job, err, dl, id) elseif stale then code = 2 end
    else
      dead(job, body, dl, id)
      post_dead(job, id, body, ARGV[b + 5])
    end
    if code ~= 3 then
      redis.call('XACK', KEYS[1], ARGV[1], id)
      redis.call('XDEL', KEYS[1], id)
    end
  elseif code < 0 then
    -- Written for a delivery that is no longer this consumer's: no
    -- entry ever names them (an entry gone, 0, may have been posted by
    -- this very delivery, so its keys stay; they expire).
    if kind == 'result' then drop_key(body) end
    drop_key(ARGV[b + 6])
    drop_key(ARGV[b + 7])
  end
  out[#out + 1] = code
  caches[i + 1] = cache or ''
end
for i = 1, n do out[n + i] = caches[i] end
return out
