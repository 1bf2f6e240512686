#!/usr/bin/env python3
"""tally report --html in a real browser: Debian's chromium, headless,
loads the page the benchmark example gives and dumps its DOM, which must
hold the three charts with one mark per figure of the report's JSON (a
bar and a whisker per participant and category, a curve per participant
with a point per pass@k, a bar per failure category) and fetch nothing.

usage: report_browser.py --tally PATH --source DIR [--screenshot PNG]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser


class Marks(HTMLParser):
    def __init__(self):
        super().__init__()
        self.svg = None
        self.count = {}
        self.external = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("src", "href"):
            if k in a and "://" in a[k]:
                self.external.append(a[k])
        if tag == "svg":
            self.svg = a.get("id")
        key = (self.svg, tag, a.get("class"))
        self.count[key] = self.count.get(key, 0) + 1

    def handle_endtag(self, tag):
        if tag == "svg":
            self.svg = None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--screenshot")
    args = ap.parse_args()
    browser = shutil.which("chromium")
    if browser is None:
        print("chromium is not installed (scripts/test installs it)")
        return 1
    bench = os.path.join(args.source, "examples", "benchmarks")
    base = [args.tally, "report", "--results",
            os.path.join(bench, "jobs.jsonl"), "--tasks",
            os.path.join(bench, "tasks"), "--contest", "bench"]
    tmp = tempfile.mkdtemp(prefix="tally-report-browser-")
    try:
        page = os.path.join(tmp, "report.html")
        subprocess.run(base + ["--html", page], check=True)
        report = json.loads(subprocess.run(base + ["--json"], check=True,
                                           capture_output=True,
                                           text=True).stdout)
        flags = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--user-data-dir=" + os.path.join(tmp, "profile")]
        dom = subprocess.run([browser] + flags + ["--dump-dom",
                                                  "file://" + page],
                             check=True, capture_output=True, text=True,
                             timeout=120).stdout
        m = Marks()
        m.feed(dom)
        ps = report["participants"]
        want = {
            ("chart-categories", "svg", "chart"): 1,
            ("chart-pass-at-k", "svg", "chart"): 1,
            ("chart-failures", "svg", "chart"): 1,
            ("chart-categories", "rect", "bar"):
                sum(len(p["categories"]) for p in ps),
            ("chart-categories", "path", "whisker"):
                sum(len(p["categories"]) for p in ps),
            ("chart-pass-at-k", "polyline", "curve"): len(ps),
            ("chart-pass-at-k", "circle", "point"):
                sum(1 for p in ps for k in p["pass_at_k"]
                    if k["value"] is not None),
            ("chart-failures", "rect", "fail"):
                len(report["failure_analysis"]["categories"]),
            (None, "tr", None): 1 + len(ps) + 1 +
                len(report["failure_analysis"]["exemplars"]),
        }
        bad = 0
        for key, n in want.items():
            got = m.count.get(key, 0)
            if got != n:
                print(f"{key}: want {n}, the browser's DOM has {got}")
                bad += 1
        if m.external:
            print(f"the page fetches {m.external}")
            bad += 1
        if args.screenshot:
            subprocess.run([browser] + flags + [
                "--hide-scrollbars", "--window-size=1000,1500",
                "--screenshot=" + os.path.abspath(args.screenshot),
                "file://" + page], check=True, capture_output=True,
                timeout=120)
        print(f"{sum(want.values())} marks checked in chromium's DOM: "
              f"{bad} problems")
        return 1 if bad else 0
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
