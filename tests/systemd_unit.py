#!/usr/bin/env python3
"""dist/systemd/tallyd.service under a real systemd.

systemd runs as PID 1 of a new PID and mount namespace (the machine's own
PID 1 is not systemd), with a unit path of this test's own. The shipped
unit is installed with these changes only: the programs come from the
build folder (ExecStart, ExecPaths), the user is nobody (the test creates
no account), the state directory has a name of its own, and the unit has
no default dependencies (the namespace has no sysinit.target). Every
hardening option is kept as shipped, so that tallyd is seen to start,
score, reload, restart after a crash and stop under all of them together;
the test then reads from /proc that the options are in force.

Needs root. Usage: systemd_unit.py --build DIR --source DIR
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

SYSTEMD = "/lib/systemd/systemd"


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Namespace:
    """systemd as PID 1 of new PID and mount namespaces."""

    def __init__(self, unit_dir, log):
        env = dict(os.environ, SYSTEMD_UNIT_PATH=unit_dir)
        self.proc = subprocess.Popen(
            ["unshare", "--pid", "--fork", "--mount", "--mount-proc",
             "--propagation", "private", SYSTEMD, "--system",
             "--unit=tally-test.target", "--log-target=console"],
            env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        self.pid = None
        deadline = time.time() + 30
        while time.time() < deadline:
            self.pid = self.find_pid()
            if self.pid is not None:
                r = self.run(["systemctl", "is-system-running"], check=False)
                if r.stdout.strip() in ("running", "degraded"):
                    return
            time.sleep(0.2)
        fail("systemd did not come up in a PID namespace")

    def find_pid(self):
        """The outer pid of the namespace's systemd: unshare's child."""
        try:
            out = subprocess.run(["pgrep", "-P", str(self.proc.pid)],
                                 capture_output=True, text=True).stdout
        except OSError:
            return None
        pids = out.split()
        return int(pids[0]) if pids else None

    def run(self, argv, check=True):
        r = subprocess.run(["nsenter", "-t", str(self.pid), "-m", "-p"] + argv,
                           capture_output=True, text=True, timeout=120)
        if check and r.returncode != 0:
            fail(f"{' '.join(argv)}: exit {r.returncode}: {r.stdout}{r.stderr}")
        return r

    def show(self, unit, prop):
        return self.run(["systemctl", "show", "-p", prop, "--value",
                         unit]).stdout.strip()

    def close(self):
        if self.pid is not None:
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass
        self.proc.wait(timeout=30)


# What the unit hides from the service: PrivateTmp (/tmp, /var/tmp) and
# ProtectHome (/home, /root, /run/user).
HIDDEN = ("/tmp", "/var/tmp", "/home", "/root", "/run/user")


def hidden(path):
    p = os.path.realpath(path)
    return any(p == d or p.startswith(d + "/") for d in HIDDEN)


def install_unit(source, build, work, state, port):
    with open(os.path.join(source, "dist/systemd/tallyd.service")) as f:
        unit = f.read()
    # The tasks are copied beside the config: the source may be where the
    # service cannot see (a clone under /tmp).
    tasks = os.path.join(work, "tasks")
    shutil.copytree(os.path.join(source, "examples/tasks"), tasks)
    subprocess.run(["chmod", "-R", "a+rX", tasks], check=True)
    config = os.path.join(work, "tallyd.json")
    with open(config, "w") as f:
        json.dump({"tasks": tasks, "http": f"127.0.0.1:{port}",
                   "workers": 2}, f)
    os.chmod(config, 0o644)
    changes = [
        ("ExecStart=/usr/local/bin/tallyd --config /etc/tally/tallyd.json",
         f"ExecStart={build}/tallyd --config {config}"),
        ("ExecPaths=/usr/local/bin", f"ExecPaths={build}"),
        ("User=tally", "User=nobody"),
        ("Group=tally", "Group=nogroup"),
        ("StateDirectory=tally", f"StateDirectory={state}"),
        ("WorkingDirectory=/var/lib/tally",
         f"WorkingDirectory=/var/lib/{state}"),
        ("WatchdogSec=30", "WatchdogSec=2"),
        ("Wants=network-online.target\n", ""),
        ("[Unit]\n", "[Unit]\nDefaultDependencies=no\n"),
    ]
    for old, new in changes:
        if old not in unit:
            fail(f"the unit no longer has {old!r}")
        unit = unit.replace(old, new, 1)
    units = os.path.join(work, "units")
    os.makedirs(units)
    with open(os.path.join(units, "tallyd.service"), "w") as f:
        f.write(unit)
    with open(os.path.join(units, "tally-test.target"), "w") as f:
        f.write("[Unit]\nDescription=tally's systemd test\n")
    return units


def hardening_options(unit_text):
    opts = []
    part = unit_text.split("# Hardening", 1)[1].split("[Install]")[0]
    for line in part.splitlines():
        if "=" in line and not line.startswith("#"):
            opts.append(line.split("=", 1)[0])
    return opts


def status_of(ns, pid):
    return ns.run(["cat", f"/proc/{pid}/status"]).stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--from-tmp", action="store_true",
                    help="run the programs from a copy under /tmp, as a "
                    "clone there would (the unit hides /tmp from tallyd)")
    a = ap.parse_args()
    build, source = os.path.abspath(a.build), os.path.abspath(a.source)
    if os.geteuid() != 0:
        fail("needs root (it runs systemd in a PID namespace)")
    if a.from_tmp:
        copy = tempfile.mkdtemp(prefix="tally-build-")
        for name in ("tallyd", "tally-worker", "tally"):
            shutil.copy2(os.path.join(build, name), copy)
        try:
            test_in(copy, source)
        finally:
            shutil.rmtree(copy, ignore_errors=True)
        return
    test_in(build, source)


def test_in(build, source):
    # The service's /tmp is private and home folders are hidden from it:
    # the test's files live in the build folder, readable by nobody, or,
    # when the build folder is where the service cannot see it (a clone
    # under /tmp), in a folder of /var/lib with copies of the programs
    # (not /run, which systemd mounts anew).
    if hidden(build):
        work = tempfile.mkdtemp(prefix="tally-systemd-test-", dir="/var/lib")
        programs = os.path.join(work, "bin")
        os.makedirs(programs)
        for name in ("tallyd", "tally-worker", "tally"):
            shutil.copy2(os.path.join(build, name), programs)
        subprocess.run(["chmod", "-R", "a+rX", programs], check=True)
    else:
        work = tempfile.mkdtemp(prefix="systemd-test-", dir=build)
        programs = build
    os.chmod(work, 0o755)
    state = f"tally-test-{os.getpid()}"
    try:
        run_test(programs, source, work, state)
    finally:
        shutil.rmtree(f"/var/lib/{state}", ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


def run_test(build, source, work, state):
    port = free_port()
    units = install_unit(source, build, work, state, port)
    unit_file = os.path.join(units, "tallyd.service")

    # The unit passes systemd's own check.
    r = subprocess.run(["systemd-analyze", "verify", unit_file],
                       capture_output=True, text=True,
                       env=dict(os.environ, SYSTEMD_UNIT_PATH=units + ":"))
    # The one complaint allowed is about the test's own change of user.
    said = [line for line in r.stderr.splitlines()
            if "Special user nobody configured" not in line]
    if r.returncode != 0 or said:
        fail(f"systemd-analyze verify: {r.stdout}{r.stderr}")

    log = open(os.path.join(work, "systemd.log"), "w")
    ns = Namespace(units, log)
    try:
        # Type=notify: start returns once tallyd said READY=1.
        ns.run(["systemctl", "start", "tallyd.service"])
        if ns.show("tallyd", "ActiveState") != "active":
            fail("tallyd is not active after start")
        pid = ns.show("tallyd", "MainPID")
        st = status_of(ns, pid)
        want = {"NoNewPrivs": "1", "Seccomp": "2",
                "CapBnd": "0000000000000000", "CapEff": "0000000000000000"}
        for key, value in want.items():
            m = re.search(rf"^{key}:\s*(\S+)", st, re.M)
            if not m or m.group(1) != value:
                fail(f"{key} is {m.group(1) if m else None}, not {value}")
        uid = re.search(r"^Uid:\s*(\d+)", st, re.M).group(1)
        if uid != str(65534):
            fail(f"tallyd runs as uid {uid}, not nobody")
        # Of its threads, the HTTP one alone runs at nice 19 (the filter
        # lets setpriority through, and nothing else of @resources).
        nices = []
        for tid in ns.run(["ls", f"/proc/{pid}/task"]).stdout.split():
            stat = ns.run(["cat", f"/proc/{pid}/task/{tid}/stat"]).stdout
            nices.append(int(stat.rsplit(")", 1)[1].split()[16]))
        if sorted(nices)[-1] != 19 or nices.count(19) != 1 or nices[0] != 0:
            fail(f"the threads' nice values are {nices}, not one 19 and "
                 "the main thread 0")
        # PrivateTmp, ProtectHome, ProtectSystem and NoExecPaths: in its
        # mounts.
        mounts = {}
        for line in ns.run(["cat", f"/proc/{pid}/mountinfo"]).stdout.splitlines():
            f = line.split()
            mounts[f[4]] = f[5].split(",")
        for where in ("/tmp", "/home", "/"):
            if where not in mounts:
                fail(f"no mount of {where} in tallyd's namespace: {mounts}")
        if "ro" not in mounts["/"]:
            fail(f"/ is not read-only for tallyd: {mounts['/']}")
        if "noexec" not in mounts["/"] or "noexec" in mounts.get(build, []):
            fail(f"NoExecPaths and ExecPaths are not in force: {mounts}")
        # Its workers and its embedded Redis run, and it scores.
        sock = f"/var/lib/{state}/redis.sock"
        url = f"unix://{sock}"
        r = subprocess.run([f"{build}/tally", "submit", "--redis", url,
                            os.path.join(source, "examples/jobs.jsonl")],
                           capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"tally submit: {r.stdout}{r.stderr}")
        jobs = int(re.search(r"submitted (\d+) jobs", r.stdout + r.stderr).group(1))
        deadline = time.time() + 30
        while True:
            body = urllib.request.urlopen(
                f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
            m = re.search(r'^tally_jobs_total\{outcome="scored"\} (\S+)',
                          body, re.M)
            d = re.search(r'^tally_jobs_total\{outcome="dead_lettered"\} (\S+)',
                          body, re.M)
            if float(m.group(1)) + float(d.group(1)) >= jobs:
                break
            if time.time() > deadline:
                fail(f"{jobs} jobs not scored under the unit:\n{body}")
            time.sleep(0.2)
        ready = urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz",
                                       timeout=5).read().decode()
        if ready != "ready\n":
            fail(f"/readyz: {ready}")
        # The watchdog is fed, and STATUS= shows the rate and the lag.
        w1 = ns.show("tallyd", "WatchdogTimestampMonotonic")
        time.sleep(2.5)
        w2 = ns.show("tallyd", "WatchdogTimestampMonotonic")
        if w1 == w2 or w2 in ("", "0"):
            fail(f"the watchdog timestamp did not move ({w1}, {w2})")
        deadline = time.time() + 10
        while "jobs/s, lag" not in ns.show("tallyd", "StatusText"):
            if time.time() > deadline:
                fail("no STATUS= with the rate: "
                     + ns.show("tallyd", "StatusText"))
            time.sleep(0.5)
        # Reload: SIGHUP, RELOADING=1, READY=1; still the same process.
        ns.run(["systemctl", "reload", "tallyd.service"])
        deadline = time.time() + 10
        while ns.show("tallyd", "ActiveState") != "active":
            if time.time() > deadline:
                fail("not active again after a reload")
            time.sleep(0.2)
        if ns.show("tallyd", "MainPID") != pid:
            fail("a reload restarted tallyd")
        body = urllib.request.urlopen(
            f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        if 'tally_config_reloads_total{result="accepted"} 1\n' not in body:
            fail(f"tallyd did not count the reload:\n{body}")
        # Restart=on-failure: a crash brings a new tallyd.
        ns.run(["kill", "-KILL", pid])
        deadline = time.time() + 30
        while not (ns.show("tallyd", "NRestarts") == "1" and
                   ns.show("tallyd", "ActiveState") == "active"):
            if time.time() > deadline:
                log.flush()
                with open(os.path.join(work, "systemd.log")) as f:
                    tail = "".join(f.readlines()[-60:])
                fail("tallyd was not restarted after SIGKILL: "
                     + ns.show("tallyd", "ActiveState") + ", NRestarts "
                     + ns.show("tallyd", "NRestarts") + ", MainPID "
                     + ns.show("tallyd", "MainPID") + " (killed " + pid
                     + "); systemd's log ends:\n" + tail)
            time.sleep(0.2)
        # Stop: STOPPING=1, a drain, exit 0.
        ns.run(["systemctl", "stop", "tallyd.service"])
        result = ns.show("tallyd", "Result")
        status = ns.show("tallyd", "ExecMainStatus")
        if result != "success" or status != "0":
            fail(f"stop: result {result}, exit status {status}")
        with open(unit_file) as f:
            kept = hardening_options(f.read())
        print(f"ok: tallyd started, finished {jobs} jobs, reloaded, restarted "
              f"and stopped under {len(kept)} hardening options: "
              + " ".join(kept))
    finally:
        ns.close()
        log.close()


if __name__ == "__main__":
    main()
