#!/usr/bin/env python3
"""The CCS Contest API through a real tallyd, Redis and HTTP client.

Random pass-fail contests (one frozen, one not; ids that are CCS ids and
ids that are not; teams with organizations and without; languages given
and not; every kind of judgement; unofficial and unscored submissions)
are scored by tallyd; then, for the public view and the operator's (HTTP
Basic with the operator token as password):

- every endpoint answers, and every object keeps referential integrity
  (a submission's team, problem and language exist, a judgement's
  submission and type, a team's organization);
- the event feed (stream=false) replayed from the start rebuilds every
  collection the endpoints serve, and a scoreboard computed from the
  replayed contest, problems, teams, submissions and judgements by an
  independent model of the CCS requirements equals /scoreboard;
- the public view hides the judgements of submissions made during the
  freeze and shows them pending on the scoreboard;
- since_token gives exactly the submissions and judgements after it; a
  bad token is a 400; an open feed sends a new submission and its
  judgement within seconds;
- filtering by an ID property (team_id) keeps exactly those objects;
- with --schemas DIR (icpc/ccs-specs' json-schema/ at 2023-06, fetched
  by hand), every answer and every event validates against its JSON
  Schema with python3-jsonschema.

usage: ccs_api.py --build DIR --source DIR [--schemas DIR] [--seed S]
"""
import argparse
import base64
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from tallyproc import (fail, start_redis, start_tallyd, stop, stop_clean,
                       wait_posted)


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def parse_time(s):
    """A CCS TIME ("2026-01-01T10:00:00.000Z") in seconds."""
    m = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d+)?Z",
                     s)
    if not m:
        fail(f"not a UTC time: {s}")
    import calendar
    t = calendar.timegm(tuple(int(m.group(i)) for i in range(1, 7)) +
                        (0, 0, 0))
    return t + float(m.group(7) or 0)


def parse_reltime(s):
    m = re.fullmatch(r"(-?)(\d+):(\d\d):(\d\d)(\.\d+)?", s)
    if not m:
        fail(f"not a RELTIME: {s}")
    v = int(m.group(2)) * 3600 + int(m.group(3)) * 60 + int(m.group(4)) + \
        float(m.group(5) or 0)
    return -v if m.group(1) else v


class Schemas:
    """icpc/ccs-specs' JSON Schemas, $refs between files resolved."""

    def __init__(self, folder):
        import jsonschema
        self.js = jsonschema
        self.store = {}
        self.by_name = {}
        for name in os.listdir(folder):
            if name.endswith(".json"):
                with open(os.path.join(folder, name)) as f:
                    d = json.load(f)
                self.store[d["$id"]] = d
                self.by_name[name[:-5]] = d
        self.checked = 0

    def check(self, name, value, where):
        schema = self.by_name[name]
        resolver = self.js.RefResolver(schema["$id"], schema,
                                       store=self.store)
        v = self.js.Draft202012Validator(schema, resolver=resolver)
        errors = sorted(v.iter_errors(value), key=lambda e: e.path)
        if errors:
            fail(f"{where}: not valid against {name}.json: "
                 f"{errors[0].message} at {list(errors[0].path)}")
        self.checked += 1


# ---------------------------------------------------------------------------
# An independent model of the CCS requirements' scoring, from the feed.
# ---------------------------------------------------------------------------

