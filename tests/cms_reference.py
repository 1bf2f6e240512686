#!/usr/bin/env python3
"""Differential test of tally against an independent model of CMS scoring.

The model below is written from a description of CMS's score types (Sum,
GroupMin, GroupMul, GroupThreshold), not from CMS's code. The script builds
random tasks and jobs from a seeded RNG, scores them all with a single
`tally score --tasks DIR` call, and compares every field of every result
exactly: floats bit for bit (including the sign of zero), strings and
booleans by value, integers and floats numerically.

It also checks a few invalid task configs (tally must exit 2) and invalid
jobs (tally must print an error line and exit 1).

usage: python3 tests/cms_reference.py --tally build/tally [--seed S] [--cases N]

Standard library only.
"""

import argparse
import functools
import json
import math
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import time

TIMED_OUT = "Execution timed out"

# ---------------------------------------------------------------------------
# The reference: CMS's scoring semantics.
# ---------------------------------------------------------------------------


class Eval:
    """One evaluation of a job: the outcome and what is echoed back."""

    __slots__ = ("outcome", "text", "time", "memory")

    def __init__(self, value):
        if isinstance(value, dict):
            self.outcome = value["outcome"]
            self.text = value.get("text")
            self.time = value.get("time")
            self.memory = value.get("memory")
        else:
            self.outcome = value
            self.text = self.time = self.memory = None


def tc_public(task, codename):
    v = task["testcases"][codename]
    if isinstance(v, dict):
        return v["public"]
    return v


def sum_label(this_score, p):
    if this_score <= 0:
        return "Not correct"
    if this_score >= p:
        return "Correct"
    return "Partially correct"


def ref_sum(task, job, evals):
    p = float(task["score_type_parameters"])
    precision = task.get("score_precision", 0)
    rounding = task.get("score_rounding", "subtask")
    codenames = sorted(task["testcases"])

    max_score = 0.0
    max_public = 0.0
    for c in codenames:
        max_score += p
        if tc_public(task, c):
            max_public += p

    score = 0.0
    public_score = 0.0
    details = []
    public_details = []
    if evals is not None:
        for c in codenames:
            ev = evals[c]
            this_score = float(ev.outcome) * p
            score += this_score
            pub = tc_public(task, c)
            if pub:
                public_score += this_score
            d = {
                "idx": c,
                "outcome": sum_label(this_score, p),
                "text": ev.text,
                "time": ev.time,
                "memory": ev.memory,
            }
            details.append(d)
            public_details.append(d if pub else {"idx": c})
        if rounding == "subtask":
            score = round(score, precision)
            public_score = round(public_score, precision)
    return {
        "score": score,
        "max_score": max_score,
        "public_score": public_score,
        "max_public_score": max_public,
        "details": details,
        "public_details": public_details,
        "ranking_details": [],
        "ranking_headers": [],
    }


def subtask_entry(task, entry):
    """Returns (max_score, targets, threshold, always_show) of one entry."""
    if isinstance(entry, dict):
        return (entry["max_score"], entry["testcases"], entry.get("threshold"),
                entry.get("always_show_testcases", False))
    threshold = entry[2] if len(entry) > 2 else None
    return entry[0], entry[1], threshold, False


def resolve_targets(task):
    """The testcases of each subtask, in subtask order."""
    codenames = sorted(task["testcases"])
    out = []
    start = 0
    for entry in task["score_type_parameters"]:
        _, t, _, _ = subtask_entry(task, entry)
        if isinstance(t, int):
            out.append(codenames[start:start + t])
            start += t
        elif isinstance(t, str):
            out.append([c for c in codenames if re.match(t, c)])
        else:
            out.append(list(t))
    return out


def unit_label(o, threshold):
    if o <= 0:
        return "Not correct"
    if o >= 1:
        return "Correct"
    return "Partially correct"


def threshold_label(o, threshold):
    return "Correct" if 0 < o <= threshold else "Not correct"


def reduce_min(outcomes, threshold):
    return min(outcomes)


