#!/usr/bin/env python3
"""Differential test of `tally report` against an independent Python model
of docs/benchmarks.md and docs/comparators.md.

Random benchmarks (tasks with the benchmark scorers, categories and
thresholds; models answering with right, wrong, malformed, empty and
refusing responses, and failed calls with error texts or statuses; a
random number of samples per problem) are written as task folders and
job files; about a third of them as one task file per scorer whose
from_job takes each job's expected answer, problem and category. `tally report --results ... --tasks ... --json` must give the
figures this model computes from the definitions alone: the scorers, the
rewards, pass@k (exact rationals), the bootstrap (the documented
SplitMix64 stream), the normal interval, the categories and the failure
analysis with its exemplars.

usage: report_reference.py --tally PATH [--seed N] [--benchmarks N]
"""
import argparse
import json
import math
import os
import random
import re
import shutil
import statistics
import string
import subprocess
import sys
import tempfile
import unicodedata
from fractions import Fraction

# Scorers, as docs/comparators.md defines them.


def normalize(s):
    s = unicodedata.normalize("NFKD", s).lower()
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    s = "".join(ch for ch in s if ch not in string.punctuation)
    return " ".join(s.split())


def math_normal(s):
    s = s.strip().lower()
    for ch in (",", "$", "%", " "):
        s = s.replace(ch, "")
    return s.rstrip(".")


LETTER_FORMS = [
    r"(?i:answer)\s*:\s*([A-Za-z])(?![A-Za-z0-9_\x80-\U0010ffff])",
    r"\*\*([A-Za-z])\*\*",
    r"\(([A-Za-z])\)",
    r"\\boxed\{([A-Za-z])\}",
]


def multichoice(response, expected, letters="ABCD"):
    """(correct, extracted)"""
    choices = set(letters.upper())
    best, best_end = None, -1
    for form in LETTER_FORMS:
        for m in re.finditer(form, response):
            if m.group(1).upper() in choices and m.end() >= best_end:
                best, best_end = m.group(1), m.end()
    first_answer = response.lower().find("answer")
    if first_answer >= 0:
        for m in re.finditer(r"\$([A-Za-z])\$", response):
            if m.start() > first_answer and m.group(1).upper() in choices \
                    and m.end() >= best_end:
                best, best_end = m.group(1), m.end()
    last = response.strip().split("\n")[-1].strip()
    if len(last) == 1 and last.upper() in choices:
        best = last
    if best is None:
        return False, False
    return best.upper() == expected.strip().upper(), True


def answer_line(response, expected):
    m = re.search(r"(?i)Answer\s*:\s*([^\n]+)", response)
    if m:
        got, extracted = m.group(1), True
    else:
        got = response.strip().split("\n")[-1]
        extracted = got.strip() != ""
    return math_normal(got) == math_normal(expected), extracted


NUMBER = re.compile(r"(?<![A-Za-z0-9])[-+]?(?:\d+(?:,\d{3})*(?!\d)|\d+)?"
                    r"(?:\.\d+)?(?:[eE][-+]?\d+)?")


def last_number_of(text):
    """The value of the last number, by the rule of docs/comparators.md."""
    found = None
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        starts = c.isdigit() and c in "0123456789" or (
            c == "." and i + 1 < n and text[i + 1] in "0123456789"
            and not (i > 0 and text[i - 1] in "0123456789"))
        if not starts:
            i += 1
            continue
        start = i
        if start > 0 and text[start - 1] in "+-" and (
                start == 1 or not (text[start - 2].isascii()
                                   and text[start - 2].isalnum())):
            start -= 1
        while i < n and text[i] in "0123456789":
            i += 1
        while (i > start and i + 3 < n + 0 and text[i] == ","
               and all(ch in "0123456789" for ch in text[i + 1:i + 4])
               and len(text[i + 1:i + 4]) == 3
               and not (i + 4 < n and text[i + 4] in "0123456789")):
            i += 4
        if i < n and text[i] == "." and i + 1 < n and \
                text[i + 1] in "0123456789":
            i += 1
            while i < n and text[i] in "0123456789":
                i += 1
        if i < n and text[i] in "eE":
            j = i + 1
            if j < n and text[j] in "+-":
                j += 1
            if j < n and text[j] in "0123456789":
                while j < n and text[j] in "0123456789":
                    j += 1
                i = j
        found = text[start:i]
    if found is None:
        return None
    return float(found.replace(",", ""))


