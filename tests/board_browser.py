#!/usr/bin/env python3
"""The scoreboard in a real browser: Debian's chromium, headless, driven
through the DevTools protocol over --remote-debugging-pipe (no library
needed). tallyd runs on a redis-server of the test's own; the test opens
a contest's board, pushes jobs and sees rows change and move without a
reload, restarts tallyd and sees the board go on, and checks that the
page fetches nothing from elsewhere and is a full table without
JavaScript. Then an arena's Elo table, live; and a board that freezes
while open: it says so, holds for submissions made after the freeze
(which the private view shows), still moves for those made before, and
shows everything once unfrozen. And a pass-fail (ICPC) board: solves,
rejected tries and the first to solve come in live, equal to the API's
board, without a reload. With --screenshot (--icpc-screenshot) it saves
the board (the pass-fail board) as a PNG.

usage: board_browser.py --build DIR --source DIR [--screenshot PNG]
       [--icpc-screenshot PNG]
"""
import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


class Browser:
    """chromium with the DevTools protocol on fds 3 (in) and 4 (out)."""

    def __init__(self, exe):
        # The child's fds 3 and 4 are the pipes' ends (dup2 in preexec_fn;
        # listing 3 and 4 in pass_fds keeps them open past it).
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", "--no-first-run",
             "--window-size=1000,700", "about:blank"],
            pass_fds=(3, 4, to_r, from_w), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=lambda: (os.dup2(to_r, 3), os.dup2(from_w, 4)))
        os.close(to_r)
        os.close(from_w)
        self.out = os.fdopen(to_w, "wb", buffering=0)
        self.inp = os.fdopen(from_r, "rb", buffering=0)
        self.buf = b""
        self.next_id = 0
        self.session = None

    def send(self, method, params=None, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        self.out.write(json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" not in self.buf:
                chunk = self.inp.read(65536)
                if not chunk:
                    fail("chromium closed the DevTools pipe")
                self.buf += chunk
            raw, self.buf = self.buf.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    fail(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def open(self, url):
        target = self.send("Target.createTarget", {"url": url}, False)
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": target["targetId"],
                                  "flatten": True}, False)["sessionId"]

    def eval(self, expr):
        r = self.send("Runtime.evaluate",
                      {"expression": expr, "returnByValue": True})
        return r.get("result", {}).get("value")

    def wait(self, expr, timeout=15):
        """Polls expr until it is true; returns the seconds it took."""
        t0 = time.time()
        while time.time() - t0 < timeout:
            if self.eval(expr):
                return time.time() - t0
            time.sleep(0.05)
        return None

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.send("Browser.close", None, False)
        except SystemExit:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


ROWS = ("JSON.stringify(Array.from(document.querySelectorAll("
        "'#board tbody tr')).map(r => [r.cells[0].textContent, r.dataset.p, "
        "r.cells[3].textContent]))")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--screenshot")
    ap.add_argument("--icpc-screenshot")
    a = ap.parse_args()
    build, source = os.path.abspath(a.build), os.path.abspath(a.source)
    exe = shutil.which("chromium")
    if exe is None:
        fail("chromium is not installed (scripts/test installs it)")
    tmp = tempfile.mkdtemp(prefix="tally-board-")
    procs = []
    browser = None
    try:
        sock = os.path.join(tmp, "redis.sock")
        procs.append(subprocess.Popen(
            ["redis-server", "--port", "0", "--unixsocket", sock, "--save",
             "", "--dir", tmp], stdout=subprocess.DEVNULL))
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        url = f"unix://{sock}"
        tasks = os.path.join(tmp, "tasks")
        shutil.copytree(os.path.join(source, "examples", "tasks"), tasks)
        with open(os.path.join(tasks, "c1.contest.json"), "w") as f:
            json.dump({"name": "c1", "title": "Example Cup",
                       "tasks": ["sum", "product"], "score_precision": 1}, f)
        shutil.copy(os.path.join(source, "examples", "challenges", "tasks",
                                 "cipher.json"), tasks)
        with open(os.path.join(tasks, "arena.contest.json"), "w") as f:
            json.dump({"name": "arena", "tasks": ["cipher"],
                       "ranking": "elo"}, f)
        # Frozen since 2026-01-01T12:00:00Z (1767268800); the test lifts
        # the freeze and puts it back with tally contest.
        with open(os.path.join(tasks, "cf.contest.json"), "w") as f:
            json.dump({"name": "cf", "tasks": ["sum"],
                       "start": "2026-01-01T00:00:00Z",
                       "end": "2099-01-01T00:00:00Z",
                       "freeze": "2026-01-01T12:00:00Z",
                       "score_precision": 1}, f)
        # A pass-fail contest from 2026-01-01T00:00:00Z (1767225600).
        with open(os.path.join(tasks, "icpc.contest.json"), "w") as f:
            json.dump({"name": "icpc", "title": "Example Regional",
                       "tasks": ["sum", "product"], "scoring": "pass-fail",
                       "start": "2026-01-01T00:00:00Z",
                       "end": "2099-01-01T00:00:00Z"}, f)
        token = "operator-token-for-the-browser-test"
        with open(os.path.join(tmp, "token"), "w") as f:
            f.write(token + "\n")
        with open(os.path.join(tasks, "participants.json"), "w") as f:
            json.dump({"alice": {"name": "Alice", "team": "Red"},
                       "bob": {"name": "Bob", "team": "Blue"},
                       "carol": {"name": "Carol", "team": "Red"}}, f)
        log = os.path.join(tmp, "tallyd.log")

        def start_tallyd(port="0"):
            p = subprocess.Popen(
                [os.path.join(build, "tallyd"), "--tasks", tasks, "--redis",
                 url, "--workers", "1", "--http", f"127.0.0.1:{port}",
                 "--http-token-file", os.path.join(tmp, "token")],
                stdout=open(log, "a"), stderr=subprocess.STDOUT)
            procs.append(p)
            for _ in range(300):
                with open(log) as f:
                    found = re.findall(r"http: listening on 127\.0\.0\.1:(\d+)",
                                       f.read())
                if len(found) > len(started):
                    started.append(found[-1])
                    return p, int(found[-1])
                time.sleep(0.05)
            fail("tallyd did not listen")

        started = []
        tallyd, port = start_tallyd()

        def submit(job):
            subprocess.run([os.path.join(build, "tally"), "submit", "--redis",
                            url], input=json.dumps(job) + "\n", text=True,
                           check=True, capture_output=True)

        def push(sub, who, task, evals, contest="c1", ts=None):
            job = {"submission": sub, "participant": who, "task": task,
                   "contest": contest}
            if evals is None:
                job["compilation"] = "failed"
            else:
                job["evaluations"] = evals
            if ts is not None:
                job["timestamp"] = ts
            submit(job)

        def tally_contest(what, name):
            subprocess.run([os.path.join(build, "tally"), "contest", what,
                            "--redis", url, name], check=True,
                           capture_output=True)

        def api(path, auth=False):
            req = urllib.request.Request(base + path)
            if auth:
                req.add_header("Authorization", "Bearer " + token)
            return json.loads(urllib.request.urlopen(req).read())

        def wait_live():
            if browser.wait("document.getElementById('live') && "
                            "document.getElementById('live').textContent "
                            "== 'live'") is None:
                fail("the page never connected to its events")

        def results():
            r = subprocess.run(["redis-cli", "-s", sock, "XLEN",
                                "tally:results"], capture_output=True,
                               text=True)
            return int(r.stdout.strip() or 0)

        push("s1", "alice", "sum", {"0": 1, "1": 1, "2": 1, "3": 1})
        push("s2", "bob", "sum", {"0": 0, "1": 0, "2": 0, "3": 0})
        deadline = time.time() + 20
        while results() < 2:
            if time.time() > deadline:
                fail("the first jobs were not scored")
            time.sleep(0.1)

        base = f"http://127.0.0.1:{port}"
        page = urllib.request.urlopen(base + "/contests/c1").read().decode()
        external = re.findall(r'(?:src|href)="[a-z]+://', page)
        if external:
            fail(f"the page fetches from elsewhere: {external}")
        if page.count("<tr data-p=") != 2 or "Alice" not in page:
            fail("without JavaScript the page is not the full table")

        browser = Browser(exe)
        browser.open(base + "/contests/c1")
        if browser.wait("document.getElementById('live') && "
                        "document.getElementById('live').textContent == "
                        "'live'") is None:
            fail("the page never connected to its events")
        first = json.loads(browser.eval(ROWS))
        if [r[1] for r in first] != ["alice", "bob"]:
            fail(f"the first board: {first}")

        # A new participant takes the lead: the row appears and moves up.
        push("s3", "carol", "product", {"s1_a": 1, "s1_b": 1, "s2_a": 1,
                                        "s2_b": 1})
        took = browser.wait(ROWS + ".includes('\"carol\"')")
        if took is None:
            fail(f"carol's row never came: {browser.eval(ROWS)}")
        rows = json.loads(browser.eval(ROWS))
        print(f"a post reached the page in {took:.2f} s (polled every "
              f"0.05 s)")
        if rows[0][1] != "carol" or rows[0][0] != "1":
            fail(f"carol should lead: {rows}")
        if browser.eval("location.href") != base + "/contests/c1":
            fail("the page was reloaded")

        # tallyd restarts on the same port: the page follows on.
        tallyd.terminate()
        tallyd.wait(timeout=30)
        tallyd, _ = start_tallyd(str(port))
        push("s4", "bob", "product", {"s1_a": 1, "s1_b": 1, "s2_a": 1,
                                      "s2_b": 0})
        if browser.wait(ROWS + ".includes('\"bob\",\"30')", 30) is None:
            fail(f"after a restart the page did not move: "
                 f"{browser.eval(ROWS)}")
        rows = json.loads(browser.eval(ROWS))
        print(f"ok: the board followed 2 posts live, across a restart: "
              f"{rows}")

        # Each task's public maximum under its header, and the total's.
        maxima = json.loads(browser.eval(
            "JSON.stringify(Array.from(document.querySelector('#board "
            "thead tr.max').cells).map(c => c.textContent))"))
        if maxima != ["", "Maximum", "", "40.5", "10.5", "30"]:
            fail(f"the maxima row: {maxima}")
        # A score opened: the participant's subtasks, as the API counts
        # them; then another, by keyboard (Enter on the focused cell).
        panel = "document.getElementById('cell')"
        browser.eval("document.querySelector('#board tr[data-p=\"carol\"] "
                     "td[data-t=\"product\"]').click()")
        opened = ("!" + panel + ".hidden && " + panel +
                  ".textContent.includes('{}')")
        if browser.wait(opened.format("Carol · product: 30 of 30")) is None:
            fail(f"carol's product cell did not open: "
                 f"{browser.eval(panel + '.textContent')}")
        lines = json.loads(browser.eval(
            "JSON.stringify(Array.from(" + panel + ".querySelectorAll('tr'))"
            ".map(r => Array.from(r.cells).map(c => c.textContent)))"))
        want = api("/api/contests/c1/ranking/carol/product")
        if lines != [["Subtask 0 (30)", "30", "s3"],
                     ["Subtask 1 (70)", "not public", ""]] or \
                want["subtasks"] != [{"score": 30, "submission": "s3"},
                                     {"score": None, "submission": None}]:
            fail(f"carol's subtasks: {lines}, the API's {want}")
        browser.eval("(function(){var td=document.querySelector('#board "
                     "tr[data-p=\"bob\"] td[data-t=\"product\"]');"
                     "td.focus();td.dispatchEvent(new KeyboardEvent("
                     "'keydown',{key:'Enter',bubbles:true}));})()")
        if browser.wait(opened.format("Bob · product: 30 of 30")) is None:
            fail(f"bob's product cell did not open by keyboard: "
                 f"{browser.eval(panel + '.textContent')}")
        print("ok: the maxima row, and a score opened subtask by subtask "
              "(click and keyboard), as the API counts it")
        if a.screenshot:
            browser.eval("document.querySelector('#board tr[data-p=\"carol\"] "
                         "td[data-t=\"product\"]').click()")
            browser.wait(opened.format("Carol · product"))
            browser.screenshot(a.screenshot)

        # An arena: the Elo table with W/D/L, live.
        browser.open(base + "/contests/arena")
        wait_live()
        for i, (who, answers) in enumerate([("agent-1", ["a", "b"]),
                                            ("agent-2", ["c", "d"])]):
            submit({"submission": f"m{i}", "task": "cipher",
                    "participant": who, "contest": "arena",
                    "timestamp": 1767200000 + i,
                    "answer": {"answers": answers,
                               "attempted": ["q1", "q2"]},
                    "ground_truth": {"expected_answers": ["a", "b"]},
                    "verified": True, "attempt": 1, "memoryless": True})
        if browser.wait(ROWS + ".includes('\"agent-2\"')") is None:
            fail(f"the arena's rows never came: {browser.eval(ROWS)}")
        want = api("/api/contests/arena/ranking")["rows"]
        cells = json.loads(browser.eval(
            "JSON.stringify(Array.from(document.querySelectorAll("
            "'#board tbody tr')).map(r => [r.dataset.p, r.cells[3]"
            ".textContent, r.cells[4].textContent, r.cells[5]"
            ".textContent]))"))
        wanted = [[r["participant"], str(r["rating"]), str(r["matches"]),
                   f"{r['wins']}/{r['draws']}/{r['losses']}"] for r in want]
        if cells != wanted or browser.eval("location.pathname") != \
                "/contests/arena":
            fail(f"the Elo table {cells} is not the API's {wanted}")
        print(f"ok: the Elo table live: {cells}")

        # A pass-fail board: its cells come in live, equal to the API's.
        icpc0 = 1767225600
        ok4 = {"0": 1, "1": 1, "2": 1, "3": 1}
        push("i1", "alice", "sum", {"0": 1, "1": 0, "2": 1, "3": 1}, "icpc",
             icpc0 + 300)
        push("i2", "alice", "sum", ok4, "icpc", icpc0 + 1500)
        browser.open(base + "/contests/icpc")
        wait_live()
        browser.eval("window.sameLoad = true")
        cells = ("JSON.stringify(Array.from(document.querySelectorAll("
                 "'#board tbody tr')).map(r => Array.from(r.cells).map("
                 "c => c.textContent)))")
        if browser.wait(cells + ".includes('Alice')") is None:
            fail(f"the pass-fail board's first row never came: "
                 f"{browser.eval(cells)}")
        # bob solves sum first of all (earlier than alice's solve) and
        # product after a compile error (no try) and a wrong answer.
        push("i3", "bob", "sum", ok4, "icpc", icpc0 + 1200)
        push("i4", "bob", "product", None, "icpc", icpc0 + 1300)
        push("i5", "bob", "product", {"s1_a": 1, "s1_b": 0, "s2_a": 1,
                                      "s2_b": 1}, "icpc", icpc0 + 1400)
        push("i6", "bob", "product", {"s1_a": 1, "s1_b": 1, "s2_a": 1,
                                      "s2_b": 1}, "icpc", icpc0 + 2400)
        push("i7", "carol", "product", {"s1_a": 0, "s1_b": 0, "s2_a": 1,
                                        "s2_b": 1}, "icpc", icpc0 + 600)

        def board_rows():
            return [[str(r["rank"]), r["name"], r["team"] or "",
                     str(r["solved"]), str(r["penalty"])]
                    for r in api("/api/contests/icpc/ranking")["rows"]]

        deadline = time.time() + 20
        while len(board_rows()) < 3 or board_rows()[0][1] != "Bob":
            if time.time() > deadline:
                fail(f"bob never led the pass-fail board: {board_rows()}")
            time.sleep(0.1)
        want = board_rows()
        got = None
        deadline = time.time() + 10
        while time.time() < deadline:
            got = [c[:5] for c in json.loads(browser.eval(cells))]
            if got == want:
                break
            time.sleep(0.05)
        if got != want:
            fail(f"the pass-fail board {got} is not the API's {want}")
        shown = json.loads(browser.eval(cells))
        firsts = browser.eval("document.querySelectorAll('td.first').length")
        if shown[0][5:] != ["+20", "+140"] or shown[1][5:] != ["+125", ""] \
                or shown[2][5:] != ["", "-1"] or firsts != 2 \
                or not browser.eval("window.sameLoad"):
            fail(f"the pass-fail cells: {shown}, {firsts} first solves")
        print(f"ok: the pass-fail board live, equal to the API's: {shown}")
        if a.icpc_screenshot:
            browser.screenshot(a.icpc_screenshot)

        # A board that freezes while open. tallyd reads the freeze's state
        # once a second: the API says when it has.
        def wait_frozen(want):
            deadline = time.time() + 10
            while api("/api/contests/cf/ranking")["frozen"] != want:
                if time.time() > deadline:
                    fail(f"the API never said frozen: {want}")
                time.sleep(0.1)

        tally_contest("unfreeze", "cf")
        wait_frozen(False)
        push("f1", "alice", "sum", {"0": 1, "1": 1, "2": 1, "3": 1}, "cf",
             1767200000)
        browser.open(base + "/contests/cf")
        wait_live()
        if browser.wait(ROWS + ".includes('\"alice\"')") is None:
            fail(f"cf's first row never came: {browser.eval(ROWS)}")
        # The contest's clock: its times, and where it stands.
        clock = browser.eval("document.getElementById('clock').textContent")
        if not re.fullmatch(r"Start 2026-01-01T00:00:00Z · End "
                            r"2099-01-01T00:00:00Z · Freeze "
                            r"2026-01-01T12:00:00Z \(running: \d+ days "
                            r"\d+:\d\d:\d\d left\)", clock):
            fail(f"the clock: {clock!r}")
        print(f"ok: the clock: {clock}")
        tally_contest("freeze", "cf")
        wait_frozen(True)
        # The page reloads itself once tallyd sees the freeze (each second).
        if browser.wait("document.querySelector('.frozen') !== null", 10) \
                is None:
            fail("the page never said the board is frozen")
        wait_live()
        browser.eval("window.sameLoad = true")
        push("f2", "bob", "sum", {"0": 1, "1": 1, "2": 1, "3": 1}, "cf",
             1767300000)  # after the freeze
        deadline = time.time() + 20
        while not any(r["participant"] == "bob" for r in
                      api("/api/contests/cf/ranking?view=private",
                          True)["rows"]):
            if time.time() > deadline:
                fail("bob's submission was not scored")
            time.sleep(0.1)
        time.sleep(1.5)
        if "bob" in browser.eval(ROWS):
            fail(f"the frozen board moved: {browser.eval(ROWS)}")
        push("f3", "carol", "sum", {"0": 1, "1": 0, "2": 0, "3": 0}, "cf",
             1767268000)  # before it, judged during it
        if browser.wait(ROWS + ".includes('\"carol\"')") is None:
            fail(f"a submission from before the freeze did not move the "
                 f"frozen board: {browser.eval(ROWS)}")
        if not browser.eval("window.sameLoad === true") or \
                "bob" in browser.eval(ROWS):
            fail(f"the frozen board reloaded or showed bob: "
                 f"{browser.eval(ROWS)}")
        tally_contest("unfreeze", "cf")
        if browser.wait(ROWS + ".includes('\"bob\"')", 10) is None or \
                browser.eval("document.querySelector('.frozen')") is not None:
            fail(f"unfrozen, the board did not show bob: "
                 f"{browser.eval(ROWS)}")
        print(f"ok: frozen, the board held for bob (after the freeze; the "
              f"private view had him) and moved for carol (before it); "
              f"unfrozen: {browser.eval(ROWS)}")
    finally:
        if browser is not None:
            browser.close()
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
