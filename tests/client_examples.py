#!/usr/bin/env python3
"""The client examples (examples/clients) against a real tallyd.

Each client, the Python one (Debian's python3-redis, under /usr/bin/python3)
and the Node one (the redis package from npm, installed with npm ci from
its lock file into the build folder), pushes the same jobs to a tallyd of
its own: the example jobs, a job whose view is too large for its event (so
that the client reads it from its key), and four jobs that must be dead
letters. Each must print every good job's result as `tally score` scores it
offline, every dead letter with its cause, and one contestant event per
scored submission with the public view's score and the task score.

Usage: client_examples.py --build DIR --source DIR [--only python|node]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tallyproc  # noqa: E402

fail = tallyproc.fail


def jobs_text(source):
    with open(os.path.join(source, "examples/jobs.jsonl")) as f:
        good = [line.strip() for line in f if line.strip()]
    # A view over 512 bytes goes to a key of its own (view_key).
    long = "x" * 300
    good.append(json.dumps({
        "submission": "s-big", "task": "sum", "participant": "erin",
        "evaluations": {str(i): {"outcome": 1, "text": [f"{long} {i}"]}
                        for i in range(4)}}))
    with open(os.path.join(source, "examples/bad-jobs.jsonl")) as f:
        bad = [line.strip() for line in f if line.strip()]
    bad += ['{"submission": "s-cut", "task": "sum",', '[1, 2]']
    return good, bad


def run_client(name, argv, env, source, build, good, bad, tmp):
    procs = []
    try:
        url, sock = tallyproc.start_redis(tmp, procs)
        log = os.path.join(tmp, "tallyd.log")
        tallyd, _ = tallyproc.start_tallyd(build, ["--tasks", os.path.join(
            source, "examples/tasks"), "--redis", url, "--workers", "2"],
            log, procs)
        jobs = os.path.join(tmp, "jobs.jsonl")
        with open(jobs, "w") as f:
            f.write("\n".join(good + bad) + "\n")
        r = subprocess.run(argv + ["--redis", url, jobs], capture_output=True,
                           text=True, timeout=120, env=env)
        if r.returncode != 0:
            fail(f"the {name} client: exit {r.returncode}:\n{r.stdout}"
                 f"{r.stderr}")
        events = subprocess.run(["redis-cli", "-s", sock, "XRANGE",
                                 "tally:public", "-", "+"],
                                capture_output=True, text=True).stdout
        if "view_key" not in events:
            fail("no event named a view_key: the large view was not tried")
        tallyproc.stop_clean(tallyd, log)
        return r.stdout
    finally:
        tallyproc.stop(list(reversed(procs)))


def check(name, out, expected, bad):
    lines = out.splitlines()
    if lines[0] != f"pushed {len(expected) + len(bad)} jobs":
        fail(f"{name}: {lines[0]!r}")
    results = {}
    for m in re.finditer(r"^result (\S+): (\S+)/(\S+) \(public (\S+)\)$",
                         out, re.M):
        if m.group(1) in results:
            fail(f"{name}: two results for {m.group(1)}")
        results[m.group(1)] = [float(m.group(i)) for i in (2, 3, 4)]
    want = {s: [v["score"], v["max_score"], v["public_score"]]
            for s, v in expected.items()}
    if results != want:
        fail(f"{name}: results {results}, offline {want}\n{out}")
    dead = re.findall(r"^dead letter (\S+): (.+)$", out, re.M)
    causes = ["outcome 2 is outside [0, 1]", 'unknown task "nosuchtask"',
              "invalid JSON at byte", "a job must be a JSON object"]
    if len(dead) != len(bad) or any(
            not any(c in err for _, err in dead) for c in causes):
        fail(f"{name}: dead letters {dead}\n{out}")
    events = {}
    for m in re.finditer(r"^event score (\S+) (\S+): view (\S+), task score "
                         r"(\S+)$", out, re.M):
        events[(m.group(1), m.group(2))] = (float(m.group(3)),
                                            float(m.group(4)))
    want_ev = {(v["participant"], v["task"]): (v["public_score"],
                                               v["public_score"])
               for v in expected.values()}
    if events != want_ev:
        fail(f"{name}: events {events}, expected {want_ev}\n{out}")
    print(f"ok: the {name} client: {len(results)} results as tally score "
          f"gives them, {len(dead)} dead letters with their causes, "
          f"{len(events)} contestant events (one view read from its key)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--only", choices=("python", "node"))
    a = ap.parse_args()
    build, source = os.path.abspath(a.build), os.path.abspath(a.source)
    good, bad = jobs_text(source)
    offline = subprocess.run(
        [os.path.join(build, "tally"), "score", "--tasks",
         os.path.join(source, "examples/tasks")],
        input="\n".join(good) + "\n", capture_output=True, text=True)
    expected = {}
    for line in offline.stdout.splitlines():
        res = json.loads(line)
        expected[res["submission"]] = res
    if len(expected) != len(good):
        fail(f"tally score scored {len(expected)} of {len(good)}: "
             f"{offline.stderr}")
    clients = os.path.join(source, "examples/clients")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if a.only in (None, "python"):
        with tempfile.TemporaryDirectory(prefix="tally-py-client-") as tmp:
            out = run_client("Python", ["/usr/bin/python3", os.path.join(
                clients, "python/tally_client.py")], env, source, build,
                good, bad, tmp)
        check("Python", out, expected, bad)
    if a.only in (None, "node"):
        node = os.path.join(build, "node-client")
        os.makedirs(node, exist_ok=True)
        for f in ("package.json", "package-lock.json", "tally_client.mjs"):
            shutil.copy(os.path.join(clients, "node", f), node)
        r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund",
                            "--loglevel=error"], cwd=node,
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            fail(f"npm ci: {r.stdout}{r.stderr}")
        with tempfile.TemporaryDirectory(prefix="tally-node-client-") as tmp:
            out = run_client("Node", ["node", os.path.join(
                node, "tally_client.mjs")], env, source, build, good, bad,
                tmp)
        check("Node", out, expected, bad)


if __name__ == "__main__":
    main()
