#!/usr/bin/env python3
"""Differential test of tally's challenge scoring against an independent
model written from the definitions in docs/challenges.md (the issue's
text): the primitives, the weighted total, rounding, win/draw/loss, the
public score, the warnings, and Elo ratings.

The script builds random answer tasks and matches from a seeded RNG,
scores them all with one `tally score --tasks DIR` call and compares every
result: scores bit for bit, the breakdown of every dimension, the result,
the warnings (severity, field, dimension, in order) and the number of
constraint violations; a job the model calls a job error must be an error
line. Then `tally score --elo` on the same jobs must print the ratings the
model's own replay gives.

usage: python3 tests/challenge_reference.py --tally build/tally [--seed S]
       [--cases N]

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

CORE_LABELS = {
    "correctness": "Correctness",
    "completeness": "Completeness",
    "precision": "Precision",
    "methodology": "Methodology",
    "speed": "Speed",
    "code_quality": "Code Quality",
    "analysis": "Analysis",
}
DIFFICULTY = {"newcomer": 800, "contender": 1000, "veteran": 1200,
              "legendary": 1400}
FIELD_PRIMITIVES = ("exact_match", "exact_match_ratio", "numeric_tolerance",
                    "fuzzy_string", "coverage_ratio", "set_overlap")


def kind(v):
    """The JSON type of a decoded value (a bool is never a number)."""
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"


def equal(a, b):
    """exact_match equality."""
    ka, kb = kind(a), kind(b)
    if ka != kb:
        return False
    if ka == "number":
        return float(a) == float(b)
    if ka == "array":
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if ka == "object":
        return set(a) == set(b) and all(equal(a[k], b[k]) for k in a)
    return a == b


def distinct(items):
    out = []
    for x in items:
        if not any(equal(x, y) for y in out):
            out.append(x)
    return out


def lev(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1,
                           prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def norm(s):
    # The generator only uses characters whose simple case folding is
    # their lowercase; white space is Python's str.isspace.
    return " ".join(s.lower().split())


def reads(prim, v):
    """Whether primitive prim reads value v (of the answer or the truth)."""
    if prim == "exact_match":
        return True
    if prim in ("exact_match_ratio", "coverage_ratio", "set_overlap"):
        return kind(v) == "array"
    if prim == "numeric_tolerance":
        return kind(v) == "number" or (
            kind(v) == "array" and all(kind(x) == "number" for x in v))
    if prim == "fuzzy_string":
        return kind(v) == "string"
    raise AssertionError(prim)


def field_score(dim, a, t):
    """(score, warning or None) of a field primitive on answer a, truth t."""
    p = dim["primitive"]
    if p == "exact_match":
        return (1000.0 if equal(a, t) else 0.0), None
    if p == "exact_match_ratio":
        if len(t) == 0:
            return (1000.0 if len(a) == 0 else 0.0), None
        correct = sum(1 for x, y in zip(a, t) if equal(x, y))
        return correct / len(t) * 1000, None
    if p == "numeric_tolerance":
        tol = dim.get("tolerance", 0.01)
        if (kind(a) == "number") != (kind(t) == "number"):
            return 0.0, "error"
        if kind(a) == "number":
            return (1000.0 if abs(a - t) <= tol else 0.0), None
        if len(a) != len(t):
            return 0.0, None
        ok = all(abs(x - y) <= tol for x, y in zip(a, t))
        return (1000.0 if ok else 0.0), None
    if p == "fuzzy_string":
        x, y = norm(a), norm(t)
        if not x and not y:
            return 1000.0, None
        sim = 1 - lev(x, y) / max(len(x), len(y))
        return sim * 1000, None
    if p == "coverage_ratio":
        b = distinct(t)
        if not b:
            return 1000.0, None
        covered = sum(1 for y in b if any(equal(x, y) for x in a))
        return covered / len(b) * 1000, None
    if p == "set_overlap":
        sa, sb = distinct(a), distinct(t)
        both = sum(1 for x in sa if any(equal(x, y) for y in sb))
        if not sa and not sb:
            return 1000.0, None
        if dim.get("method", "intersection") == "jaccard":
            return both / (len(sa) + len(sb) - both) * 1000, None
        return (both / len(sb) * 1000 if sb else 0.0), None
    raise AssertionError(p)


class JobError(Exception):
    pass


def score_match(task, job):
    """The model's result: dict of score, public_score, max_public_score,
    result, breakdown {name: (score, weight, weighted)}, warnings
    [(severity, field, dimension)], violations (a count). Raises JobError
    when the match cannot be scored."""
    answer = job["answer"]
    truth = dict(task.get("ground_truth", {}))
    truth.update(job.get("ground_truth", {}))
    fmt = task.get("answer_format", {})
    warnings = []
    for f, spec in fmt.items():
        v = answer.get(f)
        if f not in answer and spec["required"]:
            warnings.append(("error", f, None))
        elif f in answer and kind(v) != spec["type"]:
            warnings.append(("error" if spec["required"] else "warning", f,
                             None))
    scores = []
    cons = task.get("constraints", {})
    for dim in task["scoring"]["dimensions"]:
        p, name = dim["primitive"], dim["name"]
        s = 0.0
        if p in FIELD_PRIMITIVES:
            tf = dim["ground_truth_field"]
            if tf not in truth or not reads(p, truth[tf]):
                raise JobError(tf)
            f = dim["field"]
            spec = fmt.get(f)
            if f not in answer or not reads(p, answer[f]):
                warnings.append(("error", f, name))
            elif spec and spec["required"] and kind(answer[f]) != spec["type"]:
                pass  # answer_format said so already: it scores 0
            else:
                s, w = field_score(dim, answer[f], truth[tf])
                if w:
                    warnings.append((w, f, name))
        elif p == "time_decay":
            if "time_used" not in job:
                warnings.append(("error", "time_used", name))
            elif job["time_used"] <= 0:
                s = 1000.0
            else:
                s = max(0.0, 1000 * (1 - job["time_used"] / dim["time_limit_secs"]))
        else:
            usage = job.get("usage")
            if not job.get("verified", False) or usage is None:
                warnings.append(("warning", "usage" if usage is None
                                 else "verified", name))
            elif p == "token_efficiency":
                used = usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
                s = max(0.0, 1 - used / cons["token_budget"]) * 1000
            else:
                s = max(0.0, 1 - usage.get("llm_calls", 0) / cons["max_llm_calls"]) * 1000
        scores.append(s)
    read = {d.get("field") for d in task["scoring"]["dimensions"]} | set(fmt)
    for k in answer:
        if k not in read:
            warnings.append(("warning", k, None))
    violations = 0
    usage = job.get("usage")
    if "time_limit_secs" in cons and "time_used" in job and \
            job["time_used"] > cons["time_limit_secs"]:
        violations += 1
    if usage is not None:
        used = usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
        if "token_budget" in cons and used > cons["token_budget"]:
            violations += 1
        if "max_llm_calls" in cons and \
                usage.get("llm_calls", 0) > cons["max_llm_calls"]:
            violations += 1
    total = pub = 0.0
    pub_weight = 0.0
    breakdown = {}
    for dim, s in zip(task["scoring"]["dimensions"], scores):
        w = dim["weight"]
        total += s * w
        if dim.get("public", True):
            pub += s * w
            pub_weight += w
        breakdown[dim["name"]] = (s, w, s * w)
    prec = task.get("score_precision", 0)
    score = rnd(min(1000.0, total), prec)
    win = task.get("win_threshold", 700)
    draw = task.get("draw_threshold", 400)
    result = "win" if score >= win else "draw" if score >= draw else "loss"
    return {"score": score, "public_score": rnd(min(1000.0, pub), prec),
            "max_public_score": pub_weight * 1000, "result": result,
            "breakdown": breakdown, "warnings": warnings,
            "violations": violations}


def rnd(x, n):
    """tally's rounding: "%.*f" then back to a double."""
    return float("%.*f" % (n, x))


