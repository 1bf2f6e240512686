#!/usr/bin/env python3
"""tallyd pushing contests to CMS's Ranking Web Server: against the
stand-in (tests/rws_standin.py, written from the RWS protocol) in the
suite, or by hand against CMS's own cmsranking (--rws-url, --username,
--password; docs/scoreboard.md says how to run it).

Random histories (every score mode, public and private testcases,
tokens, jobs that replace a submission's earlier job and move its time,
unofficial submissions, ids that are not RWS keys) are scored by tallyd;
the server's score of every user on every task must equal tally's public
ranking. The stand-in refuses one PUT in four with 503 and is stopped and
started again in the middle, so the push's retries are part of the run;
in the end it holds exactly one submission per scored official
submission and one subchange per score and per token, created once each,
and nothing of what was submitted during a freeze.

usage: rws_push.py --build DIR --source DIR [--seed S]
       [--rws-url URL --username U --password P]
"""
import argparse
import base64
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

from tallyproc import (fail, start_redis, start_tallyd, stop, stop_clean,
                       wait_posted)


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def encode_id(s):
    """CMS's encode_id."""
    return "".join(c if c.isascii() and c.isalnum() else "_%x" % ord(c)
                   for c in s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--rws-url")
    ap.add_argument("--username", default="usern4me")
    ap.add_argument("--password", default="passw0rd")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    build, source = os.path.abspath(a.build), os.path.abspath(a.source)
    tmp = tempfile.mkdtemp(prefix="tally-rws-")
    procs = []
    standin = None
    try:
        state = os.path.join(tmp, "rws-state.json")

        def start_standin(port=0):
            p = subprocess.Popen(
                [sys.executable, os.path.join(source, "tests",
                                              "rws_standin.py"),
                 "--username", a.username, "--password", a.password,
                 "--port", str(port), "--state", state, "--fail-every", "4"],
                stdout=subprocess.PIPE, text=True)
            procs.append(p)
            line = p.stdout.readline()
            m = re.match(r"port (\d+)", line)
            if not m:
                fail(f"the stand-in did not start: {line!r}")
            return p, int(m.group(1))

        if a.rws_url:
            rws = a.rws_url.rstrip("/") + "/"
        else:
            standin, port = start_standin()
            rws = f"http://127.0.0.1:{port}/"
        url, sock = start_redis(tmp, procs)
        tasks = os.path.join(tmp, "tasks")
        os.mkdir(tasks)
        with open(os.path.join(source, "examples", "tasks", "sum.json")) as f:
            sum_task = json.load(f)
        with open(os.path.join(source, "examples", "tasks",
                               "product.json")) as f:
            product = json.load(f)
        defs = {}
        for mode in ("max", "max_subtask", "max_tokened_last"):
            for base, cfg in (("sum", sum_task), ("product", product)):
                for prefix in ("", "f"):
                    t = dict(cfg, name=f"{prefix}{base}_{mode}",
                             score_mode=mode)
                    defs[t["name"]] = t
                    with open(os.path.join(tasks, t["name"] + ".json"),
                              "w") as f:
                        json.dump(t, f)
        now = time.time()
        start = int(now) - 3600
        live = {"name": "ioi day 1", "title": "IOI, day 1",
                "tasks": sorted(t for t in defs if not t.startswith("f")),
                "start": rfc3339(start),
                "end": rfc3339(start + 5 * 3600), "score_precision": 2,
                "rws": [{"url": rws, "username": a.username,
                         "password": a.password}]}
        # Frozen half an hour ago, until 2099: what came later stays away.
        frozen = dict(live, name="ioi-frozen", tasks=["fsum_max",
                                                      "fproduct_max_subtask"],
                      freeze=rfc3339(start + 1800),
                      end="2099-01-01T00:00:00Z")
        for c in (live, frozen):
            with open(os.path.join(tasks, c["name"] + ".contest.json"),
                      "w") as f:
                json.dump(c, f)
        with open(os.path.join(tasks, "participants.json"), "w") as f:
            json.dump({"alice": {"name": "Alice", "team": "Italy"},
                       "bob": {"name": "Bob", "team": "Côte d'Ivoire"},
                       "émile": {"name": "Émile"}}, f)
        log = os.path.join(tmp, "tallyd.log")
        tallyd, port = start_tallyd(
            build, ["--tasks", tasks, "--redis", url, "--workers", "1"], log,
            procs)
        base = f"http://127.0.0.1:{port}"

        def jobs(n, first):
            out = []
            for k in range(first, first + n):
                c = rng.choice([live, live, frozen])
                task = rng.choice(c["tasks"])
                tcs = list(defs[task]["testcases"])
                sid = f"s{rng.randint(0, n + first)}"  # some repeat
                job = {"submission": sid, "participant": rng.choice(
                    ["alice", "bob", "émile", "team #4", "dan"]),
                    "contest": c["name"], "task": task,
                    "timestamp": start + rng.randint(0, 3000),
                    "evaluations": {t: rng.choice([0, 1, 1, 0.5])
                                    for t in tcs}}
                if rng.random() < 0.08:
                    job["official"] = False
                if rng.random() < 0.08:
                    job = {"submission": sid, "participant": job["participant"],
                           "contest": c["name"], "task": task,
                           "timestamp": job["timestamp"],
                           "compilation": "failed"}
                out.append(job)
                if rng.random() < 0.15:
                    out.append({"type": "token", "submission": sid})
            return out

        def submit(batch):
            subprocess.run([os.path.join(build, "tally"), "submit",
                            "--redis", url],
                           input="".join(json.dumps(j) + "\n" for j in batch),
                           text=True, check=True, capture_output=True)

        def settled(n):
            wait_posted(sock, n)

        def rws_get(path):
            req = urllib.request.Request(rws + path)
            req.add_header("Accept", "application/json")
            req.add_header("Authorization", "Basic " + base64.b64encode(
                f"{a.username}:{a.password}".encode()).decode())
            with urllib.request.urlopen(req, timeout=10) as r:
                return json.loads(r.read())

        def want_scores():
            want = {}
            for c in (live, frozen):
                q = urllib.request.quote(c["name"])
                r = json.loads(urllib.request.urlopen(
                    f"{base}/api/contests/{q}/ranking").read())
                for row in r["rows"]:
                    for t, ts in row["tasks"].items():
                        want[(encode_id(row["participant"]),
                              encode_id(t))] = ts["score"]
            return want

        def server_scores():
            return {(u, t): v for u, ts in rws_get("scores").items()
                    for t, v in ts.items()}

        def same(want, got):
            keys = set(want) | set(got)
            return all(abs(want.get(k, 0.0) - got.get(k, 0.0)) < 1e-6
                       for k in keys)

        def wait_equal(what):
            deadline = time.time() + 90
            while True:
                want, got = want_scores(), server_scores()
                if same(want, got):
                    print(f"ok: {what}: the server's {len(got)} task scores "
                          f"equal tally's public ranking")
                    return
                if time.time() > deadline:
                    diff = {k: (want.get(k), got.get(k))
                            for k in set(want) | set(got)
                            if abs(want.get(k, 0.0) - got.get(k, 0.0)) >=
                            1e-6}
                    fail(f"{what}: the server's scores differ from tally's "
                         f"public ranking (tally, server): {diff}")
                time.sleep(0.5)

        first = jobs(120, 0)
        submit(first)
        settled(len(first))
        wait_equal("after 120 jobs")
        if standin is not None:
            # The server goes away while jobs come, and comes back on the
            # same port having lost everything: tallyd sends it all again.
            standin.terminate()
            standin.wait(timeout=10)
            os.remove(state)
            second = jobs(80, 1000)
            submit(second)
            settled(len(first) + len(second))
            time.sleep(2)
            standin, _ = start_standin(int(rws.rsplit(":", 1)[1].strip("/")))
        else:
            second = jobs(80, 1000)
            submit(second)
            settled(len(first) + len(second))
        wait_equal("after the server came back and 80 more jobs")
        if standin is not None:
            stats = rws_get("stats")
            subs = rws_get("submissions")
            changes = rws_get("subchanges")
            fz = start + 1800
            frozen_tasks = {encode_id(t) for t in frozen["tasks"]}
            late = [k for k, sub in subs.items()
                    if sub["task"] in frozen_tasks and sub["time"] >= fz]
            early = [k for k, sub in subs.items()
                     if sub["task"] in frozen_tasks and sub["time"] < fz]
            if late or not early:
                fail(f"the frozen contest: {len(late)} submissions made "
                     f"during its freeze reached the server, "
                     f"{len(early)} from before it")
            for key, c in changes.items():
                if not key.endswith(("s", "t")) or \
                        c["submission"] not in subs:
                    fail(f"a subchange {key} of no submission")
                if key[:-1] != c["submission"]:
                    fail(f"subchange {key} is not its submission's")
            print(f"ok: the stand-in holds {len(subs)} submissions and "
                  f"{len(changes)} subchanges, each under its own key; "
                  f"PUTs taken {stats['taken']}, refused "
                  f"{stats['refused']}, failed on purpose {stats['failed']};"
                  f" created {stats['created']}, updated "
                  f"{stats['updated']}")
            if stats["refused"]:
                fail("the stand-in refused data tallyd sent")
            # Since it came back empty, each entity was created once.
            if stats["created"].get("submissions") != len(subs) or \
                    stats["created"].get("subchanges") != len(changes):
                fail(f"entities created more than once: {stats}")
        # /metrics: PUTs taken, and (once a round waiting for its retry
        # has had it) no server failing.
        deadline = time.time() + 90
        while True:
            metrics = urllib.request.urlopen(f"{base}/metrics").read().decode()
            taken = re.search(
                r'^tally_rws_puts_total\{outcome="taken"\} (\d+)', metrics,
                re.M)
            failing = re.search(r"^tally_rws_servers_failing (\d+)$",
                                metrics, re.M)
            if taken and int(taken.group(1)) > 0 and failing and \
                    int(failing.group(1)) == 0:
                break
            if time.time() > deadline:
                fail(f"/metrics of the push: {taken and taken.group(0)}, "
                     f"{failing and failing.group(0)}")
            time.sleep(0.5)
        stop_clean(tallyd, log)
        with open(log) as f:
            said = f.read()
        if a.password in said:
            fail("tallyd's log holds the server's password")
        if "rws" not in said:
            fail("tallyd's log says nothing of the push")
        print(f"rws_push: seed {seed}: ok")
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
