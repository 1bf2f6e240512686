#!/usr/bin/env python3
"""By hand (CI has no copy of NeMo Evaluator): compares tally's reading of
a judge's score with NeMo Evaluator's own parse_judge_response, on random
replies.

usage: judge_nemo_reference.py NEMO_JUDGE_PY TALLY [N] [SEED]

NEMO_JUDGE_PY is src/nemo_evaluator/scoring/judge.py of NVIDIA-NeMo/
Evaluator (only its parse_judge_response is used, loaded without the rest
of the package). TALLY is build/tally. Each reply becomes a job of a task
with the rule "score" (max_score 5) carrying the reply as its verdict;
`tally score` gives the reward, which must equal NeMo's "normalized"
(clamped to [0, 1]: tally's outcomes are), and a reply NeMo marks
parse_error must be unparseable in tally. Prints the differences and
exits 1 when there is one."""
import json
import logging
import os
import random
import re
import subprocess
import sys
import tempfile
import types

src = open(sys.argv[1]).read()
src = src.replace("from nemo_evaluator.scoring.types import ScorerInput",
                  "ScorerInput = object")
mod = types.ModuleType("nemo_judge")
sys.modules["nemo_judge"] = mod
exec(compile(src, sys.argv[1], "exec"), mod.__dict__)
parse = mod.parse_judge_response
logging.disable(logging.CRITICAL)
tally = sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)

bits = ['"score"', ':', ' ', '4', '3.5', '7', '-2', '0', '/', '5', '10',
        '{', '}', '"reasoning"', '"ok"', ',', 'score', 'I give it', '\n',
        '"4"', 'true', 'null', '[', ']', '.', '12', 'x', 'é', '"2.5 "', '\u0663', '\u0968', '\u00a0', '\u2003']


def reply():
    if rng.random() < 0.3:
        v = rng.choice([4, 3.5, 7, -1, 0, "4", " 2.5 ", True, None, [1]])
        return json.dumps({"score": v, "reasoning": "r"}) + rng.choice(
            ["", " ", " trailing"])
    return "".join(rng.choice(bits) for _ in range(rng.randint(0, 12)))


replies = [reply() for _ in range(n)]
with tempfile.TemporaryDirectory() as d:
    os.mkdir(os.path.join(d, "tasks"))
    with open(os.path.join(d, "tasks", "s.json"), "w") as f:
        json.dump({"name": "s", "task_type": "output_only",
                   "score_type": "Sum", "score_type_parameters": 1,
                   "score_precision": 10, "testcases": {"a": True},
                   "from_job": {"target": "t", "question": "q"},
                   "judge": {"rule": "score", "max_score": 5}}, f)
    jobs = os.path.join(d, "jobs.jsonl")
    with open(jobs, "w") as f:
        for i, r in enumerate(replies):
            f.write(json.dumps({"submission": str(i), "participant": "m",
                                "task": "s", "t": "x", "q": "q",
                                "evaluations": {"a": "x"},
                                "judge": {"reply": r}}) + "\n")
    out = subprocess.run([tally, "score", "--tasks",
                          os.path.join(d, "tasks"), jobs],
                         capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(out.stderr)
    out = out.stdout

diffs = 0
for r, line in zip(replies, out.splitlines()):
    res = json.loads(line)
    text = res["details"][0]["text"][0]
    unparseable = text.startswith("The judge's reply gave no verdict")
    try:
        want = parse(r, 5)
    except Exception as e:  # NeMo raises (TypeError): tally falls through
        want = {"error": repr(e)}
    if "error" in want:
        continue
    if want.get("parse_error"):
        ok = unparseable
    else:
        ok = (not unparseable and
              abs(res["score"] - min(max(want["normalized"], 0), 1)) < 1e-9)
    if not ok:
        diffs += 1
        if diffs <= 20:
            print(f"reply {r!r}: NeMo {want.get('normalized')} "
                  f"(parse_error {want.get('parse_error', False)}), "
                  f"tally {res['score']} ({text})")
print(f"{n} replies, {diffs} differences")
sys.exit(1 if diffs else 0)
