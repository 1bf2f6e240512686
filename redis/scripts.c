/* The Lua scripts on the jobs stream, and the builders of their calls. */
#include "redis/scripts.h"

#include <stdio.h>
#include <string.h>

/* Every script: KEYS = jobs, results, dead; ARGV[1] = group, ARGV[2] =
 * consumer. The owner and delivery-count check is the same everywhere. */
#define CHECK_OWNER                                                            \
  "local function owned(id, dl)\n"                                             \
  "  local p = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1)\n"          \
  "  if #p == 0 then return 0 end\n"                                           \
  "  if p[1][2] ~= ARGV[2] then return -1 end\n"                               \
  "  if p[1][4] ~= tonumber(dl) then return -2 end\n"                          \
  "  return 1\n"                                                               \
  "end\n"

/* The idle time that marks an entry handed back by a draining daemon:
 * ten years, which no entry reaches by waiting. */
#define RELEASED_IDLE "local RELEASED = 315360000000\n"

/* The job text of entry id, or false if it was deleted. */
#define JOB_OF                                                                 \
  "local function job_of(fields)\n"                                            \
  "  if not fields then return false end\n"                                    \
  "  for j = 1, #fields, 2 do\n"                                               \
  "    if fields[j] == 'job' then return fields[j + 1] end\n"                  \
  "  end\n"                                                                    \
  "  return ''\n"                                                              \
  "end\n"

/* The contest state (docs/contest.md), shared by the post and rescore
 * scripts: the key names, the task score of each score mode as
 * contest/scoremode.c computes it, the rankings, and the JSON the
 * scripts write. Numbers are written by num(), never by cjson.encode,
 * which keeps 14 digits only; worker-rendered views are embedded as they
 * are. Each script sets P, the key prefix, before it calls any of it. */