def reduce_mul(outcomes, threshold):
    return functools.reduce(lambda x, y: x * y, outcomes)


def reduce_threshold(outcomes, threshold):
    return 1.0 if all(0 < o <= threshold for o in outcomes) else 0.0


GROUP_TYPES = {
    "GroupMin": (reduce_min, unit_label),
    "GroupMul": (reduce_mul, unit_label),
    "GroupThreshold": (reduce_threshold, threshold_label),
}


def ref_group(task, job, evals):
    reduce_fn, label_fn = GROUP_TYPES[task["score_type"]]
    precision = task.get("score_precision", 0)
    rounding = task.get("score_rounding", "subtask")
    time_limit = task.get("time_limit")
    targets = resolve_targets(task)
    entries = [subtask_entry(task, e) for e in task["score_type_parameters"]]

    max_score = 0.0
    max_public = 0.0
    headers = []
    all_public = []
    for i, ((st_max, _, _, _), target) in enumerate(zip(entries, targets)):
        ap = all(tc_public(task, c) for c in target)
        all_public.append(ap)
        max_score += st_max
        if ap:
            max_public += st_max
        headers.append("Subtask %d (%g)" % (i, st_max))

    if evals is None:
        return {
            "score": 0,
            "max_score": max_score,
            "public_score": 0,
            "max_public_score": max_public,
            "details": [],
            "public_details": [],
            "ranking_details": ["0"] * len(entries),
            "ranking_headers": headers,
        }

    details = []
    public_details = []
    ranking = []
    sum_rounded = 0
    sum_rounded_public = 0
    sum_raw = 0
    sum_raw_public = 0
    for i, ((st_max, _, threshold, always_show), target) in enumerate(
            zip(entries, targets)):
        testcases = []
        public_testcases = []
        lowest_pos = None
        lowest_outcome = None
        outcomes = []
        for k, c in enumerate(target):
            ev = evals[c]
            o = float(ev.outcome)
            outcomes.append(o)
            pub = tc_public(task, c)
            d = {
                "idx": c,
                "outcome": label_fn(o, threshold),
                "text": ev.text,
                "time": ev.time,
                "time_limit": time_limit,
                "time_limit_was_exceeded": ev.text == [TIMED_OUT],
                "memory": ev.memory,
                "show_in_restricted_feedback": pub,
                "show_in_oi_restricted_feedback": pub,
            }
            testcases.append(d)
            if pub:
                # The same object, so later flag changes show in both.
                public_testcases.append(d)
                if lowest_pos is None or o < lowest_outcome:
                    lowest_pos = k
                    lowest_outcome = o
            else:
                public_testcases.append({"idx": c})
        fraction = reduce_fn(outcomes, threshold)
        st_score = fraction * st_max
        rounded = round(st_score, precision)
        if lowest_pos is not None and fraction < 1.0 and not always_show:
            for k, (c, d) in enumerate(zip(target, testcases)):
                if tc_public(task, c):
                    d["show_in_restricted_feedback"] = k <= lowest_pos
                    d["show_in_oi_restricted_feedback"] = k == lowest_pos
        st = {
            "idx": i,
            "score_fraction": fraction,
            "score": rounded,
            "max_score": st_max,
            "testcases": testcases,
        }
        details.append(st)
        if all_public[i]:
            public_details.append(st)
        else:
            public_details.append({"idx": i, "testcases": public_testcases})
        sum_rounded += rounded
        sum_raw += st_score
        if all_public[i]:
            sum_rounded_public += rounded
            sum_raw_public += st_score
        ranking.append("%g" % (rounded if rounding == "subtask" else st_score))

    if rounding == "subtask":
        score = round(sum_rounded, precision)
        public_score = round(sum_rounded_public, precision)
    else:
        score = sum_raw
        public_score = sum_raw_public
    return {
        "score": score,
        "max_score": max_score,
        "public_score": public_score,
        "max_public_score": max_public,
        "details": details,
        "public_details": public_details,
        "ranking_details": ranking,
        "ranking_headers": headers,
    }


