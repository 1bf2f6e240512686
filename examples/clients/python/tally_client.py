#!/usr/bin/python3
"""A platform's side of tally, in Python with Debian's python3-redis.

Pushes the jobs of a JSON-lines file to tallyd's queue, then follows three
streams until every job has its outcome: the results (each one's body read
from the key its entry names), the dead letters (jobs that can never be
scored: reported, not retried), and the contestant events of one contest
(a large view read from its key). docs/protocol.md describes every key.

    tally_client.py [--redis URL] [--prefix P] [--contest C] JOBS.jsonl
"""
import argparse
import json
import sys

import redis


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis", default="unix:///var/lib/tally/redis.sock")
    ap.add_argument("--prefix", default="tally")
    ap.add_argument("--contest", default="default")
    ap.add_argument("jobs")
    a = ap.parse_args()
    r = redis.Redis.from_url(a.redis, decode_responses=True)
    p = a.prefix
    streams = {f"{p}:results": "$", f"{p}:dead": "$", f"{p}:public": "$"}
    # Where each stream ends now: what follows is ours (XREAD from "$" would
    # miss what is posted between the XADDs and the first read).
    for key in streams:
        last = r.xrevrange(key, count=1)
        streams[key] = last[0][0] if last else "0"

    # Push: one XADD per job, field "job"; the entry id names the job in
    # its result or dead letter. A pipeline sends them in one round trip.
    with open(a.jobs) as f:
        jobs = [line.strip() for line in f if line.strip()]
    pipe = r.pipeline(transaction=False)
    for job in jobs:
        pipe.xadd(f"{p}:jobs", {"job": job})
    waiting = set(pipe.execute())
    print(f"pushed {len(waiting)} jobs")

    while waiting:
        for key, entries in r.xread(streams, block=5000, count=100):
            streams[key] = entries[-1][0]
            if key == f"{p}:results":
                # Each entry names the key of its result's body: GET them
                # all in one round trip.
                pipe = r.pipeline(transaction=False)
                for _, fields in entries:
                    pipe.get(fields["body"])
                for (_, fields), body in zip(entries, pipe.execute()):
                    waiting.discard(fields["entry"])
                    if body is None:  # trimmed or expired already
                        print(f"result of {fields['entry']}: gone")
                        continue
                    res = json.loads(body)
                    print(f"result {res.get('submission')}: {res['score']}/"
                          f"{res['max_score']} (public "
                          f"{res.get('public_score')})")
            elif key == f"{p}:dead":
                # A job that can never be scored: its error names the cause.
                # Fix the job and XADD it anew; tallyd never retries it.
                for _, fields in entries:
                    waiting.discard(fields["id"])
                    try:  # the job's text may be what is wrong
                        sub = json.loads(fields["job"]).get("submission")
                    except (ValueError, AttributeError):
                        sub = None
                    print(f"dead letter {sub}: {fields['error']}")
            else:
                for _, fields in entries:
                    ev = json.loads(fields["event"])
                    if ev.get("contest") != a.contest:
                        continue
                    view = ev.get("view")
                    if "view_key" in ev:  # a large view lives in its own key
                        view = json.loads(r.get(ev["view_key"]) or "null")
                    score = (ev.get("task_score") or {}).get("score")
                    print(f"event {ev['type']} {ev.get('participant')} "
                          f"{ev.get('task')}: view "
                          f"{(view or {}).get('score')}, task score {score}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
