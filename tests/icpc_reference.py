#!/usr/bin/env python3
"""Differential test of tally's pass-fail (ICPC-style) contests against an
independent model written from the ICPC CCS requirements (2023-06,
"Judge Responses", "Assigning a Judgment", "Scoring Data Generation",
"Scoreboard") and docs/contest.md#pass-fail-contests.

The script builds random contests from a seeded RNG: tasks with a few
testcases, jobs whose evaluations time out, crash, run out of memory,
print wrong or partial answers or pass, compile errors, unofficial
submissions, submissions before the start and during the freeze, jobs
that replace an earlier job of the same submission, and jobs tallyd keeps
unscored (pending). `tally score --pass-fail` (and `--public`, the frozen
view) must print the board the model computes: every row's rank, solved
count, penalty, last solve, and every cell's judged and pending counts,
solve minute, penalty and first-to-solve mark.

usage: python3 tests/icpc_reference.py --tally build/tally [--seed S]
       [--contests N]

Standard library only.
"""

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile

# ---------------------------------------------------------------------------
# The model.
# ---------------------------------------------------------------------------

TIMEOUT = ("Execution timed out",
           "Execution timed out (wall clock limit exceeded)")
CRASH = ("Execution killed by signal",
         "Execution failed because the return code was nonzero",
         "Memory limit exceeded")


def testcase_judgement(outcome, text):
    """CCS "Judging With a Single Input File", read from CMS's texts."""
    if outcome >= 1:
        return "AC"
    first = text[0] if text else ""
    if any(first.startswith(t) for t in TIMEOUT):
        return "TLE"
    if first.startswith("Execution killed") or \
            first.startswith("Execution failed") or first in CRASH:
        return "RTE"
    return "WA"


def judgement(job, codenames):
    """CCS "Judging With Multiple Input Files": the first file, in
    alphabetical order, that is not accepted."""
    if job.get("compilation") == "failed":
        return "CE"
    for c in sorted(codenames, key=lambda s: s.encode()):
        ev = job["evaluations"][c]
        if isinstance(ev, dict):
            j = testcase_judgement(ev["outcome"], ev.get("text"))
        else:
            j = testcase_judgement(ev, None)
        if j != "AC":
            return j
    return "AC"


def contest_minute(start, t):
    """Rounded down, and a submission before the start is at minute 0."""
    return max(0, math.floor((t - start) / 60))


def board(contest, subs, public):
    """subs: dicts with participant, task, id, timestamp, official and
    judgement ("" for none). Returns the rows."""
    start = contest["start_s"]
    pt = contest.get("penalty_time", 20)
    cp = contest.get("compile_penalty", False)
    freeze = contest["freeze_s"] if public and "freeze_s" in contest else None
    teams = sorted({s["participant"] for s in subs}, key=lambda x: x.encode())
    cells = {}
    for u in teams:
        for t in contest["tasks"]:
            mine = [s for s in subs
                    if s["participant"] == u and s["task"] == t]
            mine.sort(key=lambda s: (s["timestamp"], s["id"].encode()))
            c = {"judged": 0, "pending": 0, "solved": False, "minute": 0,
                 "penalty": 0, "first": False, "at": None}
            wrong = 0
            for s in mine:
                if not s["official"]:
                    continue
                if c["solved"]:
                    break
                if freeze is not None and s["timestamp"] >= freeze:
                    c["pending"] += 1
                    continue
                j = s["judgement"]
                if j in ("", "JE"):
                    c["pending"] += 1
                elif j == "AC":
                    c["judged"] += 1
                    c["solved"] = True
                    c["at"] = s["timestamp"]
                    c["minute"] = contest_minute(start, s["timestamp"])
                    c["penalty"] = c["minute"] + pt * wrong
                elif j == "CE" and not cp:
                    pass
                else:
                    c["judged"] += 1
                    wrong += 1
            cells[(u, t)] = c
    for t in contest["tasks"]:
        ats = [cells[(u, t)]["at"] for u in teams if cells[(u, t)]["solved"]]
        for u in teams:
            c = cells[(u, t)]
            c["first"] = bool(ats) and c["solved"] and c["at"] == min(ats)
    rows = []
    for u in teams:
        solved = [cells[(u, t)] for t in contest["tasks"]
                  if cells[(u, t)]["solved"]]
        rows.append({
            "participant": u,
            "solved": len(solved),
            "penalty": sum(c["penalty"] for c in solved),
            "last": max([c["minute"] for c in solved], default=0),
            "tasks": {t: {k: cells[(u, t)][k] for k in
                          ("judged", "pending", "solved", "minute", "penalty",
                           "first")}
                      for t in contest["tasks"]},
        })
    rows.sort(key=lambda r: (-r["solved"], r["penalty"], r["last"],
                             r["participant"].encode()))
    for i, r in enumerate(rows):
        key = (r["solved"], r["penalty"], r["last"])
        prev = rows[i - 1] if i else None
        if prev and (prev["solved"], prev["penalty"], prev["last"]) == key:
            r["rank"] = prev["rank"]
        else:
            r["rank"] = i + 1
    return [{"rank": r["rank"], "participant": r["participant"],
             "solved": r["solved"], "penalty": r["penalty"],
             "last": r["last"], "tasks": r["tasks"]} for r in rows]


# ---------------------------------------------------------------------------
# Random contests.
# ---------------------------------------------------------------------------

