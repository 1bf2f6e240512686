#!/usr/bin/env python3
"""A stand-in for CMS's Ranking Web Server, written from its protocol:
entities (contests, tasks, teams, users, submissions, subchanges) PUT as
JSON, one (PUT /<type>/<key>) or many (PUT /<type>/, an object of key ->
entity), with HTTP Basic credentials; keys of [A-Za-z0-9_]; each entity's
fields and types checked as the server checks them (a float must be
written as one; an int may not be a bool), and every reference checked
(a task's contest, a user's team, a submission's user and task, a
subchange's submission); a refused PUT changes nothing. Scores as the
server computes them: each subchange applied in (time, key) order to its
submission, and each user's task score under the task's score mode (max,
max_subtask over the submissions' extra, max_tokened_last).

GET /<type>/ lists a type; GET /scores gives {user: {task: score}};
GET /stats counts the PUTs (taken, refused) and the entities created and
updated. --state FILE keeps the entities across restarts; --fail-every N
answers every Nth PUT 503 without taking it. Prints "port N" once it
listens.

usage: rws_standin.py --username U --password P [--port N] [--state FILE]
       [--fail-every N]
"""
import argparse
import base64
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import zip_longest

TYPES = ["contests", "tasks", "teams", "users", "submissions", "subchanges"]
KEY = re.compile(r"^[A-Za-z0-9_]+$")


class Invalid(Exception):
    pass


def need(cond, what):
    if not cond:
        raise Invalid(what)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check(kind, d, store):
    need(isinstance(d, dict), "not an object")
    if kind == "contests":
        need(isinstance(d.get("name"), str), "name")
        need(is_int(d.get("begin")) and is_int(d.get("end")), "begin/end")
        need(d["begin"] <= d["end"], "begin after end")
        need(is_int(d.get("score_precision")) and d["score_precision"] >= 0,
             "score_precision")
    elif kind == "tasks":
        for f in ("name", "short_name", "contest", "score_mode"):
            need(isinstance(d.get(f), str), f)
        need(isinstance(d.get("max_score"), float), "max_score is no float")
        need(is_int(d.get("score_precision")), "score_precision")
        need(isinstance(d.get("extra_headers"), list) and
             all(isinstance(h, str) for h in d["extra_headers"]),
             "extra_headers")
        need(is_int(d.get("order")), "order")
        need(d["contest"] in store["contests"], "no such contest")
        need(d["score_mode"] in ("max", "max_subtask", "max_tokened_last"),
             "score_mode")
    elif kind == "teams":
        need(isinstance(d.get("name"), str), "name")
    elif kind == "users":
        need(isinstance(d.get("f_name"), str) and
             isinstance(d.get("l_name"), str), "names")
        need("team" in d, "team missing")
        need(d["team"] is None or d["team"] in store["teams"], "no such team")
    elif kind == "submissions":
        need(isinstance(d.get("user"), str) and isinstance(d.get("task"), str),
             "user/task")
        need(is_int(d.get("time")), "time")
        need(d["task"] in store["tasks"], "no such task")
        need(d["user"] in store["users"], "no such user")
    elif kind == "subchanges":
        need(isinstance(d.get("submission"), str), "submission")
        need(is_int(d.get("time")), "time")
        if "score" in d:
            need(isinstance(d["score"], float), "score is no float")
        if "token" in d:
            need(isinstance(d["token"], bool), "token")
        if "extra" in d:
            need(isinstance(d["extra"], list) and
                 all(isinstance(x, str) for x in d["extra"]), "extra")
        need(d["submission"] in store["submissions"], "no such submission")


def scores(store):
    """Every user's task scores, as the server's scoring computes them."""
    out = {}
    places = {}
    for sid, s in store["submissions"].items():
        places.setdefault((s["user"], s["task"]), []).append(sid)
    for (user, task), sids in places.items():
        mode = store["tasks"][task]["score_mode"]
        state = {sid: {"score": 0.0, "token": False, "extra": [],
                       "time": store["submissions"][sid]["time"]}
                 for sid in sids}
        changes = sorted(((c["time"], key, c) for key, c in
                          store["subchanges"].items()
                          if c["submission"] in state),
                         key=lambda x: (x[0], x[1]))
        last = None
        score = 0.0
        for _, _, c in changes:
            sub = state[c["submission"]]
            if "score" in c:
                sub["score"] = c["score"]
            if "token" in c:
                sub["token"] = c["token"]
            if "extra" in c:
                sub["extra"] = c["extra"]
            if "score" in c and (last is None or sub["time"] > last["time"]):
                last = sub
            if mode == "max":
                score = max([s["score"] for s in state.values()] + [0.0])
            elif mode == "max_subtask":
                per = [list(map(float, s["extra"] or [s["score"]]))
                       for s in state.values()]
                score = float(sum(max(x) for x in
                                  zip_longest(*per, fillvalue=0.0)))
            else:
                released = [s["score"] for s in state.values() if s["token"]]
                score = max(max(released + [0.0]),
                            last["score"] if last else 0.0)
        out.setdefault(user, {})[task] = score
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--username", required=True)
    ap.add_argument("--password", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--state")
    ap.add_argument("--fail-every", type=int, default=0)
    a = ap.parse_args()
    lock = threading.Lock()
    store = {t: {} for t in TYPES}
    if a.state:
        try:
            with open(a.state) as f:
                store.update(json.load(f))
        except FileNotFoundError:
            pass
    stats = {"taken": 0, "refused": 0, "failed": 0, "created": {},
             "updated": {}}
    puts = [0]
    want = "Basic " + base64.b64encode(
        f"{a.username}:{a.password}".encode()).decode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, status, body=None):
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            if status == 401:
                self.send_header("WWW-Authenticate",
                                 'Basic realm="Ranking"')
            if body is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            with lock:
                if self.path == "/scores":
                    return self.answer(200, scores(store))
                if self.path == "/stats":
                    return self.answer(200, stats)
                kind = self.path.strip("/")
                if kind in store:
                    return self.answer(200, store[kind])
            self.answer(404)

        def do_PUT(self):
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n)
            parts = self.path.split("/")
            with lock:
                puts[0] += 1
                if a.fail_every and puts[0] % a.fail_every == 0:
                    stats["failed"] += 1
                    return self.answer(503)
                if self.headers.get("Authorization") != want:
                    stats["refused"] += 1
                    return self.answer(401)
                if self.headers.get("Content-Type", "").split(";")[0] != \
                        "application/json":
                    stats["refused"] += 1
                    return self.answer(415)
                if len(parts) != 3 or parts[1] not in store:
                    return self.answer(404)
                kind = parts[1]
                try:
                    data = json.loads(raw)
                    if parts[2] != "":
                        data = {parts[2]: data}
                    need(isinstance(data, dict), "not an object")
                    # All checked against the store as it would be, then
                    # taken together, or none.
                    trial = {t: dict(v) for t, v in store.items()}
                    for key, d in data.items():
                        need(KEY.match(key), f"key {key!r}")
                        check(kind, d, trial)
                        trial[kind][key] = d
                except (ValueError, Invalid) as e:
                    stats["refused"] += 1
                    print(f"refused {kind}: {e}", file=sys.stderr)
                    return self.answer(400)
                for key, d in data.items():
                    which = "updated" if key in store[kind] else "created"
                    stats[which][kind] = stats[which].get(kind, 0) + 1
                    store[kind][key] = d
                stats["taken"] += 1
                if a.state:
                    with open(a.state + ".tmp", "w") as f:
                        json.dump(store, f)
                    import os
                    os.replace(a.state + ".tmp", a.state)
            self.answer(204)

    server = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