def elo_replay(matches):
    """matches: (timestamp, submission, S, opponent, verified, attempt,
    memoryless). Returns (rating, matches, wins, draws, losses)."""
    r, n, w, d, l = 1000, 0, 0, 0, 0
    for ts, sid, s, opp, ver, att, mem in sorted(
            matches, key=lambda m: (m[0], m[1].encode())):
        e = 1 / (1 + 10 ** ((opp - r) / 400))
        k = 32 if n < 30 else 16
        change = math.floor(r + k * (s - e) + 0.5) - r
        if ver and change > 0:
            change = math.floor(change * (1.2 if att == 1 and mem else 1.1) + 0.5)
        r = max(100, r + change)
        n += 1
        if s == 1:
            w += 1
        elif s == 0.5:
            d += 1
        else:
            l += 1
    return r, n, w, d, l


# ---------------------------------------------------------------------------
# Random challenges and matches.
# ---------------------------------------------------------------------------

CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" \
        "àéîõüÀÉÎÕÜжЖяЯ.,-"
SPACES = [" ", "  ", "\t", "\n", "\u00a0", "\u2003", "\u3000"]


def rand_string(rng, maxlen=12):
    out = []
    for _ in range(rng.randint(0, maxlen)):
        out.append(rng.choice(SPACES) if rng.random() < 0.15
                   else rng.choice(CHARS))
    return "".join(out)


