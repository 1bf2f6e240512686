#!/usr/bin/env python3
"""`tally score` beside CMS's own GroupMin, whole processes, on the same jobs.

bench_score --write DIR N writes a GroupMin task (5 subtasks, 100
testcases, some private) and N jobs whose evaluations are objects. This
script then times, in turns, RUNS times each:

- `tally score --task DIR/bench.json DIR/jobs.jsonl > /dev/null`;
- a Python process that loads CMS's score type code from a checkout of
  cms-dev/cms (cms/grading/scoretypes/abc.py and GroupMin.py, as they
  are), reads the same jobs, builds for each the objects CMS's
  `compute_score` reads (a submission result with its evaluations), scores
  it and writes the score and details as JSON, as CMS stores them.

CMS's score types import parts of CMS that need a database and a web
toolbox (cms.db, cms.locale, cms.server.jinja2_toolbox, cms.grading.steps):
those few names are given stand-ins here, and `compute_score` itself is
CMS's code, unchanged. Needs python3-jinja2.

CI has no fetch, so this runs by hand; its figures go into
docs/performance.md.

usage: bench/vs_cms.py --cms PATH --tally build-release/tally
                       --bench-score build-release/bench_score
                       [--jobs 5000] [--runs 5]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# The CMS side, run as its own process: argv = cms checkout, task, jobs.
CMS_SIDE = r'''
import importlib.util, json, sys, types
cms_root, task_path, jobs_path = sys.argv[1:4]

def module(name, **names):
    m = types.ModuleType(name)
    m.__dict__.update(names)
    m.__path__ = []
    sys.modules[name] = m
    return m

# Stand-ins for what abc.py imports besides the score types.
import jinja2
class Message:
    def __init__(self, message):
        self.message = message
module("cms", FEEDBACK_LEVEL_FULL="full", FEEDBACK_LEVEL_RESTRICTED="restricted",
       FEEDBACK_LEVEL_OI_RESTRICTED="oi_restricted", plugin_list=lambda *a: [])
module("cms.db", SubmissionResult=object)
module("cms.grading")
module("cms.grading.steps",
       EVALUATION_MESSAGES={"timeout": Message("Execution timed out")})
module("cms.locale", Translation=object, DEFAULT_TRANSLATION=None)
module("cms.server")
module("cms.server.jinja2_toolbox", GLOBAL_ENVIRONMENT=jinja2.Environment(
    extensions=["jinja2.ext.i18n"]))
pkg = module("cms.grading.scoretypes")

def load(name):
    path = f"{cms_root}/cms/grading/scoretypes/{name}.py"
    spec = importlib.util.spec_from_file_location(
        f"cms.grading.scoretypes.{name}", path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = m
    spec.loader.exec_module(m)
    return m

abc = load("abc")
pkg.ScoreTypeGroup = abc.ScoreTypeGroup
GroupMin = load("GroupMin").GroupMin

task = json.load(open(task_path))
public = {c: (v["public"] if isinstance(v, dict) else v)
          for c, v in task["testcases"].items()}
st = GroupMin(task["score_type_parameters"], public)

class Obj:
    pass

dataset = Obj()
dataset.time_limit = task.get("time_limit")
tk = Obj()
tk.score_precision = task.get("score_precision", 0)
sub = Obj()
sub.task = tk

class Result:
    def __init__(self, evaluations):
        self.evaluations = evaluations
        self.submission = sub
    def evaluated(self):
        return True

out = sys.stdout
for line in open(jobs_path):
    job = json.loads(line)
    evs = []
    for codename, e in job["evaluations"].items():
        ev = Obj()
        ev.codename = codename
        ev.outcome = str(e["outcome"])  # CMS keeps outcomes as text
        ev.text = e.get("text")
        ev.execution_time = e.get("time")
        ev.execution_memory = e.get("memory")
        ev.dataset = dataset
        evs.append(ev)
    score, details, pscore, pdetails, ranking = st.compute_score(Result(evs))
    out.write(json.dumps({"submission": job["submission"], "score": score,
                          "score_details": details,
                          "public_score": pscore,
                          "public_score_details": pdetails,
                          "ranking_score_details": ranking}))
    out.write("\n")
'''


def timed(argv, stdin=None):
    t = time.perf_counter()
    with open(os.devnull, "w") as null:
        subprocess.run(argv, stdout=null, check=True, stdin=stdin)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cms", required=True, help="a checkout of cms-dev/cms")
    ap.add_argument("--tally", required=True)
    ap.add_argument("--bench-score", required=True)
    ap.add_argument("--jobs", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([a.bench_score, "--write", d, str(a.jobs)], check=True,
                       stdout=subprocess.DEVNULL)
        task, jobs = os.path.join(d, "bench.json"), os.path.join(d, "jobs.jsonl")
        side = os.path.join(d, "cms_side.py")
        with open(side, "w") as f:
            f.write(CMS_SIDE)
        # Both once first, and the same scores: CMS's total against
        # tally's "score" (rounding aside, as CMS rounds only for display).
        cms_out = subprocess.run([sys.executable, side, a.cms, task, jobs],
                                 check=True, capture_output=True,
                                 text=True).stdout.splitlines()
        tally_out = subprocess.run([a.tally, "score", "--task", task, jobs],
                                   check=True, capture_output=True,
                                   text=True).stdout.splitlines()
        if len(cms_out) != a.jobs or len(tally_out) != a.jobs:
            sys.exit(f"vs_cms: {len(cms_out)} CMS and {len(tally_out)} tally "
                     f"results for {a.jobs} jobs")
        differ = 0
        for c, t in zip(cms_out, tally_out):
            c, t = json.loads(c), json.loads(t)
            sc = sum(round(s["score_fraction"] * s["max_score"], 2)
                     for s in c["score_details"])
            if abs(round(sc, 2) - t["score"]) > 1e-9:
                differ += 1
        tally_s, cms_s = [], []
        for _ in range(a.runs):
            tally_s.append(timed([a.tally, "score", "--task", task, jobs]))
            cms_s.append(timed([sys.executable, side, a.cms, task, jobs]))
    mt, mc = statistics.median(tally_s), statistics.median(cms_s)
    print(f"jobs: {a.jobs} (GroupMin, 100 testcases in 5 subtasks, "
          f"evaluations as objects); {differ} scores differ")
    print("tally score: " + " ".join(f"{x:.3f}" for x in tally_s) +
          f" s; median {mt:.3f} s = {a.jobs / mt:,.0f} jobs/s")
    print("CMS GroupMin: " + " ".join(f"{x:.3f}" for x in cms_s) +
          f" s; median {mc:.3f} s = {a.jobs / mc:,.0f} jobs/s")
    print(f"tally / CMS: {mc / mt:.1f}x")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
