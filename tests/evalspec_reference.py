#!/usr/bin/env python3
"""Checks tally's agent_run scoring against the reference engine's own
answers: tests/evalspecs/reference_cases.jsonl holds random evaluation specs
and runs (some with LLM judge results) with what AgentClash's scoring
engine returned for each (or that it refused the spec). Every field of tally's evaluation object (the result's
"details") must equal the reference's, numbers exactly; a spec the reference
refused must be refused by `tally check` (exit 2), and one it accepted must
be accepted.

Regex syntax errors are reported in PCRE2's words, not Go's, so for those
only the "invalid regex pattern:" prefix is compared.

usage: python3 tests/evalspec_reference.py --tally build/tally

Standard library only.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def regex_reason(a, b):
    p = "invalid regex pattern:"
    return (isinstance(a, str) and isinstance(b, str) and p in a and p in b
            and a.split(p)[0] == b.split(p)[0])


def diff(a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                out.append("%s.%s: missing in tally" % (path, k))
            elif k not in b:
                out.append("%s.%s: only in tally" % (path, k))
            else:
                diff(a[k], b[k], path + "." + k, out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append("%s: %d items, reference %d" % (path, len(a), len(b)))
            return
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, "%s[%d]" % (path, i), out)
    elif a != b or isinstance(a, bool) != isinstance(b, bool):
        if not regex_reason(a, b):
            out.append("%s: tally %s, reference %s" % (
                path, json.dumps(a)[:200], json.dumps(b)[:200]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", required=True)
    ap.add_argument("--cases", default=os.path.join(
        HERE, "evalspecs", "reference_cases.jsonl"))
    args = ap.parse_args()
    cases = [json.loads(l) for l in open(args.cases, encoding="utf-8")]
    problems = []
    with tempfile.TemporaryDirectory(prefix="tally-evalspec-") as tmp:
        accepted = os.path.join(tmp, "accepted")
        os.mkdir(accepted)
        jobs = []
        for i, c in enumerate(cases):
            task = {"name": "t%d" % i, "task_type": "agent_run",
                    "max_score": 100, "evaluation_spec": c["spec"]}
            refused = c["reference"].get("refused", False)
            path = os.path.join(tmp if refused else accepted, "t%d.json" % i)
            with open(path, "w", encoding="utf-8") as f:
                json.dump(task, f, ensure_ascii=False)
            if refused:
                r = subprocess.run([args.tally, "check", path],
                                   capture_output=True, text=True)
                if r.returncode != 2:
                    problems.append("case %d: the reference refused the spec, "
                                    "tally check exited %d" % (i, r.returncode))
            else:
                job = {"submission": "s%d" % i, "task": "t%d" % i,
                       "participant": "p", "run": c["run"]}
                if "llm_judge_results" in c:
                    job["llm_judge_results"] = c["llm_judge_results"]
                jobs.append((i, job))
        jpath = os.path.join(tmp, "jobs.jsonl")
        with open(jpath, "w", encoding="utf-8") as f:
            for _, j in jobs:
                f.write(json.dumps(j) + "\n")
        r = subprocess.run([args.tally, "score", "--tasks", accepted, jpath],
                           capture_output=True, text=True)
        if r.returncode == 2:
            print("tally refused a spec the reference accepted:\n" + r.stderr)
            return 1
        lines = r.stdout.splitlines()
        if len(lines) != len(jobs):
            print("tally printed %d lines for %d jobs" % (len(lines), len(jobs)))
            return 1
        for (i, _), line in zip(jobs, lines):
            got = json.loads(line)
            if "details" not in got:
                problems.append("case %d: %s" % (i, line[:300]))
                continue
            out = []
            diff(got["details"], cases[i]["reference"], "", out)
            problems.extend("case %d: %s" % (i, o) for o in out[:5])
    for p in problems[:40]:
        print(p)
    print("%d cases (%d scored, %d refused by the reference): %d differences"
          % (len(cases), len(jobs), len(cases) - len(jobs), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
