"""What the Python tests that run tallyd share: a redis-server of their
own on a Unix socket, tallyd started on it with its HTTP listener on a
free port, the wait for every job to be posted, and the cleanup.
Standard library only."""
import os
import re
import subprocess
import sys
import time


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def start_redis(tmp, procs):
    """A redis-server on tmp/redis.sock; returns its URL and socket."""
    sock = os.path.join(tmp, "redis.sock")
    procs.append(subprocess.Popen(
        ["redis-server", "--port", "0", "--unixsocket", sock, "--save", "",
         "--dir", tmp], stdout=subprocess.DEVNULL))
    for _ in range(100):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    return f"unix://{sock}", sock


def start_tallyd(build, args, log, procs):
    """tallyd with args (its --http on 127.0.0.1:0), its output in log;
    returns the process and the port it listens on."""
    p = subprocess.Popen([os.path.join(build, "tallyd")] + args +
                         ["--http", "127.0.0.1:0"],
                         stdout=open(log, "a"), stderr=subprocess.STDOUT)
    procs.append(p)
    for _ in range(300):
        with open(log) as f:
            m = re.search(r"http: listening on 127\.0\.0\.1:(\d+)", f.read())
        if m:
            return p, int(m.group(1))
        time.sleep(0.05)
    fail("tallyd did not listen")


def wait_posted(sock, n, timeout=60):
    """Waits until n jobs have a result or a dead letter."""
    deadline = time.time() + timeout
    while True:
        total = 0
        for key in ("tally:results", "tally:dead"):
            out = subprocess.run(["redis-cli", "-s", sock, "XLEN", key],
                                 capture_output=True, text=True).stdout
            total += int(out.strip() or 0)
        if total >= n:
            return
        if time.time() > deadline:
            fail(f"only {total} of {n} jobs were posted")
        time.sleep(0.2)


def stop_clean(tallyd, log):
    """Stops tallyd: it must exit 0 and its log hold no sanitizer report."""
    tallyd.terminate()
    if tallyd.wait(timeout=30) != 0:
        fail(f"tallyd exited with {tallyd.returncode}")
    with open(log, errors="replace") as f:
        said = f.read()
    for bad in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                "runtime error:"):
        if bad in said:
            fail(f"tallyd's log: {said[said.index(bad):][:2000]}")


def stop(procs):
    for p in procs:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