def last_number(response, expected):
    e = last_number_of(expected)
    o = last_number_of(response)
    if o is None:
        return False, False
    return o == e, True


def contains(response, expected, accepted=()):
    r = normalize(response)
    answers = [normalize(a) for a in list(accepted) + [expected]]
    answers = [a for a in answers if a]
    return r != "" and any(a in r for a in answers), None


def normalized(response, expected):
    return normalize(response) == normalize(expected), None


def first_object(text):
    dec = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch != "{":
            continue
        try:
            v, _ = dec.raw_decode(text, i)
        except ValueError:
            continue
        if isinstance(v, dict):
            return v
    return None


def json_answer(response, expected, field):
    obj = first_object(response)
    if obj is None:
        return False, False
    # The schema of the generated tasks: the field is required and an
    # integer.
    v = obj.get(field)
    ok = field in obj and isinstance(v, int) and not isinstance(v, bool)
    return ok and v == json.loads(expected), True


# Failure analysis.

REFUSALS = ["I cannot", "I'm sorry", "I'm unable", "I can't", "as an AI",
            "I don't have the ability", "I apologize"]


def statuses(t):
    return [int(m) for m in re.findall(r"(?<![0-9])([0-9]{3})(?![0-9])", t)]


def error_category(err):
    t = str(int(err)) if isinstance(err, (int, float)) else err
    low = t.lower()
    st = statuses(t)
    if 504 in st or "gateway timeout" in low or "upstream timeout" in low:
        return "server_error"
    if "turn budget" in low:
        return "turn_budget_exhausted"
    if "context length" in low or "context window" in low:
        return "context_window_exceeded"
    if "budget" in low:
        return "budget_exceeded"
    if 429 in st or "rate" in low:
        return "rate_limit"
    if 408 in st or "timeout" in low:
        return "timeout"
    if any(500 <= s <= 599 for s in st) or "connection" in low:
        return "server_error"
    return "model_error"


def failure(err, response, correct, extracted):
    if err is not None and err != "":
        return error_category(err)
    if response is not None:
        if response.strip() == "":
            return "empty"
        low = response.lower()
        if any(p.lower() in low for p in REFUSALS):
            return "refusal"
    if not correct and extracted is False:
        return "format_error"
    return None


CATEGORIES = ["server_error", "turn_budget_exhausted",
              "context_window_exceeded", "budget_exceeded", "rate_limit",
              "timeout", "model_error", "empty", "refusal", "format_error"]

# Statistics.

MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def index(self, m):
        return (self.next() * m) >> 64


def quantile(sorted_vals, q):
    n = len(sorted_vals)
    h = (n - 1) * q
    lo = math.floor(h)
    if lo >= n - 1:
        return sorted_vals[-1]
    t = h - lo
    a, b = sorted_vals[lo], sorted_vals[lo + 1]
    return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t


def mean(v):
    s = 0.0
    for x in v:
        s += x
    return s / len(v) if v else 0.0


def bootstrap(v, resamples, seed, conf):
    m = mean(v)
    if len(v) < 2:
        return {"mean": m, "lower": m, "upper": m}
    g = SplitMix64(seed)
    means = []
    for _ in range(resamples):
        s = 0.0
        for _ in range(len(v)):
            s += v[g.index(len(v))]
        means.append(s / len(v))
    means.sort()
    return {"mean": m, "lower": quantile(means, (1 - conf) / 2),
            "upper": quantile(means, (1 + conf) / 2)}


def normal(v, conf):
    m = mean(v)
    if len(v) < 2:
        return {"mean": m, "lower": m, "upper": m}
    sd = statistics.stdev(v)
    z = statistics.NormalDist().inv_cdf((1 + conf) / 2)
    se = sd / math.sqrt(len(v))
    return {"mean": m, "lower": m - z * se, "upper": m + z * se}


def pass_at_k(n, c, k):
    if c == 0:
        return 0.0
    if c == n or n - c < k:
        return 1.0
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


# The model of a whole report.