def rand_scalar(rng):
    c = rng.random()
    if c < 0.45:
        return rng.choice(["a", "b", "c", "d", "A", "x y"])
    if c < 0.8:
        return rng.choice([1, 1.0, 2, 2.5, -0.0, 0, 3])
    if c < 0.9:
        return rng.choice([True, False])
    return rng.choice([{"k": 1}, {"k": 1.0}, {"k": "1"}, [1, 2], [], {}])


def rand_list(rng, base=None):
    if base is not None and rng.random() < 0.5:
        out = [x if rng.random() < 0.7 else rand_scalar(rng) for x in base]
        if rng.random() < 0.3:
            out = out[:rng.randint(0, len(out))]
        if rng.random() < 0.3:
            out += [rand_scalar(rng) for _ in range(rng.randint(1, 3))]
        return out
    return [rand_scalar(rng) for _ in range(rng.randint(0, 6))]


def rand_numbers(rng, base=None):
    if base is not None:
        if isinstance(base, list):
            return [x + rng.choice([0, 0.005, -0.01, 0.02, 1]) for x in base]
        return base + rng.choice([0, 0.005, -0.01, 0.01, 0.5])
    if rng.random() < 0.5:
        return rng.choice([0, 1, 2.5, 100, -3])
    return [rng.choice([0, 1, 2.5, 100]) for _ in range(rng.randint(0, 4))]


def truth_value(rng, prim):
    if prim in ("exact_match_ratio", "coverage_ratio", "set_overlap"):
        return rand_list(rng)
    if prim == "numeric_tolerance":
        return rand_numbers(rng)
    if prim == "fuzzy_string":
        return rand_string(rng)
    return rand_scalar(rng) if rng.random() < 0.7 else rand_list(rng)


