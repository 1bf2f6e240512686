#!/usr/bin/env python3
"""Checks tally's aggregation of raw LLM judge samples against the
reference's own: tests/evalspecs/judge_cases.jsonl holds random judge
declarations (every mode, one to three models, each consensus
aggregation, score scales, expect, sample limits) with random samples
(replies well and badly formed, failed calls, rankings right and wrong)
and what AgentClash's judge workflow functions made of them (run over the
samples as its workflow runs them over the calls it makes). Every member
of tally's judge result must equal the reference's, numbers exactly, but
for sample_count (tally counts the samples it considered; the reference
the calls it would have made) and the members tally adds
(ignored_samples, undeclared_model_samples).

All cases are scored by one `tally score --tasks DIR` run: one task per
case.

usage: python3 tests/judge_reference.py --tally build/tally

Standard library only.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ME = "11111111-1111-1111-1111-111111111111"
EXTRA = ("ignored_samples", "undeclared_model_samples")


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in EXTRA}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", required=True)
    ap.add_argument("--cases", default=os.path.join(
        HERE, "evalspecs", "judge_cases.jsonl"))
    args = ap.parse_args()
    cases = [json.loads(line) for line in open(args.cases, encoding="utf-8")]
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for i, c in enumerate(cases):
            spec = {
                "name": "e", "version_number": 1, "judge_mode": "hybrid",
                "validators": [{"key": "v", "type": "exact_match",
                                "target": "literal:a",
                                "expected_from": "literal:a"}],
                "llm_judges": [c["judge"]],
                "scorecard": {"dimensions": [
                    {"key": "q", "source": "llm_judge", "judge_key": "q"}]}}
            if c["limit"]:
                spec["scorecard"]["judge_limits"] = {
                    "max_samples_per_judge": c["limit"]}
            with open(os.path.join(tmp, "j%d.json" % i), "w") as f:
                json.dump({"name": "j%d" % i, "task_type": "agent_run",
                           "evaluation_spec": spec}, f)
            entry = {"judge_key": "q", "samples": c["samples"]}
            if "candidates" in c:
                entry["candidates"] = c["candidates"]
            jobs.append(json.dumps({
                "submission": "s%d" % i, "participant": "p",
                "task": "j%d" % i,
                "run": {"run_agent_id": ME, "events": []},
                "llm_judge_results": [entry]}))
        res = subprocess.run([args.tally, "score", "--tasks", tmp, "-"],
                             input="\n".join(jobs) + "\n",
                             capture_output=True, text=True)
    lines = res.stdout.splitlines()
    if len(lines) != len(cases):
        print("tally printed %d results for %d cases: %s" % (
            len(lines), len(cases), res.stderr[:500]))
        return 1
    problems = 0
    for i, (c, line) in enumerate(zip(cases, lines)):
        got = json.loads(line).get("details", {}).get("llm_judge_results")
        if not got:
            print("case %d: no judge result: %s" % (i, line[:300]))
            problems += 1
            continue
        got = strip(got[0])
        got.pop("sample_count", None)
        ref = c["reference"]
        bad = [k for k in sorted(set(got) | set(ref)) if got.get(k) != ref.get(k)]
        if bad:
            problems += 1
            if problems <= 10:
                print("case %d (%s):" % (i, json.dumps(c["judge"])))
                for k in bad:
                    print("  %s: tally %s, reference %s" % (
                        k, json.dumps(got.get(k))[:300],
                        json.dumps(ref.get(k))[:300]))
    print("%d judge cases: %d differences" % (len(cases), problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