def model_scoreboard(contest, problems, teams, subs, judgements, jtypes):
    start = parse_time(contest["start_time"])
    pt = contest["penalty_time"]
    by_sub = {j["submission_id"]: j for j in judgements.values()}
    rows = []
    for t in teams.values():
        cells, solved, total, last = [], 0, 0, 0
        for p in sorted(problems.values(), key=lambda p: p["ordinal"]):
            mine = [s for s in subs.values() if s["team_id"] == t["id"] and
                    s["problem_id"] == p["id"]]
            mine.sort(key=lambda s: (parse_time(s["time"]), s["id"]))
            judged = pending = wrong = 0
            ok = None
            for s in mine:
                j = by_sub.get(s["id"])
                jt = j and j.get("judgement_type_id")
                if jt is None or jt == "JE":
                    pending += 1
                    continue
                if jtypes[jt]["solved"]:
                    judged += 1
                    ok = s
                    break
                if jtypes[jt]["penalty"]:
                    judged += 1
                    wrong += 1
            cell = {"problem_id": p["id"], "num_judged": judged,
                    "num_pending": pending, "solved": ok is not None}
            if ok is not None:
                minute = max(0, math.floor(
                    (parse_time(ok["time"]) - start) / 60))
                cell["time"] = minute
                solved += 1
                total += minute + pt * wrong
                last = max(last, minute)
            cells.append(cell)
        score = {"num_solved": solved, "total_time": total}
        if solved:
            score["time"] = last
        rows.append({"team_id": t["id"], "score": score, "problems": cells,
                     "key": (-solved, total, last)})
    rows.sort(key=lambda r: (r["key"], r["team_id"]))
    for i, r in enumerate(rows):
        r["rank"] = rows[i - 1]["rank"] if i and \
            rows[i - 1]["key"] == r["key"] else i + 1
    return [{"rank": r["rank"], "team_id": r["team_id"], "score": r["score"],
             "problems": r["problems"]} for r in rows]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--schemas")
    ap.add_argument("--seed", type=int)
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    schemas = Schemas(a.schemas) if a.schemas else None
    build, source = os.path.abspath(a.build), os.path.abspath(a.source)
    tmp = tempfile.mkdtemp(prefix="tally-ccs-")
    procs = []
    try:
        url, sock = start_redis(tmp, procs)
        tasks = os.path.join(tmp, "tasks")
        shutil.copytree(os.path.join(source, "examples", "tasks"), tasks)
        now = time.time()
        start = int(now) - 5 * 3600
        contests = {
            # Frozen now (from an hour ago until 2099), with medals.
            "wf.2026": {"name": "wf.2026", "title": "World Finals",
                        "tasks": ["sum", "product", "aplusb"],
                        "scoring": "pass-fail", "start": rfc3339(start),
                        "end": "2099-01-01T00:00:00Z",
                        "freeze": rfc3339(start + 4 * 3600),
                        "penalty_time": 20,
                        "medals": {"gold": 1, "silver": 1, "bronze": 2}},
            # Not frozen; a contest id that is not a CCS id.
            "régional 1": {"name": "régional 1", "tasks": ["sum", "product"],
                           "scoring": "pass-fail", "start": rfc3339(start),
                           "end": rfc3339(start + 3600),
                           "compile_penalty": True, "penalty_time": 7},
        }
        for i, c in enumerate(contests.values()):
            with open(os.path.join(tasks, f"c{i}.contest.json"), "w") as f:
                json.dump(c, f)
        people = {"alice": {"name": "Alice", "team": "MIT"},
                  "bob": {"name": "Bob", "team": "ETH Zürich"},
                  "carol": {"name": "Carol"},
                  "team with spaces": {"name": "Spaces", "team": "MIT"},
                  "x" * 40: {"name": "Long"}}
        with open(os.path.join(tasks, "participants.json"), "w") as f:
            json.dump(people, f)
        token = "operator-token-for-the-ccs-test"
        with open(os.path.join(tmp, "token"), "w") as f:
            f.write(token + "\n")
        log = os.path.join(tmp, "tallyd.log")
        tallyd, port = start_tallyd(
            build, ["--tasks", tasks, "--redis", url, "--workers", "1",
                    "--http-token-file", os.path.join(tmp, "token")],
            log, procs)
        base = f"http://127.0.0.1:{port}/ccs"
        basic = "Basic " + base64.b64encode(
            f"admin:{token}".encode()).decode()

        def get(path, operator=False, raw=False):
            req = urllib.request.Request(base + path)
            if operator:
                req.add_header("Authorization", basic)
            try:
                with urllib.request.urlopen(req, timeout=20) as r:
                    body = r.read().decode()
                    return r.status, body if raw else json.loads(body)
            except urllib.error.HTTPError as e:
                return e.code, json.loads(e.read().decode())

        # Random jobs.
        outcomes = {"sum": ["0", "1", "2", "3"],
                    "product": ["s1_a", "s1_b", "s2_a", "s2_b"]}
        with open(os.path.join(tasks, "aplusb.json")) as f:
            outcomes["aplusb"] = list(json.load(f)["testcases"])
        who = list(people) + ["dave", "émile"]
        jobs = []
        for k in range(160):
            name = rng.choice(list(contests))
            c = contests[name]
            task = rng.choice(c["tasks"])
            job = {"submission": f"s{k}" if k % 7 else f"sub #{k}",
                   "participant": rng.choice(who), "contest": name,
                   "task": task,
                   "timestamp": start + rng.randint(-60, 5 * 3600 - 60) +
                   rng.choice([0, 0.25])}
            if rng.random() < 0.6:
                job["language"] = rng.choice(["cpp", "java", "python3",
                                              "c++ 20", "c"])
                if rng.random() < 0.5:
                    job["entry_point"] = "Main"
            if rng.random() < 0.08:
                job["official"] = False
            r = rng.random()
            if r < 0.1:
                job["compilation"] = "failed"
            else:
                good = r < 0.5
                ev = {}
                for tc in outcomes[task]:
                    if good or rng.random() < 0.5:
                        ev[tc] = 1
                    else:
                        ev[tc] = rng.choice([0, {"outcome": 0, "text": [
                            rng.choice(["Execution timed out",
                                        "Execution killed by signal",
                                        "Output isn't correct"])]}])
                if r > 0.95:
                    ev.pop(next(iter(ev)))  # unscored: JE
                job["evaluations"] = ev
            jobs.append(job)
        subprocess.run([os.path.join(build, "tally"), "submit", "--redis",
                        url], input="".join(json.dumps(j) + "\n"
                                            for j in jobs),
                       text=True, check=True, capture_output=True)

        wait_posted(sock, len(jobs))

        status, info = get("")
        if status != 200 or info["version"] != "2023-06":
            fail(f"GET /ccs: {status} {info}")
        if schemas:
            schemas.check("api_information", info, "/ccs")
        status, listed = get("/contests")
        if status != 200 or len(listed) != 2:
            fail(f"/contests: {listed}")
        if schemas:
            schemas.check("contests", listed, "/contests")
        collections = ["judgement-types", "languages", "problems", "groups",
                       "organizations", "teams", "submissions",
                       "judgements", "awards"]
        checked = 0
        for c in listed:
            cid = c["id"]
            for operator in (False, True):
                view = "operator" if operator else "public"
                got = {}
                for e in collections:
                    status, got[e] = get(f"/contests/{cid}/{e}", operator)
                    if status != 200:
                        fail(f"{cid} {e} ({view}): {status} {got[e]}")
                    if schemas:
                        schemas.check(e, got[e], f"{cid}/{e} ({view})")
                    for item in got[e]:
                        s1, one = get(f"/contests/{cid}/{e}/"
                                      f"{urllib.request.quote(item['id'])}",
                                      operator)
                        if s1 != 200 or one != item:
                            fail(f"{cid}/{e}/{item['id']}: {s1} {one}")
                        checked += 1
                for single in ("state", "scoreboard", "access"):
                    status, got[single] = get(f"/contests/{cid}/{single}",
                                              operator)
                    if status != 200:
                        fail(f"{cid}/{single}: {status}")
                    if schemas:
                        schemas.check(single, got[single],
                                      f"{cid}/{single} ({view})")
                status, contest = get(f"/contests/{cid}", operator)
                if schemas:
                    schemas.check("contest", contest, f"{cid} ({view})")
                ids = {e: {o["id"] for o in got[e]} for e in collections}
                for s in got["submissions"]:
                    if s["team_id"] not in ids["teams"] or \
                            s["problem_id"] not in ids["problems"] or \
                            s["language_id"] not in ids["languages"]:
                        fail(f"{cid}: submission {s} refers to nothing")
                for j in got["judgements"]:
                    if j["submission_id"] not in ids["submissions"] or \
                            j["judgement_type_id"] not in \
                            ids["judgement-types"]:
                        fail(f"{cid}: judgement {j} refers to nothing")
                for t in got["teams"]:
                    if t.get("organization_id") is not None and \
                            t["organization_id"] not in ids["organizations"]:
                        fail(f"{cid}: team {t} has no organization")
                # The freeze: public judgements stop at it.
                frozen = got["state"]["frozen"] is not None and \
                    got["state"]["thawed"] is None
                hidden = [s for s in got["submissions"]
                          if s["id"] not in ids["judgements"]]
                if not operator and frozen:
                    fz = parse_time(got["state"]["frozen"])
                    if any(parse_time(s["time"]) < fz for s in hidden) or \
                            not hidden:
                        fail(f"{cid}: the public judgements do not stop "
                             f"at the freeze: {len(hidden)} hidden")
                elif hidden:
                    fail(f"{cid} ({view}): judgements missing: {hidden}")
                # The feed, replayed.
                status, text = get(f"/contests/{cid}/event-feed?stream=false",
                                   operator, raw=True)
                if status != 200:
                    fail(f"{cid} feed: {status}")
                store = {}
                for line in text.splitlines():
                    ev = json.loads(line)
                    if schemas:
                        schemas.check("event-feed", ev, f"{cid} feed")
                    if ev["type"] in ("contest", "state"):
                        store[ev["type"]] = ev["data"]
                    elif ev["id"] is None:
                        store[ev["type"]] = {o["id"]: o for o in ev["data"]}
                    elif ev["data"] is None:
                        store.setdefault(ev["type"], {}).pop(ev["id"], None)
                    else:
                        store.setdefault(ev["type"], {})[ev["id"]] = ev["data"]
                for e in collections:
                    if store.get(e, {}) != {o["id"]: o for o in got[e]}:
                        fail(f"{cid} ({view}): the feed's {e} differ from "
                             f"the endpoint's")
                if store["contest"] != contest or \
                        store["state"] != got["state"]:
                    fail(f"{cid} ({view}): the feed's contest or state")
                want = model_scoreboard(store["contest"], store["problems"],
                                        store["teams"], store["submissions"],
                                        store["judgements"],
                                        store["judgement-types"])
                if got["scoreboard"]["rows"] != want:
                    fail(f"{cid} ({view}): the scoreboard\n"
                         f"{json.dumps(got['scoreboard']['rows'])}\n"
                         f"is not the replayed feed's\n{json.dumps(want)}")
                # since_token: the submissions and judgements after it.
                tokens = [json.loads(x).get("token") for x in
                          text.splitlines()]
                tokens = [t for t in tokens if t]
                if len(tokens) > 4:
                    mid = tokens[len(tokens) // 2]
                    _, later = get(f"/contests/{cid}/event-feed?stream=false"
                                   f"&since_token={mid}", operator, raw=True)
                    later = [json.loads(x) for x in later.splitlines()]
                    want_tokens = sorted(
                        {t for t in tokens if tuple(map(int, t.split("-"))) >
                         tuple(map(int, mid.split("-")))})
                    got_tokens = sorted({e["token"] for e in later
                                         if e.get("token")})
                    if got_tokens != want_tokens or any(
                            e["type"] in ("teams", "problems", "contest")
                            for e in later):
                        fail(f"{cid}: since_token {mid} gave {got_tokens}, "
                             f"want {want_tokens}")
                # Filtering by team_id.
                if got["submissions"]:
                    team = got["submissions"][0]["team_id"]
                    _, mine = get(f"/contests/{cid}/submissions?team_id="
                                  f"{urllib.request.quote(team)}", operator)
                    if mine != [s for s in got["submissions"]
                                if s["team_id"] == team]:
                        fail(f"{cid}: filtering by team_id {team}")
                print(f"ok: {cid} ({view}): {len(got['submissions'])} "
                      f"submissions, {len(got['judgements'])} judgements, "
                      f"{len(got['teams'])} teams; the feed "
                      f"({len(text.splitlines())} events) rebuilds every "
                      f"endpoint and the scoreboard")
        status, bad = get(f"/contests/{listed[0]['id']}/event-feed"
                          f"?stream=false&since_token=yesterday")
        if status != 400:
            fail(f"a bad since_token: {status} {bad}")
        status, bad = get("/contests/nope/teams")
        if status != 404 or bad.get("code") != 404:
            fail(f"an unknown contest: {status} {bad}")
        # An open feed sends a new submission and its judgement.
        cid = next(c["id"] for c in listed if c["name"] == "régional 1")
        req = urllib.request.Request(f"{base}/contests/"
                                     f"{urllib.request.quote(cid)}/event-feed")
        feed = urllib.request.urlopen(req, timeout=30)
        seen = 0
        while True:
            line = feed.readline().decode()
            if not line:
                fail("the open feed ended")
            if line.strip() and json.loads(line)["type"] == "awards":
                seen += 1
                if seen == len(contests["régional 1"]["tasks"]) + 1:
                    break
        t0 = time.time()
        subprocess.run([os.path.join(build, "tally"), "submit", "--redis",
                        url], input=json.dumps({
                            "submission": "late-1", "participant": "carol",
                            "contest": "régional 1", "task": "sum",
                            "timestamp": start + 60,
                            "evaluations": {"0": 1, "1": 1, "2": 1,
                                            "3": 1}}) + "\n",
                       text=True, check=True, capture_output=True)
        kinds = set()
        while kinds != {"submissions", "judgements"}:
            if time.time() - t0 > 20:
                fail(f"the open feed did not send the new submission: "
                     f"{kinds}")
            line = feed.readline().decode()
            if line.strip():
                ev = json.loads(line)
                if ev.get("id") == "late-1":
                    kinds.add(ev["type"])
        print(f"ok: an open feed sent a new submission and its judgement "
              f"{time.time() - t0:.2f} s after it was submitted")
        feed.close()
        print(f"ccs_api: seed {seed}: {checked} objects read one by one"
              + (f", {schemas.checked} answers and events valid against "
                 f"the 2023-06 JSON Schemas" if schemas else
                 " (no --schemas: not validated against the JSON Schemas)"))
        # At most 64 feeds at once: the 65th is refused.
        many, refused = [], None
        for _ in range(70):
            try:
                many.append(urllib.request.urlopen(req, timeout=30))
            except urllib.error.HTTPError as e:
                refused = (e.code, json.loads(e.read().decode()))
                break
        for f in many:
            f.close()
        if refused is None or refused[0] != 503 or \
                "too many event feeds" not in refused[1]["message"] or \
                len(many) > 64:
            fail(f"the feeds' limit: {len(many)} open, then {refused}")
        print(f"ok: {len(many)} feeds open at once (with the earlier ones), "
              f"the next refused: {refused[1]['message']}")
        time.sleep(2)  # the closed feeds are noticed at their next write
        # tallyd stops cleanly with a feed open, and under the sanitizers
        # says nothing.
        still = urllib.request.urlopen(req, timeout=30)
        still.readline()
        metrics = urllib.request.urlopen(
            f"http://127.0.0.1:{port}/metrics").read().decode()
        # The feed closed above may not be noticed yet: at least this one.
        m = re.search(r"^tally_ccs_event_feeds (\d+)$", metrics, re.M)
        if not m or int(m.group(1)) < 1:
            fail(f"/metrics does not count the open feed: {m and m.group(0)}")
        stop_clean(tallyd, log)
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