#define CONTEST_LIB                                                            \
  "-- The contest state library: P is the key prefix, set by each script.\n"   \
  "local P = ''\n"                                                             \
  "-- Tokens kept per participant for submissions not scored yet.\n"           \
  "local MAX_PENDING_TOKENS = 100\n"                                           \
  "\n"                                                                         \
  "-- enc(x) of docs/contest.md: '%' -> %25, ':' -> %3A.\n"                    \
  "local function enc(x)\n"                                                    \
  "  if not string.find(x, '[%%:]') then return x end\n"                       \
  "  return (string.gsub(string.gsub(x, '%%', '%%25'), ':', '%%3A'))\n"        \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- a < b in byte order (Lua's < follows the server's locale).\n"            \
  "local function bless(a, b)\n"                                               \
  "  if a == b then return false end\n"                                        \
  "  local n, i = math.min(#a, #b), 1\n"                                       \
  "  while i <= n and string.byte(a, i) == string.byte(b, i) do\n"             \
  "    i = i + 1\n"                                                            \
  "  end\n"                                                                    \
  "  if i > n then return #a < #b end\n"                                       \
  "  return string.byte(a, i) < string.byte(b, i)\n"                           \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- nearbyint: to the nearest integer, ties to even.\n"                      \
  "local function rint(m)\n"                                                   \
  "  local f = math.floor(m)\n"                                                \
  "  local d = m - f\n"                                                        \
  "  if d > 0.5 then return f + 1 end\n"                                       \
  "  if d < 0.5 or f % 2 == 0 then return f end\n"                             \
  "  return f + 1\n"                                                           \
  "end\n"                                                                      \
  "\n"                                                                         \
  "local P10 = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}\n"             \
  "\n"                                                                         \
  "-- The shortest text that reads back as v, as tally_json_num writes it\n"   \
  "-- (config/jsonw.c). cjson.encode would keep only 14 digits.\n"             \
  "local function num(v)\n"                                                    \
  "  if type(v) ~= 'number' or v ~= v or v == math.huge or\n"                  \
  "     v == -math.huge then\n"                                                \
  "    return 'null'\n"                                                        \
  "  end\n"                                                                    \
  "  if v == 0 then\n"                                                         \
  "    if 1 / v < 0 then return '-0.0' end\n"                                  \
  "    return '0'\n"                                                           \
  "  end\n"                                                                    \
  "  for k = 0, 9 do\n"                                                        \
  "    local m = v * P10[k + 1]\n"                                             \
  "    if math.abs(m) >= 9007199254740992 then break end\n"                    \
  "    local r = rint(m)\n"                                                    \
  "    if r / P10[k + 1] == v then\n"                                          \
  "      local d = string.format('%.0f', math.abs(r))\n"                       \
  "      if k > 0 then\n"                                                      \
  "        if #d <= k then d = string.rep('0', k + 1 - #d) .. d end\n"         \
  "        d = string.sub(d, 1, #d - k) .. '.' .. string.sub(d, #d - k + 1)\n" \
  "      end\n"                                                                \
  "      if r < 0 then d = '-' .. d end\n"                                     \
  "      return d\n"                                                           \
  "    end\n"                                                                  \
  "  end\n"                                                                    \
  "  local s\n"                                                                \
  "  for prec = 15, 17 do\n"                                                   \
  "    s = string.format('%.' .. prec .. 'g', v)\n"                            \
  "    if tonumber(s) == v then break end\n"                                   \
  "  end\n"                                                                    \
  "  return s\n"                                                               \
  "end\n"                                                                      \
  "\n"                                                                         \
  "local function str(s) return cjson.encode(s) end\n"                         \
  "local function bool(b) if b then return 'true' end return 'false' end\n"    \
  "\n"                                                                         \
  "-- The decoded object of a JSON text, or nil.\n"                            \
  "local function decode(s)\n"                                                 \
  "  if not s or s == '' then return nil end\n"                                \
  "  local ok, v = pcall(cjson.decode, s)\n"                                   \
  "  if ok and type(v) == 'table' then return v end\n"                         \
  "  return nil\n"                                                             \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- An id as text: a string as is, a number as num writes it.\n"             \
  "local function idtext(v)\n"                                                 \
  "  if type(v) == 'string' then return v end\n"                               \
  "  if type(v) == 'number' then return num(v) end\n"                          \
  "  return nil\n"                                                             \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- Where a summary counts: {c = contest, u = participant, t = task},\n"     \
  "-- with its pt key pk and task scores key tk.\n"                            \
  "local function ident(s)\n"                                                  \
  "  if not s then return nil end\n"                                           \
  "  local u, t = idtext(s.participant), idtext(s.task)\n"                     \
  "  if not u or not t then return nil end\n"                                  \
  "  local c = idtext(s.contest) or 'default'\n"                               \
  "  local cu = enc(c) .. ':' .. enc(u)\n"                                     \
  "  return {c = c, u = u, t = t, pk = P .. ':pt:' .. cu .. ':' .. enc(t),\n"  \
  "          tk = P .. ':taskscores:' .. cu}\n"                                \
  "end\n"                                                                      \
  "\n"                                                                         \
  "local function same(a, b)\n"                                                \
  "  return a ~= nil and b ~= nil and a.c == b.c and a.u == b.u and\n"         \
  "         a.t == b.t\n"                                                      \
  "end\n"                                                                      \
  "\n"                                                                         \
  "local function is_scored(s)\n"                                              \
  "  return s.scored ~= false and type(s.score) == 'number' and\n"             \
  "         type(s.public_score) == 'number'\n"                                \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- tally_round: the C library's \"%.*f\" then strtod, as in result.c.\n"    \
  "local function round(x, n)\n"                                               \
  "  n = math.floor(n)\n"                                                      \
  "  if x ~= x or x == math.huge or x == -math.huge or n < 0 or n > 10 then\n" \
  "    return x\n"                                                             \
  "  end\n"                                                                    \
  "  return tonumber(string.format('%.' .. n .. 'f', x))\n"                    \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- Whether (ts, id) comes after (bts, bid): by timestamp, ties by\n"        \
  "-- submission id in byte order.\n"                                          \
  "local function later(ts, id, bts, bid)\n"                                   \
  "  return ts > bts or (ts == bts and bless(bid, id))\n"                      \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- The members of a summary that a task score reads, in the order the\n"    \
  "-- worker writes them (docs/contest.md), from timestamp on; a summary\n"    \
  "-- in another order is decoded instead.\n"                                  \
  "local SCORED = '^\"timestamp\":([^,]*),\"official\":(%a+),' ..\n"           \
  "  '\"tokened\":%a+,\"version\":\"[^\"]*\",' ..\n"                           \
  "  '\"score_mode\":\"([%w_]*)\",' ..\n"                                      \
  "  '\"score_precision\":([^,]*),\"score_rounding\":\"(%a*)\",' ..\n"         \
  "  '\"score\":([^,]*),\"public_score\":([^,]*),\"max_score\":[^,]*,' ..\n"   \
  "  '\"max_public_score\":[^,]*,\"compiled\":(%a+),()'\n"                     \
  "local UNSCORED = '^\"timestamp\":([^,]*),\"official\":(%a+),' ..\n"         \
  "  '\"tokened\":%a+,\"scored\":false}$'\n"                                   \
  "local SUBTASKS = '^\"subtasks\":(.-),\"public_subtasks\":(.-)}$'\n"         \
  "\n"                                                                         \
  "-- A number list from a JSON array of numbers (null counts 0), or nil\n"    \
  "-- when the text is not a non-empty array.\n"                               \
  "local function numbers(a)\n"                                                \
  "  if type(a) == 'string' then\n"                                            \
  "    if string.sub(a, 1, 1) ~= '[' then return nil end\n"                    \
  "    local out = {}\n"                                                       \
  "    for v in string.gmatch(a, '[^,%[%]%s]+') do\n"                          \
  "      out[#out + 1] = tonumber(v) or 0\n"                                   \
  "    end\n"                                                                  \
  "    if #out == 0 then return nil end\n"                                     \
  "    return out\n"                                                           \
  "  end\n"                                                                    \
  "  if type(a) ~= 'table' or #a == 0 then return nil end\n"                   \
  "  local out = {}\n"                                                         \
  "  for k = 1, #a do\n"                                                       \
  "    out[k] = type(a[k]) == 'number' and a[k] or 0\n"                        \
  "  end\n"                                                                    \
  "  return out\n"                                                             \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- What a task score needs of one pt value v of submission id: {id, ts,\n"  \
  "-- off, ok (scored), tok, sc, ps, cmp (compiled), mode, prec, rnd}, and\n"  \
  "-- where its subtasks are, read when asked for (subtasks_of). Each table\n" \
  "-- is made by one constructor, which sizes it once.\n"                      \
  "local function entry(id, v)\n"                                              \
  "  local tok = string.byte(v, 1) == 49\n"                                    \
  "  local i = string.find(v, '\"timestamp\":', 1, true)\n"                    \
  "  if i then\n"                                                              \
  "    local ts, off, mode, prec, rnd, sc, ps, cmp, at =\n"                    \
  "      string.match(v, SCORED, i)\n"                                         \
  "    ts, sc, ps = tonumber(ts), tonumber(sc), tonumber(ps)\n"                \
  "    if ts and sc and ps then\n"                                             \
  "      return {id = id, ts = ts, off = off ~= 'false', ok = true,\n"         \
  "              tok = tok, sc = sc, ps = ps, cmp = cmp ~= 'false',\n"         \
  "              mode = mode, prec = tonumber(prec) or 0, rnd = rnd, v = v,\n" \
  "              at = at}\n"                                                   \
  "    end\n"                                                                  \
  "    ts, off = string.match(v, UNSCORED, i)\n"                               \
  "    ts = tonumber(ts)\n"                                                    \
  "    if ts then\n"                                                           \
  "      return {id = id, ts = ts, off = off ~= 'false', ok = false,\n"        \
  "              tok = tok}\n"                                                 \
  "    end\n"                                                                  \
  "  end\n"                                                                    \
  "  local s = decode(string.sub(v, 2))\n"                                     \
  "  if not s then return nil end\n"                                           \
  "  local ts = s.timestamp\n"                                                 \
  "  if type(ts) ~= 'number' then ts = 0 end\n"                                \
  "  return {id = id, ts = ts, off = s.official ~= false,\n"                   \
  "          ok = is_scored(s), tok = tok, sc = s.score,\n"                    \
  "          ps = s.public_score, cmp = s.compiled ~= false,\n"                \
  "          mode = s.score_mode, prec = tonumber(s.score_precision) or 0,\n"  \
  "          rnd = s.score_rounding, s = s}\n"                                 \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- The subtask scores of e's full side (or public side when pub), or nil\n" \
  "-- when the side is one subtask.\n"                                         \
  "local function subtasks_of(e, pub)\n"                                       \
  "  if e.s then\n"                                                            \
  "    if pub then return numbers(e.s.public_subtasks) end\n"                  \
  "    return numbers(e.s.subtasks)\n"                                         \
  "  end\n"                                                                    \
  "  local a, b = string.match(e.v, SUBTASKS, e.at)\n"                         \
  "  if pub then return numbers(b) end\n"                                      \
  "  return numbers(a)\n"                                                      \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- The aggregate of one side of tally_task_score over subs (official\n"     \
  "-- ones), with last the last of them; pub picks the side. What finish\n"    \
  "-- makes the side's score of, and what a new submission can be merged\n"    \
  "-- into (merge): under max {best}; under max_tokened_last {best tokened,\n" \
  "-- last's score}; under max_subtask {best of the results that are one\n"    \
  "-- subtask, n, best of subtask 1, .., best of subtask n}.\n"                \
  "local function aggregate(mode, subs, last, pub)\n"                          \
  "  local sk = pub and 'ps' or 'sc'\n"                                        \
  "  if mode == 'max' then\n"                                                  \
  "    local best = 0.0\n"                                                     \
  "    for _, e in ipairs(subs) do\n"                                          \
  "      if e.ok and e[sk] > best then best = e[sk] end\n"                     \
  "    end\n"                                                                  \
  "    return {best}\n"                                                        \
  "  end\n"                                                                    \
  "  if mode == 'max_tokened_last' then\n"                                     \
  "    local ls, bt = 0.0, 0.0\n"                                              \
  "    if last.ok then ls = last[sk] end\n"                                    \
  "    for _, e in ipairs(subs) do\n"                                          \
  "      if e.ok and e.tok and e[sk] > bt then bt = e[sk] end\n"               \
  "    end\n"                                                                  \
  "    return {bt, ls}\n"                                                      \
  "  end\n"                                                                    \
  "  -- max_subtask: each subtask's best, in index order, and the best of\n"   \
  "  -- the results that are one subtask; a compilation failure adds\n"        \
  "  -- nothing.\n"                                                            \
  "  local nsub, whole, arrs = 0, 0.0, {}\n"                                   \
  "  for _, e in ipairs(subs) do\n"                                            \
  "    if e.ok and e.cmp then\n"                                               \
  "      local a = subtasks_of(e, pub)\n"                                      \
  "      if a then\n"                                                          \
  "        arrs[#arrs + 1] = a\n"                                              \
  "        if #a > nsub then nsub = #a end\n"                                  \
  "      elseif e[sk] > whole then\n"                                          \
  "        whole = e[sk]\n"                                                    \
  "      end\n"                                                                \
  "    end\n"                                                                  \
  "  end\n"                                                                    \
  "  local agg = {whole, nsub}\n"                                              \
  "  for k = 1, nsub do\n"                                                     \
  "    local best = 0.0\n"                                                     \
  "    for _, a in ipairs(arrs) do\n"                                          \
  "      local v = a[k]\n"                                                     \
  "      if v and v > best then best = v end\n"                                \
  "    end\n"                                                                  \
  "    agg[2 + k] = best\n"                                                    \
  "  end\n"                                                                    \
  "  return agg\n"                                                             \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- One side's score from its aggregate, as tally_task_score sums it.\n"     \
  "local function finish(mode, a)\n"                                           \
  "  if mode == 'max' then return a[1] end\n"                                  \
  "  if mode == 'max_tokened_last' then\n"                                     \
  "    if a[1] > a[2] then return a[1] end\n"                                  \
  "    return a[2]\n"                                                          \
  "  end\n"                                                                    \
  "  local total = 0.0\n"                                                      \
  "  for k = 1, a[2] do total = total + a[2 + k] end\n"                        \
  "  return total + a[1]\n"                                                    \
  "end\n"                                                                      \
  "\n"                                                                         \
  "local function fin(x)\n"                                                    \
  "  return type(x) == 'number' and x == x and x ~= math.huge and\n"           \
  "         x ~= -math.huge\n"                                                 \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- Merges entry e (scored and official) into a, one side's aggregate\n"     \
  "-- under mode (pub picks the side); is_last says that e becomes the last\n" \
  "-- submission. Returns false when a subtask score of e is not finite.\n"    \
  "local function merge(mode, a, e, pub, is_last)\n"                           \
  "  local v = pub and e.ps or e.sc\n"                                         \
  "  if mode == 'max' then\n"                                                  \
  "    if v > a[1] then a[1] = v end\n"                                        \
  "    return true\n"                                                          \
  "  end\n"                                                                    \
  "  if mode == 'max_tokened_last' then\n"                                     \
  "    if e.tok and v > a[1] then a[1] = v end\n"                              \
  "    if is_last then a[2] = v end\n"                                         \
  "    return true\n"                                                          \
  "  end\n"                                                                    \
  "  if not e.cmp then return true end\n"                                      \
  "  local arr = subtasks_of(e, pub)\n"                                        \
  "  if not arr then\n"                                                        \
  "    if v > a[1] then a[1] = v end\n"                                        \
  "    return true\n"                                                          \
  "  end\n"                                                                    \
  "  local n = a[2]\n"                                                         \
  "  for k = 1, #arr do\n"                                                     \
  "    local x = arr[k]\n"                                                     \
  "    if not fin(x) then return false end\n"                                  \
  "    local best = 0.0\n"                                                     \
  "    if k <= n then best = a[2 + k] end\n"                                   \
  "    if x > best then best = x end\n"                                        \
  "    a[2 + k] = best\n"                                                      \
  "  end\n"                                                                    \
  "  if #arr > n then a[2] = #arr end\n"                                       \
  "  return true\n"                                                            \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- The task score over a pt hash read by HGETALL (submission id, then\n"    \
  "-- '1' or '0' for tokened followed by its summary): {score,\n"              \
  "-- public_score, partial, submissions}. The mode, precision and rounding\n" \
  "-- are those of the newest scored summary (by timestamp, then id).\n"       \
  "-- Second, what the place's cache keeps: {n (fields), subs (official\n"     \
  "-- ones), unsc (official ones not scored), par (the newest scored\n"        \
  "-- entry), last, aggs (both sides' aggregates under par's mode)}.\n"        \
  "local function compute(flat)\n"                                             \
  "  local subs, last, par, unsc = {}, nil, nil, 0\n"                          \
  "  local out = {score = 0, public_score = 0, partial = false}\n"             \
  "  for j = 1, #flat, 2 do\n"                                                 \
  "    local e = entry(flat[j], flat[j + 1])\n"                                \
  "    if e then\n"                                                            \
  "      if e.ok and (not par or later(e.ts, e.id, par.ts, par.id)) then\n"    \
  "        par = e\n"                                                          \
  "      end\n"                                                                \
  "      if e.off then\n"                                                      \
  "        subs[#subs + 1] = e\n"                                              \
  "        if not e.ok then\n"                                                 \
  "          out.partial = true\n"                                             \
  "          unsc = unsc + 1\n"                                                \
  "        end\n"                                                              \
  "        if not last or later(e.ts, e.id, last.ts, last.id) then\n"          \
  "          last = e\n"                                                       \
  "        end\n"                                                              \
  "      end\n"                                                                \
  "    end\n"                                                                  \
  "  end\n"                                                                    \
  "  out.submissions = #subs\n"                                                \
  "  local st = {n = #flat / 2, subs = #subs, unsc = unsc, par = par,\n"       \
  "              last = last, aggs = {}}\n"                                    \
  "  if #subs == 0 then return out, st end\n"                                  \
  "  par = par or {prec = 0}\n"                                                \
  "  for i, pub in ipairs({false, true}) do\n"                                 \
  "    st.aggs[i] = aggregate(par.mode, subs, last, pub)\n"                    \
  "    local v = finish(par.mode, st.aggs[i])\n"                               \
  "    if par.rnd ~= 'none' then v = round(v, par.prec) end\n"                 \
  "    if pub then out.public_score = v else out.score = v end\n"              \
  "  end\n"                                                                    \
  "  return out, st\n"                                                         \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- The place cache (<p>:ptagg:...): st of compute as text, or nil when "    \
  "it\n"                                                                       \
  "-- cannot be kept (no official or no scored submission, a mode or\n"        \
  "-- rounding of another name, a number that is not finite). "                \
  "Space-separated\n"                                                          \
  "-- '1', n, subs, unsc, mode, precision, rounding, par's and last's\n"       \
  "-- timestamps, the lengths of their ids, then the aggregates of the full\n" \
  "-- and the public side; after a newline, par's id then last's id.\n"        \
  "local MODES = {max = true, max_subtask = true, max_tokened_last = true}\n"  \
  "\n"                                                                         \
  "local function g17(x) return string.format('%.17g', x) end\n"               \
  "\n"                                                                         \
  "local function cache_text(st)\n"                                            \
  "  local par, last = st.par, st.last\n"                                      \
  "  if not par or not last or not MODES[par.mode] or\n"                       \
  "     type(par.rnd) ~= 'string' or not string.find(par.rnd, '^[%w_]+$') "    \
  "or\n"                                                                       \
  "     not fin(par.prec) or not fin(par.ts) or not fin(last.ts) then\n"       \
  "    return nil\n"                                                           \
  "  end\n"                                                                    \
  "  local w = {'1', string.format('%d', st.n), string.format('%d', "          \
  "st.subs),\n"                                                                \
  "             string.format('%d', st.unsc), par.mode, g17(par.prec), "       \
  "par.rnd,\n"                                                                 \
  "             g17(par.ts), g17(last.ts), #par.id, #last.id}\n"               \
  "  for _, a in ipairs(st.aggs) do\n"                                         \
  "    for k = 1, #a do\n"                                                     \
  "      if not fin(a[k]) then return nil end\n"                               \
  "      w[#w + 1] = g17(a[k])\n"                                              \
  "    end\n"                                                                  \
  "  end\n"                                                                    \
  "  return table.concat(w, ' ') .. '\\n' .. par.id .. last.id\n"              \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- The st that cache text c was made of (par and last with ts and id,\n"    \
  "-- par with mode, prec and rnd), or nil when c is not such a text.\n"       \
  "local function load_cache(c)\n"                                             \
  "  local nl = string.find(c, '\\n', 1, true)\n"                              \
  "  if not nl then return nil end\n"                                          \
  "  local w = {}\n"                                                           \
  "  for x in string.gmatch(string.sub(c, 1, nl - 1), '%S+') do\n"             \
  "    w[#w + 1] = x\n"                                                        \
  "  end\n"                                                                    \
  "  if w[1] ~= '1' or not MODES[w[5]] then return nil end\n"                  \
  "  local n, subs, unsc = tonumber(w[2]), tonumber(w[3]), tonumber(w[4])\n"   \
  "  local prec, pts, lts = tonumber(w[6]), tonumber(w[8]), tonumber(w[9])\n"  \
  "  local lp, ll = tonumber(w[10]), tonumber(w[11])\n"                        \
  "  if not (n and subs and unsc and prec and pts and lts and lp and ll) or\n" \
  "     #c ~= nl + lp + ll then\n"                                             \
  "    return nil\n"                                                           \
  "  end\n"                                                                    \
  "  local st = {n = n, subs = subs, unsc = unsc, aggs = {},\n"                \
  "              par = {ts = pts, id = string.sub(c, nl + 1, nl + lp),\n"      \
  "                     mode = w[5], prec = prec, rnd = w[7]},\n"              \
  "              last = {ts = lts, id = string.sub(c, nl + lp + 1)}}\n"        \
  "  local i = 12\n"                                                           \
  "  for side = 1, 2 do\n"                                                     \
  "    local len = 1\n"                                                        \
  "    if w[5] == 'max_tokened_last' then\n"                                   \
  "      len = 2\n"                                                            \
  "    elseif w[5] == 'max_subtask' then\n"                                    \
  "      local nsub = tonumber(w[i + 1])\n"                                    \
  "      if not nsub or nsub < 0 or nsub ~= math.floor(nsub) then\n"           \
  "        return nil\n"                                                       \
  "      end\n"                                                                \
  "      len = 2 + nsub\n"                                                     \
  "    end\n"                                                                  \
  "    local a = {}\n"                                                         \
  "    for k = 1, len do\n"                                                    \
  "      a[k] = tonumber(w[i])\n"                                              \
  "      if not a[k] then return nil end\n"                                    \
  "      i = i + 1\n"                                                          \
  "    end\n"                                                                  \
  "    st.aggs[side] = a\n"                                                    \
  "  end\n"                                                                    \
  "  if i ~= #w + 1 then return nil end\n"                                     \
  "  return st\n"                                                              \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- The JSON of task score ts, as <p>:taskscores holds it.\n"                \
  "local function score_json(ts)\n"                                            \
  "  return '{\"score\":' .. num(ts.score) .. ',\"public_score\":' ..\n"       \
  "    num(ts.public_score) .. ',\"partial\":' .. bool(ts.partial) ..\n"       \
  "    ',\"submissions\":' .. ts.submissions .. '}'\n"                         \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- Stores task score ts of d, and the place cache (nil: none).\n"           \
  "local function store(d, ck, ts, cache)\n"                                   \
  "  redis.call('HSET', d.tk, d.t, score_json(ts))\n"                          \
  "  if cache then\n"                                                          \
  "    redis.call('SET', ck, cache)\n"                                         \
  "  else\n"                                                                   \
  "    redis.call('DEL', ck)\n"                                                \
  "  end\n"                                                                    \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- The fast path of a task score: d's pt hash got one new field, S = v\n"   \
  "-- (a field it did not have), and nothing else changed. When v is a\n"      \
  "-- scored summary and the place cache ck fits (its field count, and the\n"  \
  "-- mode, precision and rounding of the newest scored summary, which v\n"    \
  "-- may become), v is merged into the cached aggregates and the task\n"      \
  "-- score stored as compute would make it. Returns it, or nil, having\n"     \
  "-- written nothing, when the place is to be recomputed.\n"                  \
  "local function add_score(d, ck, S, v)\n"                                    \
  "  local c = redis.call('GET', ck)\n"                                        \
  "  if not c then return nil end\n"                                           \
  "  local st = load_cache(c)\n"                                               \
  "  local e = st and entry(S, v)\n"                                           \
  "  if not e or not e.ok or not fin(e.ts) or not fin(e.sc) or\n"              \
  "     not fin(e.ps) then\n"                                                  \
  "    return nil\n"                                                           \
  "  end\n"                                                                    \
  "  local par, last = st.par, st.last\n"                                      \
  "  if later(e.ts, e.id, par.ts, par.id) then\n"                              \
  "    if e.mode ~= par.mode or e.prec ~= par.prec or e.rnd ~= par.rnd then\n" \
  "      return nil\n"                                                         \
  "    end\n"                                                                  \
  "    par.ts, par.id = e.ts, e.id\n"                                          \
  "  end\n"                                                                    \
  "  if e.off then\n"                                                          \
  "    local is_last = later(e.ts, e.id, last.ts, last.id)\n"                  \
  "    for i, pub in ipairs({false, true}) do\n"                               \
  "      if not merge(par.mode, st.aggs[i], e, pub, is_last) then\n"           \
  "        return nil\n"                                                       \
  "      end\n"                                                                \
  "    end\n"                                                                  \
  "    if is_last then last.ts, last.id = e.ts, e.id end\n"                    \
  "    st.subs = st.subs + 1\n"                                                \
  "  end\n"                                                                    \
  "  if redis.call('HLEN', d.pk) ~= st.n + 1 then return nil end\n"            \
  "  st.n = st.n + 1\n"                                                        \
  "  local out = {partial = st.unsc > 0, submissions = st.subs}\n"             \
  "  for i, pub in ipairs({false, true}) do\n"                                 \
  "    local x = finish(par.mode, st.aggs[i])\n"                               \
  "    if par.rnd ~= 'none' then x = round(x, par.prec) end\n"                 \
  "    if pub then out.public_score = x else out.score = x end\n"              \
  "  end\n"                                                                    \
  "  store(d, ck, out, cache_text(st))\n"                                      \
  "  return out\n"                                                             \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- Stores the task score of d, by the fast path when d was touched with\n"  \
  "-- its one new field, else recomputed from the whole place; nil when d\n"   \
  "-- has no submissions left.\n"                                              \
  "local function task_score(d)\n"                                             \
  "  local ck = P .. ':ptagg:' .. string.sub(d.pk, #P + 5)\n"                  \
  "  if d.add then\n"                                                          \
  "    local ts = add_score(d, ck, d.add, d.addv)\n"                           \
  "    if ts then return ts end\n"                                             \
  "  end\n"                                                                    \
  "  local flat = redis.call('HGETALL', d.pk)\n"                               \
  "  if #flat == 0 then\n"                                                     \
  "    redis.call('HDEL', d.tk, d.t)\n"                                        \
  "    redis.call('DEL', ck)\n"                                                \
  "    return nil\n"                                                           \
  "  end\n"                                                                    \
  "  local ts, st = compute(flat)\n"                                           \
  "  store(d, ck, ts, cache_text(st))\n"                                       \
  "  return ts\n"                                                              \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- Sums d's participant's task scores in task name byte order into both\n"  \
  "-- rankings.\n"                                                             \
  "local function totals(d)\n"                                                 \
  "  local flat = redis.call('HGETALL', d.tk)\n"                               \
  "  local rk = P .. ':ranking:' .. enc(d.c)\n"                                \
  "  if #flat == 0 then\n"                                                     \
  "    redis.call('ZREM', rk, d.u)\n"                                          \
  "    redis.call('ZREM', rk .. ':public', d.u)\n"                             \
  "    return\n"                                                               \
  "  end\n"                                                                    \
  "  local order = {}\n"                                                       \
  "  for j = 1, #flat, 2 do order[#order + 1] = j end\n"                       \
  "  table.sort(order, function(a, b) return bless(flat[a], flat[b]) end)\n"   \
  "  local s, ps = 0.0, 0.0\n"                                                 \
  "  for _, j in ipairs(order) do\n"                                           \
  "    local a, b = string.match(flat[j + 1],\n"                               \
  "      '^{\"score\":([^,]*),\"public_score\":([^,]*),')\n"                   \
  "    s = s + (tonumber(a) or 0)\n"                                           \
  "    ps = ps + (tonumber(b) or 0)\n"                                         \
  "  end\n"                                                                    \
  "  redis.call('ZADD', rk, num(s), d.u)\n"                                    \
  "  redis.call('ZADD', rk .. ':public', num(ps), d.u)\n"                      \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- The places whose task scores are to be recomputed, each once.\n"         \
  "local dirty, dirty_list = {}, {}\n"                                         \
  "\n"                                                                         \
  "-- Marks place d (nil: none) to be recomputed. S and v, when given, say\n"  \
  "-- that the one change to d's pt hash is its new field S = v, which the\n"  \
  "-- fast path may merge into the place cache; a place touched twice is\n"    \
  "-- recomputed.\n"                                                           \
  "local function touch(d, S, v)\n"                                            \
  "  if not d then return end\n"                                               \
  "  if dirty[d.pk] then\n"                                                    \
  "    dirty[d.pk].add = nil\n"                                                \
  "    return\n"                                                               \
  "  end\n"                                                                    \
  "  d.add, d.addv = S, v\n"                                                   \
  "  dirty[d.pk] = d\n"                                                        \
  "  dirty_list[#dirty_list + 1] = d\n"                                        \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- Recomputes the touched places, then each participant's totals once.\n"   \
  "-- Returns the new task scores by pt key.\n"                                \
  "local function flush()\n"                                                   \
  "  local res, seen = {}, {}\n"                                               \
  "  for _, d in ipairs(dirty_list) do res[d.pk] = task_score(d) end\n"        \
  "  for _, d in ipairs(dirty_list) do\n"                                      \
  "    if not seen[d.tk] then\n"                                               \
  "      seen[d.tk] = true\n"                                                  \
  "      totals(d)\n"                                                          \
  "    end\n"                                                                  \
  "  end\n"                                                                    \
  "  dirty, dirty_list = {}, {}\n"                                             \
  "  return res\n"                                                             \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- Moves submission S's pt value from old to new (either may be nil),\n"    \
  "-- keeping the index sets. Returns 1 when new's pt hash had no field S\n"   \
  "-- before, else 0.\n"                                                       \
  "local function place(S, old, new, value)\n"                                 \
  "  if old and not same(old, new) then\n"                                     \
  "    redis.call('HDEL', old.pk, S)\n"                                        \
  "    for k, name in pairs({c = 'contest', u = 'participant',\n"              \
  "                          t = 'task'}) do\n"                                \
  "      if not new or new[k] ~= old[k] then\n"                                \
  "        redis.call('SREM', P .. ':index:' .. name .. ':' .. enc(old[k]),\n" \
  "                   S)\n"                                                    \
  "      end\n"                                                                \
  "    end\n"                                                                  \
  "  end\n"                                                                    \
  "  if not new then return 0 end\n"                                           \
  "  local added = redis.call('HSET', new.pk, S, value)\n"                     \
  "  if same(old, new) then return added end\n"                                \
  "  redis.call('SADD', P .. ':index:task:' .. enc(new.t), S)\n"               \
  "  redis.call('SADD', P .. ':index:contest:' .. enc(new.c), S)\n"            \
  "  redis.call('SADD', P .. ':index:participant:' .. enc(new.u), S)\n"        \
  "  redis.call('SADD', P .. ':contests', new.c)\n"                            \
  "  redis.call('SADD', P .. ':contest:' .. enc(new.c) .. ':tasks', new.t)\n"  \
  "  return added\n"                                                           \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- Writes summary text (s decoded) to the submission hash rec, with the\n"  \
  "-- fields of extra (a flat list), and counts one more revision. An\n"       \
  "-- unscored summary is stored with err.\n"                                  \
  "local function write_summary(rec, text, s, tok, err, extra)\n"              \
  "  local a = {'HSET', rec, 'summary', text, 'tokened',\n"                    \
  "             tok and '1' or '0'}\n"                                         \
  "  local del\n"                                                              \
  "  if is_scored(s) then\n"                                                   \
  "    for _, x in ipairs({'scored', '1', 'score', num(s.score),\n"            \
  "                        'public_score', num(s.public_score),\n"             \
  "                        'version', idtext(s.version) or ''}) do\n"          \
  "      a[#a + 1] = x\n"                                                      \
  "    end\n"                                                                  \
  "    del = {'HDEL', rec, 'error'}\n"                                         \
  "  else\n"                                                                   \
  "    for _, x in ipairs({'scored', '0', 'error', err}) do\n"                 \
  "      a[#a + 1] = x\n"                                                      \
  "    end\n"                                                                  \
  "    del = {'HDEL', rec, 'score', 'public_score', 'version'}\n"              \
  "  end\n"                                                                    \
  "  for _, x in ipairs(extra) do a[#a + 1] = x end\n"                         \
  "  redis.call(unpack(a))\n"                                                  \
  "  redis.call(unpack(del))\n"                                                \
  "  redis.call('HINCRBY', rec, 'rev', 1)\n"                                   \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- Marks S stale unless v is task t's current version (which it becomes\n"  \
  "-- when t has none). Returns true when stale.\n"                            \
  "local function check_version(S, t, v)\n"                                    \
  "  local cur = redis.call('HGET', P .. ':taskversions', t)\n"                \
  "  if not cur then\n"                                                        \
  "    redis.call('HSETNX', P .. ':taskversions', t, v)\n"                     \
  "    cur = v\n"                                                              \
  "  end\n"                                                                    \
  "  if cur ~= v then\n"                                                       \
  "    redis.call('SADD', P .. ':stale', S)\n"                                 \
  "    return true\n"                                                          \
  "  end\n"                                                                    \
  "  redis.call('SREM', P .. ':stale', S)\n"                                   \
  "  return false\n"                                                           \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- The view {score, max_score} of a summary: full when tokened, public\n"   \
  "-- otherwise; nulls when it is not scored.\n"                               \
  "local function brief(s, tok)\n"                                             \
  "  if not s or not is_scored(s) then\n"                                      \
  "    return '{\"score\":null,\"max_score\":null}'\n"                         \
  "  end\n"                                                                    \
  "  if tok then\n"                                                            \
  "    return '{\"score\":' .. num(s.score) .. ',\"max_score\":' ..\n"         \
  "      num(s.max_score) .. '}'\n"                                            \
  "  end\n"                                                                    \
  "  return '{\"score\":' .. num(s.public_score) .. ',\"max_score\":' ..\n"    \
  "    num(s.max_public_score) .. '}'\n"                                       \
  "end\n"                                                                      \
  "\n"                                                                         \
  "-- Writes a contestant event on <p>:public and publishes it. ts is the\n"   \
  "-- new task score of d (nil when none): only its public side is shown.\n"   \
  "local function publish(typ, d, S, tok, view, ts)\n"                         \
  "  local ev = '{\"type\":' .. str(typ) .. ',\"contest\":' .. str(d.c) ..\n"  \
  "    ',\"participant\":' .. str(d.u) .. ',\"task\":' .. str(d.t) ..\n"       \
  "    ',\"submission\":' .. str(S) .. ',\"tokened\":' .. bool(tok) ..\n"      \
  "    ',\"view\":' .. view .. ',\"task_score\":{\"score\":' ..\n"             \
  "    num(ts and ts.public_score or 0) .. ',\"partial\":' ..\n"               \
  "    bool(ts and ts.partial) .. '}}'\n"                                      \
  "  redis.call('XADD', P .. ':public', '*', 'event', ev)\n"                   \
  "  redis.call('PUBLISH', P .. ':events:' .. d.c, ev)\n"                      \
  "end\n"

/* ARGV[3] = prefix, ARGV[4] = n, then n x (id, deliveries, kind, body,
 * record, summary, public view, full view, where a full view of "-" is
 * one withheld: TALLY_POST_NEED_FULL). The job is deleted once
 * acknowledged, so the jobs stream never needs a MAXLEN trim (which on
 * Redis 7.0 deletes pending entries too). */
static const char post_script[] = CHECK_OWNER JOB_OF CONTEST_LIB
    "local function dead(job, err, dl, id)\n"
    "  redis.call('XADD', KEYS[3], '*', 'job', job, 'error', err,\n"
    "             'deliveries', dl, 'id', id)\n"
    "end\n"
    "\n"
    "-- Adds a result, stores its summary and updates the contest state.\n"
    "-- Returns the item's code; 3, having written nothing, when the\n"
    "-- submission is tokened and the full view was withheld ('-').\n"
    "-- The fields of submission hash rec that a post reads.\n"
    "local function read_record(rec)\n"
    "  return redis.call('HMGET', rec, 'summary', 'tokened',\n"
    "                    'token_participant', 'token_entry')\n"
    "end\n"
    "\n"
    "-- Whether record h (read_record) holds a token that may be applied\n"
    "-- to a submission of participant u: a token kept while the submission\n"
    "-- was not scored (no summary) names its participant, checked now.\n"
    "-- Returns that, and the cause when the kept token is refused.\n"
    "local function token_ok(h, S, u)\n"
    "  if h[2] ~= '1' then return false end\n"
    "  if h[1] or not h[3] or h[3] == '' or h[3] == u then return true end\n"
    "  return false, 'token for participant ' .. str(h[3]) ..\n"
    "    ', but submission ' .. str(S) .. ' is of participant ' .. str(u)\n"
    "end\n"
    "\n"
    "-- Settles a token kept until submission S came: it leaves the pending\n"
    "-- set of its participant; refused (bad), it is dead-lettered and the\n"
    "-- submission is not tokened.\n"
    "local function settle_token(rec, h, S, bad)\n"
    "  if h[2] ~= '1' or h[1] then return end\n"
    "  redis.call('SREM', P .. ':pendingtokens:' .. enc(h[3] or ''), S)\n"
    "  redis.call('HDEL', rec, 'token_participant', 'token_entry')\n"
    "  if bad then\n"
    "    redis.call('HSET', rec, 'tokened', '0')\n"
    "    redis.call('XADD', KEYS[3], '*', 'job', '', 'error', bad,\n"
    "               'deliveries', 1, 'id', h[4] or '')\n"
    "  end\n"
    "end\n"
    "\n"
    "local function post_result(rec, job, id, body, text, pubv, fullv)\n"
    "  local S = string.sub(rec, #P + 13)\n"
    "  local h = read_record(rec)\n"
    "  local s = decode(text)\n"
    "  local new = ident(s)\n"
    "  local tokd, bad = token_ok(h, S, new and new.u)\n"
    "  if new and fullv == '-' and (tokd or s.tokened == true) then\n"
    "    return 3\n"
    "  end\n"
    "  if new then settle_token(rec, h, S, bad) end\n"
    "  if fullv == '-' then fullv = '' end\n"
    "  local rid = redis.call('XADD', KEYS[2], '*', 'result', body)\n"
    "  local old = ident(decode(h[1]))\n"
    "  if not new then\n"
    "    redis.call('HSET', rec, 'job', job, 'entry', id, 'result_entry',\n"
    "               rid)\n"
    "    if old then\n"
    "      redis.call('HDEL', rec, 'summary', 'version', 'score',\n"
    "                 'public_score', 'scored', 'error')\n"
    "      place(S, old, nil)\n"
    "      touch(old)\n"
    "      flush()\n"
    "    end\n"
    "    return 1\n"
    "  end\n"
    "  local tok = tokd or s.tokened == true\n"
    "  write_summary(rec, text, s, tok, 'not scored',\n"
    "                {'job', job, 'entry', id, 'result_entry', rid})\n"
    "  local value = (tok and '1' or '0') .. text\n"
    "  if place(S, old, new, value) == 1 and not old then\n"
    "    touch(new, S, value)\n"
    "  else\n"
    "    touch(old)\n"
    "    touch(new)\n"
    "  end\n"
    "  local ts = flush()[new.pk]\n"
    "  local code = 1\n"
    "  if is_scored(s) and s.version ~= nil and\n"
    "     check_version(S, new.t, idtext(s.version) or '') then\n"
    "    code = 2\n"
    "  end\n"
    "  local view = pubv\n"
    "  if tok then view = fullv end\n"
    "  if view == '' then view = brief(s, tok) end\n"
    "  publish('score', new, S, tok, view, ts)\n"
    "  return code\n"
    "end\n"
    "\n"
    "-- Stores a dead-lettered scoring job as unscored, from the summary\n"
    "-- the worker wrote of what the job decoder checked; without one (the\n"
    "-- decoder refused the job, or no worker decoded it) the dead letter\n"
    "-- is all.\n"
    "local function post_dead(job, id, err, text)\n"
    "  local s = decode(text)\n"
    "  local S = s and idtext(s.submission)\n"
    "  if not S or s.scored ~= false then return end\n"
    "  local rec = P .. ':submission:' .. S\n"
    "  local h = read_record(rec)\n"
    "  local old, new = ident(decode(h[1])), ident(s)\n"
    "  local tokd, bad = token_ok(h, S, new and new.u)\n"
    "  settle_token(rec, h, S, bad)\n"
    "  local tok = tokd or s.tokened == true\n"
    "  write_summary(rec, text, s, tok, err, {'job', job, 'entry', id})\n"
    "  redis.call('HDEL', rec, 'result_entry')\n"
    "  redis.call('SREM', P .. ':stale', S)\n"
    "  place(S, old, new, (tok and '1' or '0') .. text)\n"
    "  touch(old)\n"
    "  touch(new)\n"
    "  flush()\n"
    "end\n"
    "\n"
    "-- Applies a token, or keeps it until the submission is scored. Returns\n"
    "-- the cause when the token is to be dead-lettered instead, else nil\n"
    "-- and whether the summary written is stale.\n"
    "local function post_token(rec, job, id, body, text, fullv)\n"
    "  local tk = decode(body) or {}\n"
    "  local S = idtext(tk.submission) or ''\n"
    "  if rec == '' then rec = P .. ':submission:' .. S end\n"
    "  local hh = read_record(rec)\n"
    "  local h = hh[1]\n"
    "  local st = decode(h)\n"
    "  local tp = idtext(tk.participant)\n"
    "  if st and tp and tp ~= idtext(st.participant) then\n"
    "    return 'token for participant ' .. str(tp) ..\n"
    "      ', but submission ' .. str(S) .. ' is of participant ' ..\n"
    "      str(idtext(st.participant) or '')\n"
    "  end\n"
    "  local function note(state)\n"
    "    redis.call('XADD', KEYS[2], '*', 'token', '{\"submission\":' ..\n"
    "               str(S) .. ',\"id\":' .. str(id) .. ',\"state\":' ..\n"
    "               str(state) .. '}')\n"
    "  end\n"
    "  if hh[2] == '1' then\n"
    "    -- Used already (or kept already): nothing more to do or show.\n"
    "    if not st and hh[3] and hh[3] ~= '' and tp and tp ~= hh[3] then\n"
    "      return 'token for participant ' .. str(tp) .. ', but one for ' ..\n"
    "        'participant ' .. str(hh[3]) .. ' is already kept for ' ..\n"
    "        'submission ' .. str(S)\n"
    "    end\n"
    "    note('duplicate')\n"
    "    return nil, false\n"
    "  end\n"
    "  if not st and not decode(text) then\n"
    "    -- Kept until the submission is scored, bounded per participant;\n"
    "    -- its participant is checked when the submission comes.\n"
    "    local pk = P .. ':pendingtokens:' .. enc(tp or '')\n"
    "    if redis.call('SCARD', pk) >= MAX_PENDING_TOKENS then\n"
    "      return 'participant ' .. str(tp or '') .. ' has ' ..\n"
    "        MAX_PENDING_TOKENS .. ' tokens kept for submissions not ' ..\n"
    "        'scored yet: no more are kept'\n"
    "    end\n"
    "    redis.call('SADD', pk, S)\n"
    "    redis.call('HSET', rec, 'tokened', '1', 'token_participant',\n"
    "               tp or '', 'token_entry', id)\n"
    "    note('pending')\n"
    "    return nil, false\n"
    "  end\n"
    "  local old = ident(st)\n"
    "  local s = decode(text)\n"
    "  -- A summary scored from a job the submission no longer holds is\n"
    "  -- not written: the stored one stands.\n"
    "  if s and tk.entry ~= nil and\n"
    "     tk.entry ~= redis.call('HGET', rec, 'entry') then\n"
    "    s, fullv = nil, ''\n"
    "  end\n"
    "  if s then\n"
    "    write_summary(rec, text, s, true, 'not scored', {})\n"
    "    st, h = s, text\n"
    "  else\n"
    "    redis.call('HSET', rec, 'tokened', '1')\n"
    "  end\n"
    "  local state, new = 'pending', ident(st)\n"
    "  local stale = false\n"
    "  if s and new and is_scored(s) and s.version ~= nil then\n"
    "    stale = check_version(S, new.t, idtext(s.version) or '')\n"
    "  end\n"
    "  if new then\n"
    "    place(S, old, new, '1' .. h)\n"
    "    touch(old)\n"
    "    touch(new)\n"
    "    local ts = flush()[new.pk]\n"
    "    if is_scored(st) then\n"
    "      state = 'applied'\n"
    "      if fullv == '' then fullv = brief(st, true) end\n"
    "      publish('token', new, S, true, fullv, ts)\n"
    "    end\n"
    "  end\n"
    "  redis.call('XADD', KEYS[2], '*', 'token', '{\"submission\":' ..\n"
    "             str(S) .. ',\"id\":' .. str(id) .. ',\"state\":' ..\n"
    "             str(state) .. '}')\n"
    "  return nil, stale\n"
    "end\n"
    "\n"
    "P = ARGV[3]\n"
    "local out = {}\n"
    "for i = 0, tonumber(ARGV[4]) - 1 do\n"
    "  local b = 5 + i * 8\n"
    "  local id, dl, kind, body, rec =\n"
    "    ARGV[b], ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4]\n"
    "  local code = owned(id, dl)\n"
    "  if code == 1 then\n"
    "    local e = redis.call('XRANGE', KEYS[1], id, id)\n"
    "    local job = ''\n"
    "    if #e > 0 then job = job_of(e[1][2]) end\n"
    "    if kind == 'result' and rec ~= '' then\n"
    "      code = post_result(rec, job, id, body, ARGV[b + 5], ARGV[b + 6],\n"
    "                         ARGV[b + 7])\n"
    "    elseif kind == 'result' then\n"
    "      redis.call('XADD', KEYS[2], '*', 'result', body)\n"
    "    elseif kind == 'token' then\n"
    "      local err, stale = post_token(rec, job, id, body, ARGV[b + 5],\n"
    "                                    ARGV[b + 7])\n"
    "      if err then dead(job, err, dl, id) elseif stale then code = 2 end\n"
    "    else\n"
    "      dead(job, body, dl, id)\n"
    "      post_dead(job, id, body, ARGV[b + 5])\n"
    "    end\n"
    "    if code ~= 3 then\n"
    "      redis.call('XACK', KEYS[1], ARGV[1], id)\n"
    "      redis.call('XDEL', KEYS[1], id)\n"
    "    end\n"
    "  end\n"
    "  out[#out + 1] = code\n"
    "end\n"
    "return out\n";

/* ARGV[3] = cursor, ARGV[4] = count. Redis counts a read of one's own
 * history as a delivery (except of a deleted entry); tally does not: the
 * count is how many times the job was handed out to be scored and not
 * posted (a first read, a claim from a consumer that stopped, a retry
 * after a worker crashed or timed out), and a re-read after a reconnect or
 * a restart hands out nothing new. So the count the read added is taken
 * back (XCLAIM with JUSTID does not count) before it is returned. */
static const char history_script[] = JOB_OF
    "local r = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT',\n"
    "                     ARGV[4], 'STREAMS', KEYS[1], ARGV[3])\n"
    "local out = {}\n"
    "if not r or #r == 0 then return out end\n"
    "for _, e in ipairs(r[1][2]) do\n"
    "  local p = redis.call('XPENDING', KEYS[1], ARGV[1], e[1], e[1], 1)\n"
    "  if #p > 0 then\n"
    "    local dl = p[1][4]\n"
    "    if e[2] and dl > 1 then\n"
    "      dl = dl - 1\n"
    "      redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, e[1],\n"
    "                 'RETRYCOUNT', dl, 'JUSTID')\n"
    "    end\n"
    "    out[#out + 1] = e[1]\n"
    "    out[#out + 1] = dl\n"
    "    out[#out + 1] = job_of(e[2])\n"
    "  end\n"
    "end\n"
    "return out\n";

/* ARGV[3] = min idle ms, ARGV[4] = cursor, ARGV[5] = count. Own entries
 * are skipped: the history read handles them. XCLAIM of an entry deleted
 * while pending drops it from the pending list and returns nothing, so
 * its dead letter is written here, the only place that still knows. */
static const char claim_script[] = JOB_OF RELEASED_IDLE
    "local start = ARGV[4] == '-' and '-' or '(' .. ARGV[4]\n"
    "local p = redis.call('XPENDING', KEYS[1], ARGV[1], 'IDLE', ARGV[3],\n"
    "                     start, '+', ARGV[5])\n"
    "local out = {#p < tonumber(ARGV[5]) and '-' or p[#p][1]}\n"
    "for _, e in ipairs(p) do\n"
    "  if e[2] ~= ARGV[2] then\n"
    "    local c, dl\n"
    "    if e[3] >= RELEASED then\n"
    "      -- Handed back by a draining daemon: no delivery is used up.\n"
    "      c = redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3],\n"
    "                     e[1], 'JUSTID')\n"
    "      if #c > 0 then c = redis.call('XRANGE', KEYS[1], e[1], e[1]) end\n"
    "      dl = e[4]\n"
    "    else\n"
    "      c = redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], e[1])\n"
    "      dl = e[4] + 1\n"
    "    end\n"
    "    if #c == 0 then\n"
    "      redis.call('XADD', KEYS[3], '*', 'job', '', 'error',\n"
    "        'the job entry was deleted from the stream while pending',\n"
    "        'deliveries', e[4], 'id', e[1])\n"
    "      out[#out + 1] = e[1]\n"
    "      out[#out + 1] = e[4]\n"
    "      out[#out + 1] = false\n"
    "    else\n"
    "      out[#out + 1] = e[1]\n"
    "      out[#out + 1] = dl\n"
    "      out[#out + 1] = job_of(c[1][2])\n"
    "    end\n"
    "  end\n"
    "end\n"
    "return out\n";

/* ARGV[3] = id, ARGV[4] = deliveries. */
static const char retry_script[] =
    CHECK_OWNER "local code = owned(ARGV[3], ARGV[4])\n"
                "if code ~= 1 then return code end\n"
                "local n = tonumber(ARGV[4]) + 1\n"
                "redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3],\n"
                "           'RETRYCOUNT', n, 'JUSTID')\n"
                "return n\n";

/* ARGV[3] unused, ARGV[4] = n, then n x (id, deliveries). A released
 * entry keeps its count and is marked idle for ten years, so the next
 * claim takes it at once, and without counting a delivery. */
static const char release_script[] = CHECK_OWNER RELEASED_IDLE
    "local out = {}\n"
    "for i = 0, tonumber(ARGV[4]) - 1 do\n"
    "  local id, dl = ARGV[5 + i * 2], ARGV[6 + i * 2]\n"
    "  local code = owned(id, dl)\n"
    "  if code == 1 then\n"
    "    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, id,\n"
    "               'IDLE', RELEASED, 'RETRYCOUNT', tonumber(dl), 'JUSTID')\n"
    "  end\n"
    "  out[#out + 1] = code\n"
    "end\n"
    "return out\n";

/* No stream keys: ARGV[1] = prefix, ARGV[2] = n, then n x (submission,
 * rev, summary, error). */
static const char rescore_script[] = CONTEST_LIB
    "-- The change JSON's old or new member.\n"
    "local function scores(sc, ps)\n"
    "  if sc == nil then return 'null' end\n"
    "  return '{\"score\":' .. num(sc) .. ',\"public_score\":' .. num(ps) ..\n"
    "    '}'\n"
    "end\n"
    "\n"
    "-- Rescores one submission whose hash h was read as (job, rev,\n"
    "-- summary, score, public_score, scored, tokened). Events wait in evs\n"
    "-- for the task scores. Returns 1 when a score changed, else 0.\n"
    "local function rescore_one(rec, S, h, text, err, evs)\n"
    "  local tok = h[7] == '1'\n"
    "  local old, s = ident(decode(h[3])), decode(text)\n"
    "  if err == '' then err = 'not scored' end\n"
    "  local new = ident(s)\n"
    "  if s then\n"
    "    write_summary(rec, text, s, tok, err, {})\n"
    "  else\n"
    "    redis.call('HSET', rec, 'scored', '0', 'error', err)\n"
    "    redis.call('HDEL', rec, 'summary', 'score', 'public_score',\n"
    "               'version')\n"
    "    redis.call('HINCRBY', rec, 'rev', 1)\n"
    "  end\n"
    "  place(S, old, new, (tok and '1' or '0') .. (text or ''))\n"
    "  touch(old)\n"
    "  touch(new)\n"
    "  local now = s ~= nil and is_scored(s)\n"
    "  if now and new and s.version ~= nil then\n"
    "    check_version(S, new.t, idtext(s.version) or '')\n"
    "  else\n"
    "    redis.call('SREM', P .. ':stale', S)\n"
    "  end\n"
    "  local os, ops, ns, nps\n"
    "  if h[6] == '1' then os, ops = tonumber(h[4]), tonumber(h[5]) end\n"
    "  if now then ns, nps = s.score, s.public_score end\n"
    "  if os == ns and ops == nps then return 0 end\n"
    "  local d = new or old or {}\n"
    "  local function s_or_null(x)\n"
    "    if x == nil then return 'null' end\n"
    "    return str(x)\n"
    "  end\n"
    "  redis.call('XADD', P .. ':changes', '*', 'change', '{\"contest\":' ..\n"
    "    s_or_null(d.c) .. ',\"participant\":' .. s_or_null(d.u) ..\n"
    "    ',\"task\":' .. s_or_null(d.t) .. ',\"submission\":' .. str(S) ..\n"
    "    ',\"version\":' ..\n"
    "    s_or_null(now and idtext(s.version) or nil) .. ',\"old\":' ..\n"
    "    scores(os, ops) .. ',\"new\":' .. scores(ns, nps) .. '}')\n"
    "  local ov, nv = ops, nps\n"
    "  if tok then ov, nv = os, ns end\n"
    "  if ov ~= nv and new then\n"
    "    evs[#evs + 1] = {d = new, S = S, tok = tok, view = brief(s, tok)}\n"
    "  end\n"
    "  return 1\n"
    "end\n"
    "\n"
    "P = ARGV[1]\n"
    "local out, evs = {}, {}\n"
    "for i = 0, tonumber(ARGV[2]) - 1 do\n"
    "  local b = 3 + i * 4\n"
    "  local S, rev = ARGV[b], ARGV[b + 1]\n"
    "  local rec = P .. ':submission:' .. S\n"
    "  local h = redis.call('HMGET', rec, 'job', 'rev', 'summary', 'score',\n"
    "                       'public_score', 'scored', 'tokened')\n"
    "  if not h[1] then\n"
    "    out[#out + 1] = -3\n"
    "  elseif (h[2] or '0') ~= (rev ~= '' and rev or '0') then\n"
    "    out[#out + 1] = -1\n"
    "  else\n"
    "    out[#out + 1] = rescore_one(rec, S, h, ARGV[b + 2], ARGV[b + 3],\n"
    "                                evs)\n"
    "  end\n"
    "end\n"
    "local tss = flush()\n"
    "for _, e in ipairs(evs) do\n"
    "  publish('rescore', e.d, e.S, e.tok, e.view, tss[e.d.pk])\n"
    "end\n"
    "return out\n";

const char tally_script_lib[] = CONTEST_LIB;

const char *const tally_scripts[TALLY_SCRIPT_COUNT] = {
    [TALLY_SCRIPT_POST] = post_script,
    [TALLY_SCRIPT_HISTORY] = history_script,
    [TALLY_SCRIPT_CLAIM] = claim_script,
    [TALLY_SCRIPT_RETRY] = retry_script,
    [TALLY_SCRIPT_RELEASE] = release_script,
    [TALLY_SCRIPT_RESCORE] = rescore_script,
};

static void arg(tally_call_t *c, const char *s, size_t len) {
  c->argv[c->argc] = s;
  c->argvlen[c->argc] = len;
  c->argc++;
}

static void arg_str(tally_call_t *c, const char *s) {
  arg(c, s, strlen(s));
}

/* A string that may be NULL, which passes as "". */
static void arg_opt(tally_call_t *c, const char *s, size_t len) {
  arg(c, s ? s : "", s ? len : 0);
}

static void arg_num(tally_call_t *c, unsigned long long v) {
  char *buf = c->nums[c->nnums++];
  arg(c, buf, (size_t)snprintf(buf, sizeof(c->nums[0]), "%llu", v));
}

void tally_call_begin(tally_call_t *c, tally_script_t s, const char *sha,
                      const char *prefix, const char *consumer) {
  static const char *const suffix[3] = {"jobs", "results", "dead"};
  c->argc = 0;
  c->nnums = 0;
  c->items = 0;
  c->count_arg = -1;
  arg_str(c, sha ? "EVALSHA" : "EVAL");
  arg_str(c, sha ? sha : tally_scripts[s]);
  arg_str(c, "3");
  for (int i = 0; i < 3; i++) {
    snprintf(c->keys[i], sizeof(c->keys[i]), "%s:%s", prefix, suffix[i]);
    arg_str(c, c->keys[i]);
  }
  arg_str(c, TALLY_GROUP);
  arg_str(c, consumer);
  if (s == TALLY_SCRIPT_POST || s == TALLY_SCRIPT_RELEASE) {
    snprintf(c->prefix, sizeof(c->prefix), "%s", prefix);
    arg_str(c, s == TALLY_SCRIPT_POST ? c->prefix : "0");
    c->count_arg = c->argc;
    arg_num(c, 0);
  }
}

void tally_call_rescore_begin(tally_call_t *c, const char *sha,
                              const char *prefix) {
  c->argc = 0;
  c->nnums = 0;
  c->items = 0;
  arg_str(c, sha ? "EVALSHA" : "EVAL");
  arg_str(c, sha ? sha : tally_scripts[TALLY_SCRIPT_RESCORE]);
  arg_str(c, "0");
  snprintf(c->prefix, sizeof(c->prefix), "%s", prefix);
  arg_str(c, c->prefix);
  c->count_arg = c->argc;
  arg_num(c, 0);
}

/* Rewrites the item count after an item is added. */
static void count_item(tally_call_t *c) {
  char *buf = (char *)c->argv[c->count_arg];
  c->items++;
  c->argvlen[c->count_arg] =
      (size_t)snprintf(buf, sizeof(c->nums[0]), "%u", c->items);
}

int tally_call_post(tally_call_t *c, const char *id, uint32_t deliveries,
                    const char *kind, const char *body, size_t body_len,
                    const char *record, const tally_post_extra_t *extra) {
  if (c->items >= TALLY_CALL_MAX_ITEMS)
    return -1;
  arg_str(c, id);
  arg_num(c, deliveries);
  arg_str(c, kind);
  arg(c, body, body_len);
  arg_str(c, record ? record : "");
  const tally_post_extra_t none = {0};
  if (extra == NULL)
    extra = &none;
  arg_opt(c, extra->summary, extra->summary_len);
  arg_opt(c, extra->pub, extra->pub_len);
  arg_opt(c, extra->full, extra->full_len);
  count_item(c);
  return 0;
}

int tally_call_rescore(tally_call_t *c, const char *submission, const char *rev,
                       const char *summary, size_t summary_len,
                       const char *error) {
  if (c->items >= TALLY_CALL_MAX_ITEMS)
    return -1;
  arg_str(c, submission);
  arg_str(c, rev);
  arg_opt(c, summary, summary_len);
  arg_str(c, error ? error : "");
  count_item(c);
  return 0;
}

void tally_call_history(tally_call_t *c, const char *cursor, unsigned count) {
  arg_str(c, cursor);
  arg_num(c, count);
}

void tally_call_claim(tally_call_t *c, const char *cursor, uint64_t idle_ms,
                      unsigned count) {
  arg_num(c, idle_ms);
  arg_str(c, cursor);
  arg_num(c, count);
}

void tally_call_retry(tally_call_t *c, const char *id, uint32_t deliveries) {
  arg_str(c, id);
  arg_num(c, deliveries);
}

int tally_call_release(tally_call_t *c, const char *id, uint32_t deliveries) {
  if (c->items >= TALLY_CALL_MAX_ITEMS)
    return -1;
  arg_str(c, id);
  arg_num(c, deliveries);
  count_item(c);
  return 0;
}