def report(samples, ks, resamples, seed, conf):
    """samples: dicts with participant, task, category, reward, correct,
    failure, id, preview."""
    out = {"k": ks, "bootstrap": resamples, "seed": seed, "confidence": conf,
           "samples": len(samples),
           "problems": len({s["task"] for s in samples}),
           "participants": []}
    for p in sorted({s["participant"] for s in samples},
                    key=lambda x: x.encode()):
        mine = [s for s in samples if s["participant"] == p]
        tasks = sorted({s["task"] for s in mine}, key=lambda x: x.encode())
        cells = []
        for t in tasks:
            ss = [s for s in mine if s["task"] == t]
            cells.append((len(ss), sum(s["correct"] for s in ss),
                          mean([s["reward"] for s in ss])))
        entry = {"participant": p, "samples": len(mine),
                 "problems": len(tasks),
                 "correct": sum(s["correct"] for s in mine),
                 "accuracy": sum(s["correct"] for s in mine) / len(mine),
                 "mean_reward": mean([s["reward"] for s in mine])}
        pv = [c[2] for c in cells]
        entry["problem_mean_reward"] = {
            "bootstrap": bootstrap(pv, resamples, seed, conf),
            "normal": normal(pv, conf)}
        pk = []
        for k in ks:
            v = [pass_at_k(n, c, k) for n, c, _ in cells if n >= k]
            pk.append({"k": k, "value": mean(v) if v else None,
                       "problems": len(v), "left_out": len(cells) - len(v),
                       "bootstrap": bootstrap(v, resamples, seed, conf),
                       "normal": normal(v, conf)})
        entry["pass_at_k"] = pk
        cats = []
        for cat in sorted({s["category"] for s in mine},
                          key=lambda x: x.encode()):
            cs = [s for s in mine if s["category"] == cat]
            ctasks = sorted({s["task"] for s in cs}, key=lambda x: x.encode())
            v = [mean([s["reward"] for s in cs if s["task"] == t])
                 for t in ctasks]
            cats.append({"category": cat, "samples": len(cs),
                         "problems": len(ctasks),
                         "correct": sum(s["correct"] for s in cs),
                         "mean_reward": mean([s["reward"] for s in cs]),
                         "problem_mean_reward": {
                             "bootstrap": bootstrap(v, resamples, seed, conf),
                             "normal": normal(v, conf)}})
        entry["categories"] = cats
        entry["failure_analysis"] = failures(mine)
        out["participants"].append(entry)
    out["failure_analysis"] = failures(samples)
    return out


def failures(samples):
    failed = [s for s in samples if s["failure"] is not None]
    res = {"total_failures": len(failed),
           "failure_rate": len(failed) / len(samples) if samples else 0,
           "categories": {}, "exemplars": []}
    for cat in CATEGORIES:
        fs = sorted((s for s in failed if s["failure"] == cat),
                    key=lambda s: s["id"].encode())
        if not fs:
            continue
        res["categories"][cat] = {"count": len(fs),
                                  "rate": len(fs) / len(samples)}
        for s in fs[:3]:
            res["exemplars"].append({"category": cat, "task": s["task"],
                                     "participant": s["participant"],
                                     "submission": s["id"],
                                     "response_preview": s["preview"]})
    return res


# Random benchmarks.

RIGHT = {
    "multichoice": lambda e: [f"Answer: {e}", f"answer :{e.lower()}",
                              f"I pick **{e}**", f"so ({e}).",
                              f"\\boxed{{{e}}}", f"The answer is ${e}$",
                              f"Thinking...\n{e}\n"],
    "answer_line": lambda e: [f"Answer: {e}", f"work\nanswer : {e}.",
                              f"so\n{e}", f"ANSWER: ${e}"],
    "last_number": lambda e: [f"It is {e}.", f"#### {e}", f"{e}",
                              f"total {int(e):,} units"],
    "contains": lambda e: [f"It is {e}.", f"The {e.upper()}!",
                           f"surely {e}, yes"],
    "normalized": lambda e: [e, e.upper() + ".", "The " + e, f"  {e}  "],
    "json_answer": lambda e: [f'```json\n{{"answer": {e}}}\n```',
                              f'{{"answer": {e}, "why": "x"}}',
                              f'text {{"answer": {e}}}'],
}
WRONG = [
    "Answer: C", "(A) maybe", "I would say 7", "70", "no idea at all",
    "Answer: 1,205", "The Louvre", '{"answer": "12"}', '{"answer": 13}',
    "twelve", "Answer: Because", "It is 0", "-3.5e2", "B", "answer is $D$",
    "caf\u00e9 the", "\uff21\uff22", "Answer: 100%", "**D**",
]
REFUSALS_SAID = ["I'm sorry, I can't help.", "As an AI, I won't say.",
                 "i apologize, but no", "I CANNOT answer that"]
