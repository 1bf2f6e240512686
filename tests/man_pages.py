#!/usr/bin/env python3
"""The manual pages (docs/man) against the programs' own --help.

Every flag tallyd's --help names must be in tallyd(8), every flag
tally-worker's usage names in tally-worker(8), and every command and flag
of tally's --help in tally(1); each page must format without a warning
from groff (man --warnings).

Usage: man_pages.py --build DIR --source DIR
"""
import argparse
import os
import re
import subprocess
import sys


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def help_text(argv):
    r = subprocess.run(argv, capture_output=True, text=True)
    return r.stdout + r.stderr


def page_text(path):
    with open(path) as f:
        # The source spells a dash \- and changes fonts with \fB, \fI,
        # \fR, \fP: the words are compared without either.
        return re.sub(r"\\f[BIRP]", "", f.read().replace("\\-", "-"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    a = ap.parse_args()
    man = os.path.join(a.source, "docs/man")
    pages = {
        "tallyd.8": help_text([os.path.join(a.build, "tallyd"), "--help"]),
        "tally-worker.8": help_text([os.path.join(a.build, "tally-worker")]),
        "tally.1": help_text([os.path.join(a.build, "tally"), "--help"]),
    }
    checked = 0
    for page, text in pages.items():
        src = page_text(os.path.join(man, page))
        flags = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text))
        if page == "tally.1":
            flags |= {"tally " + c for c in re.findall(
                r"^(?:usage:)?\s+tally (\w+)", text, re.M)}
        if not flags:
            fail(f"no flags read from the help behind {page}")
        for flag in sorted(flags):
            word = flag.split()[-1]
            if not re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", src):
                fail(f"{page} does not name {flag}, which the program's "
                     "help names")
            checked += 1
        r = subprocess.run(["man", "--warnings=all", "-l",
                            os.path.join(man, page)],
                           capture_output=True, text=True,
                           env=dict(os.environ, MANWIDTH="80",
                                    MAN_KEEP_FORMATTING="0"))
        if r.returncode != 0 or r.stderr.strip():
            fail(f"man {page}: exit {r.returncode}: {r.stderr}")
    print(f"ok: {checked} flags and commands named in the three pages, "
          "which format without a warning")


if __name__ == "__main__":
    main()
