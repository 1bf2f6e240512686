#!/usr/bin/env python3
"""code_execution's test counts against the reference's own parser:
tests/evalspecs/code_counts.jsonl holds random test outputs (JSON objects,
JUnit XML with namespaces, trailing text and bad attributes, "N passed"
text, and mixtures) with what AgentClash's ParseCodeExecutionCounts
returned for each (passed, failed, errors, total, or null for none). A
record without counts gets them from its output in tally; each must equal
the reference's.

usage: code_counts_reference.py --tally PATH
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TASK = {"name": "t", "task_type": "agent_run", "evaluation_spec": {
    "name": "e", "version_number": 1, "judge_mode": "deterministic",
    "post_execution_checks": [{"key": "out", "type": "file_capture",
                               "path": "/o"}],
    "validators": [{"key": "v0", "type": "code_execution",
                    "target": "file:out",
                    "config": {"test_command": "pytest"}}],
    "scorecard": {"dimensions": ["correctness"]}}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", required=True)
    args = ap.parse_args()
    cases = [json.loads(line) for line in
             open(os.path.join(HERE, "evalspecs", "code_counts.jsonl"))]
    tmp = tempfile.mkdtemp(prefix="tally-counts-")
    task = os.path.join(tmp, "t.json")
    json.dump(TASK, open(task, "w"))
    jobs = []
    for i, c in enumerate(cases):
        rec = {"validator_key": "v0", "target": "file:out",
               "stdout": c["stdout"], "stderr": c["stderr"]}
        jobs.append(json.dumps({"submission": "s%d" % i, "participant": "p",
                                "task": "t", "run": {"events": [{
                                    "type": "grader.verification.code_executed",
                                    "sequence_number": 1,
                                    "occurred_at": "2026-01-01T00:00:00Z",
                                    "payload": rec}]}}))
    out = subprocess.run([args.tally, "score", "--task", task, "-"],
                         input="\n".join(jobs) + "\n", capture_output=True,
                         text=True).stdout.splitlines()
    bad = 0
    for c, line in zip(cases, out):
        raw = json.loads(line)["details"]["validator_results"][0]["raw_output"]
        got = [raw["passed_tests"], raw["failed_tests"], raw["error_tests"],
               raw["total_tests"]]
        want = c["reference"] if c["reference"] is not None else [None] * 4
        if got != want:
            bad += 1
            if bad <= 10:
                print("%r: tally %s, reference %s" % (c, got, want))
    if len(out) != len(cases):
        print("tally printed %d results for %d cases" % (len(out), len(cases)))
        bad += 1
    print("%d outputs: %d differences" % (len(cases), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