ERRORS = ["504 Gateway Timeout", "Error code: 429", "Request timeout",
          "This model's maximum context length is 8192 tokens",
          "token budget exceeded", "turn budget exhausted", "502 Bad Gateway",
          "connection reset by peer", "invalid api key", "upstream timeout",
          "could not generate", 503, 408, 401, "context window exceeded"]
WORDS = ["Paris", "jupiter", "eiffel tower", "blue whale", "an apple"]


def expected_for(comp, rng):
    if comp == "multichoice":
        return rng.choice("ABCD")
    if comp == "answer_line":
        return rng.choice(["3.50", "42", "x=3", "1000"])
    if comp == "last_number":
        return str(rng.choice([7, 72, 100, 1250, 0]))
    if comp == "json_answer":
        return str(rng.choice([12, 7, 0]))
    return rng.choice(WORDS)


def score(comp, params, response, expected):
    if comp == "multichoice":
        return multichoice(response, expected)
    if comp == "answer_line":
        return answer_line(response, expected)
    if comp == "last_number":
        return last_number(response, expected)
    if comp == "contains":
        return contains(response, expected, params.get("accepted", ()))
    if comp == "normalized":
        return normalized(response, expected)
    return json_answer(response, expected, "answer")


def generate(rng, folder):
    tasks = {}
    comps = list(RIGHT)
    # One task file per scorer for the whole benchmark (docs/benchmarks.md,
    # "One task for a whole benchmark"): each job brings its expected
    # answer, problem and category; a problem is keyed by task and id.
    from_job = rng.random() < 0.35
    written = set()
    for t in range(rng.randint(3, 9)):
        comp = rng.choice(comps)
        name = f"q{t:02d}-{comp[:4]}"
        exp = expected_for(comp, rng)
        if from_job:
            file = "bench-" + comp
            cat = rng.choice(["math", "science", "trivia", "\u00e9t\u00e9"])
            params = {}
            if comp == "json_answer":
                params = {"schema": {"type": "object",
                                     "required": ["answer"],
                                     "properties": {"answer":
                                                    {"type": "integer"}}},
                          "field": "answer"}
            if file not in written:
                task = {"name": file, "task_type": "output_only",
                        "score_type": "Sum", "score_type_parameters": 1,
                        "testcases": {"answer": True}, "comparator": comp,
                        "from_job": {"target": "target", "problem": "pid",
                                     "category": "cat"}}
                if params:
                    task["comparator_parameters"] = params
                with open(os.path.join(folder, file + ".json"), "w") as f:
                    json.dump(task, f)
                written.add(file)
            tasks[name] = (comp, params, exp, cat, file)
            continue
        task = {"name": name, "task_type": "output_only",
                "score_type": "Sum", "score_type_parameters": 1,
                "testcases": {"answer": True}, "comparator": comp}
        params = {}
        if comp == "json_answer":
            params = {"schema": {"type": "object", "required": ["answer"],
                                 "properties": {"answer":
                                                {"type": "integer"}}},
                      "field": "answer"}
        if comp == "contains" and rng.random() < 0.5:
            params = {"accepted": [rng.choice(WORDS)]}
        if params:
            task["comparator_parameters"] = params
        if rng.random() < 0.8:
            task["category"] = rng.choice(["math", "science", "trivia",
                                           "Format", "\u00e9t\u00e9"])
        if rng.random() < 0.2:
            task["correct_threshold"] = 0.5
        with open(os.path.join(folder, name + ".json"), "w") as f:
            json.dump(task, f)
        os.mkdir(os.path.join(folder, name + ".data"))
        with open(os.path.join(folder, name + ".data", "answer.out"),
                  "w") as f:
            f.write(exp + "\n")
        tasks[name] = (comp, params, exp, task.get("category", "unknown"),
                       None)
    jobs, samples = [], []
    for p in range(rng.randint(1, 4)):
        model = f"model-{p}"
        skill = rng.random()
        for name, (comp, params, exp, cat, file) in tasks.items():
            for i in range(rng.randint(1, 12)):
                sid = f"{model}/{name}/{i}"
                job = {"submission": sid, "participant": model,
                       "task": file or name, "contest": "bench"}
                if file:
                    job.update({"target": exp, "pid": name, "cat": cat})
                r = rng.random()
                err = None
                if r < 0.08:
                    err = rng.choice(ERRORS)
                    job["error"] = err
                    response = rng.choice(["", "partial"])
                elif r < 0.13:
                    response = rng.choice(REFUSALS_SAID)
                elif r < 0.16:
                    response = rng.choice(["", "  \n", "\u3000"])
                elif rng.random() < skill:
                    response = rng.choice(RIGHT[comp](exp))
                else:
                    response = rng.choice(WRONG)
                as_field = rng.random() < 0.3
                if as_field:
                    job["response"] = response
                    job["evaluations"] = {"answer": response}
                else:
                    job["evaluations"] = {"answer": response}
                jobs.append(json.dumps(job))
                correct, extracted = score(comp, params, response, exp)
                fail = failure(err, response, correct, extracted)
                samples.append({"participant": model,
                                "task": f"{file}/{name}" if file else name,
                                "category": cat, "reward": 1.0 if correct
                                else 0.0, "correct": bool(correct),
                                "failure": fail, "id": sid,
                                "preview": response[:200]})
    with open(os.path.join(folder, "jobs.jsonl"), "w") as f:
        f.write("\n".join(jobs) + "\n")
    return samples


