#!/usr/bin/env python3
"""What a pass-fail contest's boards cost to read, against a score-based
one's ranking of the same submissions (the ratio in one run): tallyd on
its own redis-server scores N jobs (T teams, P problems) into a pass-fail
contest and a score-based twin; then, medians of 5, the time to answer:
the results API's ranking of each (the pass-fail one counted from every
place; reads 1.1 s apart, so that none is the answer tallyd keeps for a
second, and then one read again at once, which is), the board page, the
CCS scoreboard, the CCS submissions, and the whole CCS event feed
(stream=false).

usage: bench_boards.py --build DIR [--source DIR] [--jobs N,...]
       [--teams T] [--problems P]
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from tallyproc import start_redis, start_tallyd, stop, wait_posted  # noqa


def timed(url, n=5, gap=1.1):
    """Median time of n reads, gap seconds apart (tallyd keeps a pass-fail
    ranking's answer for a second: 0 reads what it kept)."""
    times = []
    size = 0
    for _ in range(n):
        time.sleep(gap)
        t0 = time.perf_counter()
        with urllib.request.urlopen(url, timeout=600) as r:
            size = len(r.read())
        times.append(time.perf_counter() - t0)
    return statistics.median(times), size


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", default=os.path.join(HERE, ".."))
    ap.add_argument("--jobs", default="10000,50000")
    ap.add_argument("--teams", type=int, default=100)
    ap.add_argument("--problems", type=int, default=10)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    rng = random.Random(1)
    for n in [int(x) for x in a.jobs.split(",")]:
        tmp = tempfile.mkdtemp(prefix="tally-bench-boards-")
        procs = []
        try:
            url, sock = start_redis(tmp, procs)
            tasks = os.path.join(tmp, "tasks")
            os.mkdir(tasks)
            names = [f"p{i}" for i in range(a.problems)]
            for name in names:
                with open(os.path.join(tasks, name + ".json"), "w") as f:
                    json.dump({"name": name, "score_type": "Sum",
                               "score_type_parameters": 10,
                               "testcases": {str(k): True
                                             for k in range(10)}}, f)
            start = int(time.time()) - 5 * 3600
            times = {"start": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                            time.gmtime(start)),
                     "end": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                          time.gmtime(start + 5 * 3600))}
            for c, extra in (("icpc", {"scoring": "pass-fail"}),
                             ("ioi", {})):
                with open(os.path.join(tasks, c + ".contest.json"), "w") as f:
                    json.dump(dict(name=c, tasks=names, **times, **extra), f)
            log = os.path.join(tmp, "tallyd.log")
            _, port = start_tallyd(build, ["--tasks", tasks, "--redis", url],
                                   log, procs)
            lines = []
            for k in range(n):
                good = rng.random() < 0.3
                ev = {str(t): 1 if good or rng.random() < 0.7 else 0
                      for t in range(10)}
                job = {"submission": f"s{k}", "participant":
                       f"team{rng.randrange(a.teams)}",
                       "task": rng.choice(names),
                       "timestamp": start + rng.randrange(5 * 3600),
                       "evaluations": ev}
                for c in ("icpc", "ioi"):
                    j = dict(job, contest=c,
                             submission=f"{c}-{job['submission']}")
                    lines.append(json.dumps(j))
            t0 = time.perf_counter()
            subprocess.run([os.path.join(build, "tally"), "submit",
                            "--redis", url], input="\n".join(lines) + "\n",
                           text=True, check=True, capture_output=True)
            wait_posted(sock, len(lines), timeout=900)
            took = time.perf_counter() - t0
            base = f"http://127.0.0.1:{port}"
            rows = [
                ("results API ranking, score-based", "/api/contests/ioi/ranking"),
                ("results API ranking, pass-fail", "/api/contests/icpc/ranking"),
                ("  the same, read again at once", "/api/contests/icpc/ranking",
                 0),
                ("board page, pass-fail", "/contests/icpc"),
                ("CCS scoreboard", "/ccs/contests/icpc/scoreboard"),
                ("CCS submissions", "/ccs/contests/icpc/submissions"),
                ("CCS event feed, stream=false",
                 "/ccs/contests/icpc/event-feed?stream=false"),
            ]
            print(f"{n} submissions per contest, {a.teams} teams, "
                  f"{a.problems} problems (scored in {took:.1f} s, both "
                  f"contests):")
            first = None
            for what, path, *gap in rows:
                t, size = timed(base + path, gap=gap[0] if gap else 1.1)
                first = first or t
                print(f"  {what:34} {t * 1000:9.1f} ms  {size / 1e6:7.2f} MB"
                      f"  {t / first:6.1f}x")
        finally:
            stop(procs)
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