def answer_value(rng, prim, truth):
    if rng.random() < 0.08:  # of the wrong type, mostly
        return rng.choice(["text", 5, [1, "a"], {"k": 1}, True])
    if prim in ("exact_match_ratio", "coverage_ratio", "set_overlap"):
        return rand_list(rng, truth if isinstance(truth, list) else None)
    if prim == "numeric_tolerance":
        if rng.random() < 0.1:
            return rand_numbers(rng)
        return rand_numbers(rng, truth)
    if prim == "fuzzy_string":
        if isinstance(truth, str) and rng.random() < 0.6:
            s = list(truth)
            for _ in range(rng.randint(0, 3)):
                if s and rng.random() < 0.5:
                    s[rng.randrange(len(s))] = rng.choice(CHARS)
                else:
                    s.insert(rng.randint(0, len(s)), rng.choice(SPACES + list(CHARS)))
            out = "".join(s)
            return out.upper() if rng.random() < 0.3 else out
        return rand_string(rng)
    return truth if rng.random() < 0.4 else rand_scalar(rng)


def rand_weights(rng, n):
    parts = [rng.randint(1, 20) for _ in range(n)]
    total = sum(parts)
    ks = [p * 1000 // total for p in parts]
    ks[-1] += 1000 - sum(ks)
    if ks[-1] <= 0:
        ks = [1000 // n] * n
        ks[-1] += 1000 - sum(ks)
    return [k / 1000 for k in ks]


NAMES = ["correctness", "completeness", "precision", "methodology", "speed",
         "code_quality", "analysis", "accuracy", "deep_coverage", "x1"]


def rand_task(rng, idx):
    n = rng.randint(1, 6)
    names = rng.sample(NAMES, n)
    weights = rand_weights(rng, n)
    dims, truth, cons = [], {}, {}
    for name, w in zip(names, weights):
        c = rng.random()
        if c < 0.75:
            prim = rng.choice(FIELD_PRIMITIVES)
            f = "f_" + name
            dim = {"name": name, "weight": w, "primitive": prim, "field": f,
                   "ground_truth_field": "t_" + name}
            if prim == "numeric_tolerance" and rng.random() < 0.6:
                dim["tolerance"] = rng.choice([0, 0.01, 0.5, 1])
            if prim == "set_overlap" and rng.random() < 0.6:
                dim["method"] = rng.choice(["intersection", "jaccard"])
            truth["t_" + name] = truth_value(rng, prim)
        elif c < 0.85:
            dim = {"name": name, "weight": w, "primitive": "time_decay",
                   "time_limit_secs": rng.choice([60, 300, 7.5])}
        elif c < 0.93:
            dim = {"name": name, "weight": w, "primitive": "token_efficiency"}
            cons["token_budget"] = rng.choice([1000, 5000])
        else:
            dim = {"name": name, "weight": w, "primitive": "call_efficiency"}
            cons["max_llm_calls"] = rng.choice([4, 10])
        if rng.random() < 0.2:
            dim["public"] = False
        dims.append(dim)
    task = {"name": "c%03d" % idx, "task_type": "answer",
            "scoring": {"type": "deterministic", "dimensions": dims}}
    if truth:
        task["ground_truth"] = truth
    if rng.random() < 0.3:
        cons["time_limit_secs"] = rng.choice([30, 120])
    if cons:
        task["constraints"] = cons
    diff = rng.choice(list(DIFFICULTY) + [950, 1100.5, None])
    if diff is not None:
        task["difficulty"] = diff
    if rng.random() < 0.4:
        task["score_precision"] = rng.randint(0, 3)
    if rng.random() < 0.3:
        task["win_threshold"] = rng.choice([500, 700, 900])
        task["draw_threshold"] = rng.choice([100, 400, 500])
        if task["draw_threshold"] > task["win_threshold"]:
            task["draw_threshold"] = task["win_threshold"]
    if rng.random() < 0.3:
        fields = [d["field"] for d in dims if "field" in d] + ["extra"]
        fmt = {}
        for f in rng.sample(fields, rng.randint(1, len(fields))):
            fmt[f] = {"type": rng.choice(["string", "number", "boolean",
                                          "array", "object"]),
                      "required": rng.random() < 0.5}
        task["answer_format"] = fmt
    return task


def rand_job(rng, task, sid):
    dims = task["scoring"]["dimensions"]
    truth = dict(task.get("ground_truth", {}))
    answer = {}
    job_truth = {}
    for d in dims:
        if "field" not in d:
            continue
        tf = d["ground_truth_field"]
        if rng.random() < 0.1:
            job_truth[tf] = truth_value(rng, d["primitive"])
        t = job_truth.get(tf, truth.get(tf))
        if rng.random() < 0.9:
            answer[d["field"]] = answer_value(rng, d["primitive"], t)
    if rng.random() < 0.15:
        answer["notes"] = "n"
    if "answer_format" in task and rng.random() < 0.3:
        answer["extra"] = rand_scalar(rng)
    job = {"submission": sid, "task": task["name"],
           "participant": "agent-%d" % rng.randint(0, 39),
           "contest": rng.choice(["arena", "league"]),
           "timestamp": 1790000000 + rng.randint(0, 50), "answer": answer}
    if job_truth:
        job["ground_truth"] = job_truth
    if rng.random() < 0.01 and any("field" in d for d in dims):
        # a ground-truth field of a type no primitive of it reads, or none
        d = rng.choice([d for d in dims if "field" in d])
        job.setdefault("ground_truth", {})[d["ground_truth_field"]] = {"no": 1} \
            if d["primitive"] != "exact_match" else None
        if job["ground_truth"][d["ground_truth_field"]] is None:
            del job["ground_truth"][d["ground_truth_field"]]
    if rng.random() < 0.8:
        job["time_used"] = rng.choice([0, -5, 12.5, 42.5, 299, 300, 1e6,
                                       rng.uniform(0, 400)])
    if rng.random() < 0.7:
        usage = {}
        for k in ("input_tokens", "output_tokens", "llm_calls"):
            if rng.random() < 0.85:
                usage[k] = rng.choice([0, 3, 400, 2500, 7000])
        job["usage"] = usage
    for k in ("verified", "memoryless"):
        if rng.random() < 0.7:
            job[k] = rng.random() < 0.6
    if rng.random() < 0.7:
        job["attempt"] = rng.randint(1, 3)
    if rng.random() < 0.1:
        job["official"] = False
    return job


# ---------------------------------------------------------------------------
# The comparison.
# ---------------------------------------------------------------------------


def same_float(a, b):
    return isinstance(b, (int, float)) and not isinstance(b, bool) and \
        float(a) == float(b) and math.copysign(1, a) == math.copysign(1, b)


def check_result(task, job, got, problems):
    where = "%s (task %s)" % (job["submission"], task["name"])
    try:
        want = score_match(task, job)
    except JobError:
        if "error" not in got:
            problems.append("%s: tally scored a job the model refuses: %s"
                            % (where, json.dumps(got)[:300]))
        return None
    if "error" in got:
        problems.append("%s: tally refused it: %s" % (where, got["error"]))
        return None
    for k in ("score", "public_score", "max_public_score"):
        if not same_float(want[k], got.get(k)):
            problems.append("%s: %s %r, model %r" % (where, k, got.get(k),
                                                     want[k]))
    if got.get("result") != want["result"]:
        problems.append("%s: result %r, model %r" % (where, got.get("result"),
                                                     want["result"]))
    bd = got.get("score_breakdown", {})
    if list(bd) != list(want["breakdown"]):
        problems.append("%s: breakdown names %s" % (where, list(bd)))
    for name, (s, w, ws) in want["breakdown"].items():
        g = bd.get(name, {})
        label = CORE_LABELS.get(name, name[:1].upper() + name[1:].replace("_", " "))
        if g.get("label") != label or not same_float(s, g.get("score")) or \
                not same_float(w, g.get("weight")) or \
                not same_float(ws, g.get("weighted")):
            problems.append("%s: dimension %s %s, model %r" %
                            (where, name, json.dumps(g), (label, s, w, ws)))
    warns = [(w.get("severity"), w.get("field"), w.get("dimension"))
             for w in got.get("submission_warnings", [])]
    if warns != want["warnings"]:
        problems.append("%s: warnings %s, model %s" % (where, warns,
                                                       want["warnings"]))
    if len(got.get("constraint_violations", [])) != want["violations"]:
        problems.append("%s: violations %s, model %d" % (
            where, got.get("constraint_violations"), want["violations"]))
    return want


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", required=True)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--cases", type=int, default=3000)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int(
        os.environ.get("TALLY_SEED", "20261126"))
    rng = random.Random(seed)
    ntasks = max(1, args.cases // 25)
    tasks = [rand_task(rng, i) for i in range(ntasks)]
    jobs = []
    for k in range(args.cases):
        task = rng.choice(tasks)
        # Some submissions come twice: the later job replaces the earlier.
        sid = "s%05d" % (rng.randrange(k) if k and rng.random() < 0.05 else k)
        jobs.append((task, rand_job(rng, task, sid)))
    problems = []
    with tempfile.TemporaryDirectory(prefix="tally-challenges-") as tmp:
        tdir = os.path.join(tmp, "tasks")
        os.mkdir(tdir)
        for t in tasks:
            with open(os.path.join(tdir, t["name"] + ".json"), "w") as f:
                json.dump(t, f, ensure_ascii=False)
        jpath = os.path.join(tmp, "jobs.jsonl")
        with open(jpath, "w") as f:
            for _, j in jobs:
                f.write(json.dumps(j, ensure_ascii=False) + "\n")
        out = subprocess.run([args.tally, "score", "--tasks", tdir, jpath],
                             capture_output=True, text=True)
        if out.returncode not in (0, 1):
            print(out.stderr, file=sys.stderr)
            return 2
        lines = out.stdout.splitlines()
        if len(lines) != len(jobs):
            print("tally printed %d lines for %d jobs" % (len(lines), len(jobs)))
            return 1
        latest = {}
        seen = {"win": 0, "draw": 0, "loss": 0, "job errors": 0,
                "warnings": 0}
        for (task, job), line in zip(jobs, lines):
            want = check_result(task, job, json.loads(line), problems)
            latest[job["submission"]] = (task, job, want)
            if want is None:
                seen["job errors"] += 1
            else:
                seen[want["result"]] += 1
                seen["warnings"] += len(want["warnings"])
        # Elo: the last job of each submission, when official and scored.
        per = {}
        for task, job, want in latest.values():
            if want is None or job.get("official") is False:
                continue
            d = task.get("difficulty", "contender")
            opp = DIFFICULTY.get(d, d)
            s = {"win": 1, "draw": 0.5, "loss": 0}[want["result"]]
            per.setdefault((job["contest"], job["participant"]), []).append(
                (job["timestamp"], job["submission"], s, opp,
                 job.get("verified", False), job.get("attempt", 0),
                 job.get("memoryless", False)))
        out = subprocess.run([args.tally, "score", "--tasks", tdir, "--elo",
                              jpath], capture_output=True, text=True)
        got = {}
        for line in out.stdout.splitlines():
            row = json.loads(line)
            got[(row["contest"], row["participant"])] = (
                row["rating"], row["matches"], row["wins"], row["draws"],
                row["losses"])
        for key, ms in per.items():
            want = elo_replay(ms)
            if got.get(key) != want:
                problems.append("elo %s: tally %s, model %s" % (key, got.get(key),
                                                                 want))
        for key in got:
            if key not in per:
                problems.append("elo %s: rated by tally only" % (key,))
    for p in problems[:30]:
        print(p)
    rated = sum(len(v) for v in per.values())
    print("%d matches over %d challenges (seed %d; %s), %d rated in %d "
          "ratings (%d past 30 matches): %d differences" % (
              len(jobs), len(tasks), seed,
              ", ".join("%s %d" % kv for kv in seen.items()), rated,
              len(per), sum(1 for v in per.values() if len(v) > 30),
              len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