def compare(want, got, path, diffs):
    if isinstance(want, dict):
        if not isinstance(got, dict):
            diffs.append(f"{path}: want an object, got {got!r}")
            return
        for k, v in want.items():
            if k not in got:
                diffs.append(f"{path}.{k}: missing")
            else:
                compare(v, got[k], f"{path}.{k}", diffs)
    elif isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            diffs.append(f"{path}: want {len(want)} items, got {got!r:.200}")
            return
        for i, (a, b) in enumerate(zip(want, got)):
            compare(a, b, f"{path}[{i}]", diffs)
    elif isinstance(want, float) and isinstance(got, (int, float)):
        if not math.isclose(want, got, rel_tol=1e-9, abs_tol=1e-12):
            diffs.append(f"{path}: want {want!r}, got {got!r}")
    elif want != got:
        diffs.append(f"{path}: want {want!r}, got {got!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--benchmarks", type=int, default=40)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    total_diffs, samples_seen, failures_seen = 0, 0, {}
    for b in range(args.benchmarks):
        folder = tempfile.mkdtemp(prefix="tally-report-ref-")
        try:
            samples = generate(rng, folder)
            ks = sorted(rng.sample([1, 2, 3, 5, 8, 10, 13], rng.randint(1, 3)))
            resamples = rng.choice([1, 50, 200])
            seed = rng.randint(0, 2**53)
            conf = rng.choice([0.8, 0.9, 0.95, 0.99])
            cmd = [args.tally, "report", "--results",
                   os.path.join(folder, "jobs.jsonl"), "--tasks", folder,
                   "--json", "--k", ",".join(map(str, ks)), "--bootstrap",
                   str(resamples), "--seed", str(seed), "--confidence",
                   str(conf)]
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode != 0:
                print(f"benchmark {b}: tally exited {res.returncode}: "
                      f"{res.stderr}")
                total_diffs += 1
                continue
            got = json.loads(res.stdout)
            want = report(samples, ks, resamples, seed, conf)
            diffs = []
            compare(want, got, "report", diffs)
            for d in diffs[:10]:
                print(f"benchmark {b} (seed {args.seed}): {d}")
            total_diffs += len(diffs)
            samples_seen += len(samples)
            for s in samples:
                failures_seen[s["failure"]] = \
                    failures_seen.get(s["failure"], 0) + 1
        finally:
            shutil.rmtree(folder)
    print(f"{args.benchmarks} benchmarks, {samples_seen} samples, "
          f"failures {dict(sorted((str(k), v) for k, v in failures_seen.items()))}: "
          f"{total_diffs} differences")
    return 1 if total_diffs else 0


if __name__ == "__main__":
    sys.exit(main())