TEXTS = [["Execution timed out"],
         ["Execution timed out (wall clock limit exceeded)"],
         ["Execution killed by signal"],
         ["Execution failed because the return code was nonzero"],
         ["Memory limit exceeded"],
         ["Output isn't correct"], ["Output is partially correct"],
         ["Execution killed with signal %s", "11"]]


def rfc3339(t):
    import datetime
    return datetime.datetime.fromtimestamp(
        t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def make(rng, k, folder):
    """One contest: its tasks' files, its config, and its jobs."""
    ntasks = rng.randint(1, 5)
    tasks = {}
    for i in range(ntasks):
        name = "p%d_%d" % (k, i)
        codes = ["%02d" % j for j in rng.sample(range(40), rng.randint(1, 4))]
        tasks[name] = codes
        with open(os.path.join(folder, name + ".json"), "w") as f:
            json.dump({"name": name, "score_type": "Sum",
                       "score_type_parameters": 10,
                       "testcases": {c: rng.random() < 0.5 for c in codes}},
                      f)
    start = 1767261600 + rng.randint(0, 10**6)
    length = rng.choice([300, 3600, 5 * 3600])
    contest = {"name": "icpc%d" % k, "tasks": list(tasks),
               "scoring": "pass-fail", "start": rfc3339(start),
               "end": rfc3339(start + length)}
    if rng.random() < 0.6:
        fz = start + rng.randint(0, length)
        contest["freeze"] = rfc3339(fz)
        contest["freeze_s"] = fz
    if rng.random() < 0.5:
        contest["penalty_time"] = rng.choice([0, 1, 5, 20, 7])
    if rng.random() < 0.4:
        contest["compile_penalty"] = rng.random() < 0.5
    contest["start_s"] = start
    config = {x: contest[x] for x in contest if not x.endswith("_s")}
    with open(os.path.join(folder, "icpc%d.contest.json" % k), "w") as f:
        json.dump(config, f)
    teams = ["t%d" % j for j in range(rng.randint(1, 12))] + ["é", "a b"]
    jobs = []
    nsub = rng.randint(0, 60)
    for n in range(nsub):
        t = rng.choice(list(tasks))
        sid = "c%d-%d" % (k, rng.randint(0, nsub))  # some ids repeat
        # Whole and fractional seconds, some before the start, some on a
        # minute's edge.
        ts = start + rng.choice([rng.randint(-90, length),
                                 60 * rng.randint(0, length // 60),
                                 rng.randint(0, length) + 0.5, 59.99])
        job = {"submission": sid, "participant": rng.choice(teams),
               "contest": contest["name"], "task": t, "timestamp": ts}
        if rng.random() < 0.1:
            job["official"] = False
        r = rng.random()
        if r < 0.1:
            job["compilation"] = "failed"
        else:
            ev = {}
            good = rng.random() < 0.45
            for c in tasks[t]:
                if good or rng.random() < 0.6:
                    ev[c] = 1 if rng.random() < 0.5 else {"outcome": 1}
                elif rng.random() < 0.5:
                    ev[c] = {"outcome": rng.choice([0, 0.5]),
                             "text": rng.choice(TEXTS)}
                else:
                    ev[c] = rng.choice([0, 0.25])
            if r < 0.14 and len(ev) > 0:
                # A testcase missing: tallyd keeps it unscored (pending).
                ev.pop(rng.choice(list(ev)))
            job["evaluations"] = ev
        jobs.append(job)
    return contest, tasks, jobs


def subs_of(jobs, tasks):
    """The last job of each submission, as the contest state keeps it."""
    last = {}
    for j in jobs:
        last[j["submission"]] = j
    out = []
    for j in last.values():
        codes = tasks[j["task"]]
        unscored = j.get("compilation") != "failed" and \
            set(j["evaluations"]) != set(codes)
        out.append({"participant": j["participant"], "task": j["task"],
                    "id": j["submission"], "timestamp": j["timestamp"],
                    "official": j.get("official", True),
                    "judgement": "" if unscored else judgement(j, codes)})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", required=True)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--contests", type=int, default=300)
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as folder:
        contests, all_jobs = [], []
        for k in range(a.contests):
            contest, tasks, jobs = make(rng, k, folder)
            contests.append((contest, tasks, jobs))
            all_jobs += jobs
        path = os.path.join(folder, "jobs.jsonl")
        with open(path, "w") as f:
            for j in all_jobs:
                f.write(json.dumps(j, ensure_ascii=rng.random() < 0.5) + "\n")
        failures = 0
        for public in (False, True):
            cmd = [a.tally, "score", "--pass-fail", "--tasks", folder, path]
            if public:
                cmd.insert(3, "--public")
            p = subprocess.run(cmd, capture_output=True, text=True)
            got = {}
            for line in p.stdout.splitlines():
                b = json.loads(line)
                got[b["contest"]] = b
            for contest, tasks, jobs in contests:
                name = contest["name"]
                want = board(contest, subs_of(jobs, tasks), public)
                have = got.get(name, {"rows": []})["rows"]
                frozen = public and "freeze_s" in contest
                if jobs and got[name]["frozen"] != frozen:
                    print("seed %d: %s: frozen %s, want %s" %
                          (seed, name, got[name]["frozen"], frozen))
                    failures += 1
                if have != want:
                    failures += 1
                    if failures <= 3:
                        print("seed %d: %s (%s): tally %s\nmodel %s" %
                              (seed, name, "public" if public else "private",
                               json.dumps(have), json.dumps(want)))
        checked = sum(len(c[2]) for c in contests)
        print("icpc_reference: seed %d, %d contests, %d jobs, both views: "
              "%d differences" % (seed, len(contests), checked, failures))
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