def reference(task, job):
    """The expected result of job on task."""
    if job.get("compilation") == "failed":
        evals = None
    else:
        evals = {c: Eval(v) for c, v in job["evaluations"].items()}
    if task["score_type"] == "Sum":
        body = ref_sum(task, job, evals)
    else:
        body = ref_group(task, job, evals)
    out = {}
    if "submission" in job:
        out["submission"] = job["submission"]
    out["task"] = task["name"]
    if "participant" in job:
        out["participant"] = job["participant"]
    out.update(body)
    return out


# ---------------------------------------------------------------------------
# Exact comparison.
# ---------------------------------------------------------------------------


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def same_number(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    fa, fb = float(a), float(b)
    if math.isnan(fa) or math.isnan(fb):
        return False
    return struct.pack("<d", fa) == struct.pack("<d", fb)


def diff(exp, act, path):
    """The first difference between exp and act, as (path, exp, act)."""
    if is_num(exp) and is_num(act):
        return None if same_number(exp, act) else (path, exp, act)
    if isinstance(exp, bool) or isinstance(act, bool) or exp is None \
            or act is None or isinstance(exp, str) or isinstance(act, str):
        if type(exp) is type(act) and exp == act:
            return None
        return (path, exp, act)
    if isinstance(exp, list) and isinstance(act, list):
        for i, (e, a) in enumerate(zip(exp, act)):
            d = diff(e, a, "%s[%d]" % (path, i))
            if d:
                return d
        if len(exp) != len(act):
            return ("%s (length)" % path, len(exp), len(act))
        return None
    if isinstance(exp, dict) and isinstance(act, dict):
        for k in exp:
            if k not in act:
                return ("%s.%s (missing)" % (path, k), exp[k], "<absent>")
            d = diff(exp[k], act[k], "%s.%s" % (path, k))
            if d:
                return d
        for k in act:
            if k not in exp:
                return ("%s.%s (unexpected)" % (path, k), "<absent>", act[k])
        return None
    return (path, exp, act)


FIELDS = ["submission", "task", "participant", "score", "max_score",
          "public_score", "max_public_score", "details", "public_details",
          "ranking_details", "ranking_headers"]


def compare_result(exp, act):
    """Returns None or (field, path, expected, actual)."""
    for f in FIELDS + [k for k in act if k not in FIELDS]:
        if f not in exp and f not in act:
            continue
        if f not in act:
            return (f, f, exp[f], "<absent>")
        if f not in exp:
            return (f, f, "<absent>", act[f])
        d = diff(exp[f], act[f], f)
        if d:
            return (f,) + d
    return None


# ---------------------------------------------------------------------------
# Random tasks and jobs.
# ---------------------------------------------------------------------------

SCORE_VALUES = [0, 1, 7, 10, 10.5, 33.3, 100 / 3, 12.345, 2.675, 0.1, 0.7,
                1e-3, 100, 1e9 / 7, 1 / 3, 40, 60, 25.5, 0.5, 1.005]

UNIT_OUTCOMES = [0, 1, 1.0, 0.0, 0.5, 1 / 3, 2 / 3, 0.1, 0.2, 0.7,
                 0.30000000000000004, 1e-7, 0.9999999999999999, 5e-324,
                 0.125, 0.005, 0.015, 0.045, 0.675, 0.25, 0.75, -0.0, 0.999,
                 0.001, 0.3]

THRESHOLDS = [0.5, 1, 1.0, 2.5, 1e-3, 0.1, 0.30000000000000004, 1 / 3, 2,
              10, 0.75]

TEXTS = [
    ["Output is correct"],
    ["Output isn't correct"],
    ["Output is partially correct"],
    [TIMED_OUT],
    [TIMED_OUT, "extra"],
    ["Execution killed (could be triggered by violating memory limits)"],
    ["%s", "caf\u00e9 \u2603 \U0001F600"],
    ["quote \" backslash \\ tab \t newline \n"],
    [],
    [""],
    ["execution timed out"],
    "Output is correct",
    TIMED_OUT,
    "",
    None,
]


def rand_float(rng):
    r = rng.random()
    k = rng.randrange(6)
    if k == 0:
        return r
    if k == 1:
        return round(r, rng.randint(1, 4))
    if k == 2:
        return rng.randint(0, 1000) / 1000
    if k == 3:
        return rng.randint(0, 8) / 8
    if k == 4:
        return 1 - r * 1e-9
    return r * 1e-6


def rand_max_score(rng):
    if rng.random() < 0.7:
        return rng.choice(SCORE_VALUES)
    if rng.random() < 0.5:
        return round(rng.random() * 100, rng.randint(0, 3))
    return rng.random() * 100


def gen_codenames(rng, n):
    style = rng.randrange(7)
    if style == 0:
        names = [str(i) for i in range(n)]
    elif style == 1:
        names = [str(i + 1) for i in range(n)]
    elif style == 2:
        names = ["%03d" % i for i in range(n)]
    elif style == 3:
        # Subtask-shaped: "1_01", "2_3", ...
        names = []
        g = 1
        while len(names) < n:
            for j in range(rng.randint(1, 6)):
                fmt = rng.choice(["%d_%d", "%d_%02d", "%d-%d", "s%d_%d"])
                names.append(fmt % (g, j))
            g += 1
        names = names[:n]
    elif style == 4:
        prefixes = ["small_", "big_", "a", "b", "c", "sample", "s1_", "s2_",
                    "Z", "large", "x.", "e\u0301", "\u00e4", "\u03a9_"]
        names = []
        while len(names) < n:
            names.append(rng.choice(prefixes) + str(rng.randrange(30)))
    elif style == 5:
        # Mixed widths: "2", "10", "001", "0010".
        names = []
        while len(names) < n:
            w = rng.randint(1, 4)
            names.append(str(rng.randrange(10 ** w)).zfill(
                rng.choice([1, w])))
    else:
        alphabet = "abc01_9XY"
        names = []
        while len(names) < n:
            names.append("".join(rng.choice(alphabet)
                                 for _ in range(rng.randint(1, 5))))
    out = []
    seen = set()
    for nm in names:
        while nm in seen:
            nm = nm + rng.choice("0123456789_ab")
        seen.add(nm)
        out.append(nm)
    return out


REGEX_CLASSES = [r".*", r"", r"\d", r"\d+$", r"[0-9]", r"[a-c]", r"\w*_\d",
                 r"(a|b)\d", r"[a-z]+", r"(?:0|1)", r"1", r"1_*", r"big_",
                 r"small", r"s\d_", r"0", r"00", r"1_", r"2", r"[^0]",
                 r"x\.", r".?1", r"\w", r"Z|a", r"[A-Z]"]


def gen_regexes(rng, codenames, nsub):
    pool = []
    for _ in range(12):
        c = rng.choice(codenames)
        cut = rng.randint(1, len(c))
        p = re.escape(c[:cut])
        if cut == len(c) and rng.random() < 0.5:
            p += "$"
        pool.append(p)
    pool.extend(rng.sample(REGEX_CLASSES, 10))
    good = [p for p in pool if any(re.match(p, c) for c in codenames)]
    return [rng.choice(good) for _ in range(nsub)]


def gen_task(rng, name):
    kind = rng.choice(["Sum", "GroupMin", "GroupMul", "GroupThreshold"])
    if rng.random() < 0.5:
        n = rng.randint(1, 8)
    else:
        n = rng.randint(1, 30)
    codenames = gen_codenames(rng, n)
    pub_mode = rng.randrange(4)
    testcases = {}
    for c in codenames:
        if pub_mode == 0:
            pub = True
        elif pub_mode == 1:
            pub = False
        else:
            pub = rng.random() < 0.5
        testcases[c] = {"public": pub} if rng.random() < 0.2 else pub
    order = list(testcases.items())
    rng.shuffle(order)
    task = {"name": name, "score_type": kind}
    if kind == "Sum":
        params = rand_max_score(rng)
    else:
        params = gen_group_params(rng, kind, codenames)
    task["score_type_parameters"] = params
    task["testcases"] = dict(order)
    if rng.random() < 0.8:
        task["score_precision"] = rng.randint(0, 10)
    r = rng.random()
    if r < 0.4:
        task["score_rounding"] = "subtask"
    elif r < 0.8:
        task["score_rounding"] = "none"
    if rng.random() < 0.6:
        task["time_limit"] = rng.choice([1, 1.0, 0.5, 2.5, 0.1, 3,
                                         round(rng.random() * 5 + 0.01, 3)])
    return task


def gen_group_params(rng, kind, codenames):
    n = len(codenames)
    nsub = rng.randint(1, 6)
    form = rng.choice(["count", "regex", "list"])
    if form == "count":
        nsub = min(nsub, n)
        total = n if rng.random() < 0.7 else rng.randint(nsub, n)
        cuts = sorted(rng.sample(range(1, total), nsub - 1))
        bounds = [0] + cuts + [total]
        targets = [bounds[i + 1] - bounds[i] for i in range(nsub)]
    elif form == "regex":
        targets = gen_regexes(rng, codenames, nsub)
    else:
        targets = []
        ordered = sorted(codenames)
        for _ in range(nsub):
            k = rng.randint(1, min(n, 8))
            sub = rng.sample(codenames, k)
            if rng.random() < 0.4:
                sub.sort()
            if rng.random() < 0.2:
                # A disjoint consecutive slice, as a list.
                start = rng.randrange(n)
                sub = ordered[start:start + k]
            targets.append(sub)
    params = []
    for t in targets:
        ms = rand_max_score(rng)
        th = rng.choice(THRESHOLDS) if kind == "GroupThreshold" else None
        if rng.random() < 0.25:
            e = {"testcases": t, "max_score": ms}
            if th is not None:
                e["threshold"] = th
            if rng.random() < 0.5:
                e["always_show_testcases"] = rng.random() < 0.5
            items = list(e.items())
            rng.shuffle(items)
            params.append(dict(items))
        else:
            params.append([ms, t] if th is None else [ms, t, th])
    return params


def task_thresholds(task):
    out = []
    if task["score_type"] == "GroupThreshold":
        for e in task["score_type_parameters"]:
            out.append(e["threshold"] if isinstance(e, dict) else e[2])
    return out


def gen_outcome(rng, task, profile):
    if task["score_type"] == "GroupThreshold":
        ths = task_thresholds(task)
        r = rng.random()
        if profile == "good" and r < 0.8:
            th = rng.choice(ths)
            return rng.choice([th, th / 2, min(ths), 1e-9])
        if r < 0.3:
            th = rng.choice(ths)
            return rng.choice([th, math.nextafter(th, math.inf),
                               math.nextafter(th, 0), th * 0.999, th * 2])
        return rng.choice([0, -0.0, -1, -1e-9, 0.5, 1, 1.5, 100, 1e300,
                           -1e300, 5e-324, rng.random() * 2, 0.1, 0.25])
    if profile == "good":
        return 1 if rng.random() < 0.9 else rng.choice(UNIT_OUTCOMES)
    if profile == "bad":
        return 0 if rng.random() < 0.8 else rng.choice(UNIT_OUTCOMES)
    if rng.random() < 0.6:
        return rng.choice(UNIT_OUTCOMES)
    return rand_float(rng)


def gen_id(rng, prefix):
    r = rng.random()
    if r < 0.15:
        return rng.randint(0, 10 ** 9)
    if r < 0.2:
        # Number ids are integers below 2^53 (issue 10).
        return rng.choice([-3, 0, 2 ** 52, 2 ** 53 - 1])
    if r < 0.25:
        return prefix + "-\u00fc\u00df \"q\""
    return "%s-%d" % (prefix, rng.randint(0, 99999))


def gen_job(rng, task, k):
    job = {}
    keys = ["submission", "task", "participant"]
    rng.shuffle(keys)
    for key in keys:
        if key == "submission":
            job[key] = gen_id(rng, "s%d" % k)
        elif key == "task":
            job[key] = task["name"]
        else:
            job[key] = gen_id(rng, "p")
    if rng.random() < 0.05:
        job["compilation"] = "failed"
        return job
    if rng.random() < 0.1:
        job["compilation"] = "ok"
    if rng.random() < 0.05:
        job["extra_platform_field"] = {"ignored": [1, 2]}
    profile = rng.choice(["good", "bad", "mixed", "mixed"])
    evals = []
    for c in task["testcases"]:
        o = gen_outcome(rng, task, profile)
        if rng.random() < 0.5:
            evals.append((c, o))
            continue
        ev = {"outcome": o}
        if rng.random() < 0.7:
            ev["text"] = rng.choice(TEXTS)
        if rng.random() < 0.6:
            ev["time"] = rng.choice([0, 0.0, 0.12, 1.5, None,
                                     round(rng.random() * 3, 3),
                                     rng.random()])
        if rng.random() < 0.6:
            ev["memory"] = rng.choice([0, 2048, 4096, None, 123456789,
                                       2 ** 40, 65536.5])
        items = list(ev.items())
        rng.shuffle(items)
        evals.append((c, dict(items)))
    rng.shuffle(evals)
    job["evaluations"] = dict(evals)
    return job


# ---------------------------------------------------------------------------
# Invalid configs and jobs.
# ---------------------------------------------------------------------------


def invalid_tasks():
    tcs = {"1_a": True, "1_b": False, "2_a": True}
    base = {"name": "bad", "score_type": "GroupMin", "testcases": tcs}

    def t(**kw):
        d = dict(base)
        d.update(kw)
        return d

    return [
        ("regex matches nothing",
         t(score_type_parameters=[[50, "1_"], [50, "3_"]])),
        ("counts exceed the testcases",
         t(score_type_parameters=[[50, 2], [50, 2]])),
        ("count is zero", t(score_type_parameters=[[50, 0], [50, 3]])),
        ("count is fractional", t(score_type_parameters=[[50, 1.5]])),
        ("list names an unknown testcase",
         t(score_type_parameters=[[50, ["1_a", "9_z"]]])),
        ("mixed forms", t(score_type_parameters=[[50, 1], [50, "2_"]])),
        ("regex does not compile", t(score_type_parameters=[[50, "("]])),
        ("negative max score", t(score_type_parameters=[[-1, 3]])),
        ("no subtasks", t(score_type_parameters=[])),
        ("score_precision 11",
         t(score_type_parameters=[[50, 3]], score_precision=11)),
        ("score_precision -1",
         t(score_type_parameters=[[50, 3]], score_precision=-1)),
        ("score_rounding unknown",
         t(score_type_parameters=[[50, 3]], score_rounding="half")),
        ("time_limit 0", t(score_type_parameters=[[50, 3]], time_limit=0)),
        ("unknown score type",
         t(score_type="GroupMedian", score_type_parameters=[[50, 3]])),
        ("threshold missing",
         t(score_type="GroupThreshold", score_type_parameters=[[50, 3]])),
        ("threshold zero",
         t(score_type="GroupThreshold", score_type_parameters=[[50, 3, 0]])),
        ("Sum with a negative parameter",
         t(score_type="Sum", score_type_parameters=-1)),
        ("Sum with a list", t(score_type="Sum", score_type_parameters=[1])),
        ("no testcases", t(testcases={}, score_type_parameters=[[50, 1]])),
        ("testcase flag not a bool",
         t(testcases={"1": "yes"}, score_type_parameters=[[50, 1]])),
        ("name missing",
         {"score_type": "Sum", "score_type_parameters": 1,
          "testcases": {"1": True}}),
    ]


def invalid_jobs():
    """Jobs on the task below that tally must reject with an error line."""
    task = {"name": "strict", "score_type": "GroupMin",
            "score_type_parameters": [[100, 2]],
            "testcases": {"a": True, "b": False}}
    jobs = [
        {"submission": "x1", "task": "strict",
         "evaluations": {"a": 1.5, "b": 1}},
        {"submission": "x2", "task": "strict",
         "evaluations": {"a": -0.1, "b": 1}},
        {"submission": "x3", "task": "strict", "evaluations": {"a": 1}},
        {"submission": "x4", "task": "strict",
         "evaluations": {"a": 1, "b": 1, "c": 1}},
        {"submission": "x5", "task": "strict",
         "evaluations": {"a": "1", "b": 1}},
        {"submission": "x6", "task": "strict", "compilation": "failed",
         "evaluations": {"a": 1, "b": 1}},
        {"submission": "x7", "task": "nosuchtask",
         "evaluations": {"a": 1, "b": 1}},
        {"submission": "x8", "task": "strict",
         "evaluations": {"a": {"outcome": 1, "score": 3}, "b": 1}},
    ]
    return task, jobs


# ---------------------------------------------------------------------------
# Driver.
# ---------------------------------------------------------------------------


def short(v, limit=3000):
    s = json.dumps(v, ensure_ascii=False)
    return s if len(s) <= limit else s[:limit] + "... (%d chars)" % len(s)


def run_tally(tally, args, stdin=None, timeout=120):
    return subprocess.run([tally] + args, input=stdin, capture_output=True,
                          timeout=timeout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tally", required=True, help="the tally binary")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--cases", type=int, default=10000,
                    help="number of random jobs to score (default 10000)")
    ap.add_argument("--show", type=int, default=5,
                    help="how many mismatches to print in detail")
    ap.add_argument("--keep", metavar="DIR",
                    help="write the generated tasks and jobs here")
    args = ap.parse_args()

    started = time.monotonic()
    rng = random.Random(args.seed)
    passed = 0
    failures = []  # message lines of each mismatch
    kinds = {}  # mismatch path, indices elided -> count

    def fail(lines):
        failures.append(lines)

    with tempfile.TemporaryDirectory(prefix="cms_reference.") as tmp:
        work = args.keep or tmp
        os.makedirs(os.path.join(work, "tasks"), exist_ok=True)
        for name in os.listdir(os.path.join(work, "tasks")):
            if name.endswith(".json"):  # from an earlier --keep run
                os.remove(os.path.join(work, "tasks", name))

        # Random tasks, about four jobs each, all in one tally call.
        tasks = []
        jobs = []  # (task, job, line)
        k = 0
        while len(jobs) < args.cases:
            task = gen_task(rng, "t%05d" % len(tasks))
            tasks.append(task)
            with open(os.path.join(work, "tasks", task["name"] + ".json"),
                      "w", encoding="utf-8") as f:
                json.dump(task, f, ensure_ascii=rng.random() < 0.5)
            for _ in range(rng.randint(1, 8)):
                if len(jobs) >= args.cases:
                    break
                job = gen_job(rng, task, k)
                k += 1
                line = json.dumps(job, ensure_ascii=rng.random() < 0.5)
                jobs.append((task, job, line))
        jobs_path = os.path.join(work, "jobs.jsonl")
        with open(jobs_path, "w", encoding="utf-8") as f:
            for _, _, line in jobs:
                f.write(line + "\n")

        proc = run_tally(args.tally, ["score", "--tasks",
                                      os.path.join(work, "tasks"), jobs_path])
        out_lines = proc.stdout.decode("utf-8", "replace").splitlines()
        if proc.returncode != 0:
            fail(["tally exited %d on the random batch; stderr:" %
                  proc.returncode,
                  proc.stderr.decode("utf-8", "replace")[:3000]])
        if len(out_lines) != len(jobs):
            fail(["tally printed %d lines for %d jobs" %
                  (len(out_lines), len(jobs))])
        for i, (task, job, line) in enumerate(jobs):
            if i >= len(out_lines):
                break
            exp = reference(task, job)
            try:
                act = json.loads(out_lines[i])
            except ValueError as e:
                fail(["job %d: tally printed invalid JSON (%s)" % (i, e),
                      "  task:   " + short(task),
                      "  job:    " + line,
                      "  output: " + out_lines[i][:3000]])
                continue
            d = compare_result(exp, act)
            if d is None:
                passed += 1
                continue
            field, path, e, a = d
            kinds[re.sub(r"\[\d+\]", "[]", path)] = kinds.get(
                re.sub(r"\[\d+\]", "[]", path), 0) + 1
            fail(["job %d: field %s differs at %s" % (i, field, path),
                  "  task:     " + short(task),
                  "  job:      " + line,
                  "  expected: " + short(e),
                  "  actual:   " + short(a),
                  "  expected %s: %s" % (field, short(exp.get(field))),
                  "  actual %s:   %s" % (field, short(act.get(field)))])

        # The shipped examples, when they are next to this script.
        examples = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "examples")
        ex_jobs = os.path.join(examples, "jobs.jsonl")
        if os.path.isfile(ex_jobs):
            ex_tasks = {}
            for name in sorted(os.listdir(os.path.join(examples, "tasks"))):
                if name.endswith(".json"):
                    with open(os.path.join(examples, "tasks", name),
                              encoding="utf-8") as f:
                        t = json.load(f)
                    ex_tasks[t["name"]] = t
            with open(ex_jobs, encoding="utf-8") as f:
                ex_lines = [ln.strip() for ln in f if ln.strip()]
            proc = run_tally(args.tally, ["score", "--tasks",
                                          os.path.join(examples, "tasks"),
                                          ex_jobs])
            outs = proc.stdout.decode("utf-8", "replace").splitlines()
            for i, line in enumerate(ex_lines):
                job = json.loads(line)
                task = ex_tasks[job["task"]]
                exp = reference(task, job)
                act = json.loads(outs[i]) if i < len(outs) else {}
                d = compare_result(exp, act)
                if d is None:
                    passed += 1
                else:
                    fail(["example job %d: field %s differs at %s"
                          % (i, d[0], d[1]),
                          "  task:     " + short(task),
                          "  job:      " + line,
                          "  expected: " + short(d[2]),
                          "  actual:   " + short(d[3])])

        # Invalid configs: tally must refuse them with exit status 2.
        for what, task in invalid_tasks():
            path = os.path.join(work, "invalid.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(task, f)
            proc = run_tally(args.tally, ["score", "--task", path],
                             stdin=b"")
            if proc.returncode == 2 and proc.stderr.strip():
                passed += 1
            else:
                fail(["invalid config (%s): tally exited %d, expected 2"
                      % (what, proc.returncode),
                      "  task:   " + short(task),
                      "  stderr: " + proc.stderr.decode("utf-8", "replace")])

        # Invalid jobs: an error line each, exit status 1.
        task, bad = invalid_jobs()
        path = os.path.join(work, "strict.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(task, f)
        text = "".join(json.dumps(j) + "\n" for j in bad)
        proc = run_tally(args.tally, ["score", "--task", path],
                         stdin=text.encode())
        lines = proc.stdout.decode("utf-8", "replace").splitlines()
        for i, job in enumerate(bad):
            act = None
            if i < len(lines):
                try:
                    act = json.loads(lines[i])
                except ValueError:
                    pass
            if (isinstance(act, dict) and set(act) == {"submission", "error"}
                    and act["submission"] == job["submission"]
                    and isinstance(act["error"], str) and act["error"]):
                passed += 1
            else:
                fail(["invalid job: expected an error line",
                      "  task:   " + short(task),
                      "  job:    " + json.dumps(job),
                      "  actual: " + (lines[i] if i < len(lines)
                                      else "<no line>")])
        if proc.returncode != 1:
            fail(["invalid jobs: tally exited %d, expected 1"
                  % proc.returncode])

    for lines in failures[:args.show]:
        print("MISMATCH " + "\n".join(lines))
        print()
    if len(failures) > args.show:
        print("(%d more mismatches not shown)" % (len(failures) - args.show))
    for path, n in sorted(kinds.items(), key=lambda kv: -kv[1]):
        print("mismatches at %s: %d" % (path, n))
    print("seed %d: %d tasks, %d random jobs, %.1fs"
          % (args.seed, len(tasks), len(jobs), time.monotonic() - started))
    print("cms_reference: %d passed, %d failed" % (passed, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
