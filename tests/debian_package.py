#!/usr/bin/env python3
"""The Debian package, built, linted, installed, run, upgraded and removed.

Builds tally_<version>_<arch>.deb from the source with dpkg-buildpackage,
and again with a higher version; runs lintian on both (no tag but those
debian/tally.lintian-overrides overrides with a reason); makes a clean
Debian 12 root with debootstrap; installs the package there with apt
(which brings what it depends on), boots systemd in that root as PID 1 of
a new PID namespace, and checks that tallyd.service came up enabled under
the `tally` account and scores the example jobs. Then, while jobs flow,
it upgrades to the higher version inside the running root (postinst
restarts tallyd on the new programs) and checks that every job has
exactly one result and the operator's change to the conffile was kept;
then removes the package (tallyd stopped, state kept) and purges it
(config, state and the statoverride gone).

Needs root and Debian's package registry. Every mount is made in a mount
namespace of the test's own, which ends with it, and the root is deleted
only from outside that namespace.

Usage: debian_package.py --source DIR [--work DIR] [--keep]
"""
import argparse
import datetime
import email.utils
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

MIRROR = "http://deb.debian.org/debian"
# Where the test puts files for the root (not /tmp: the booted root mounts
# a tmpfs there).
DROP = "/srv/tally-test"
UPGRADE_VERSION_SUFFIX = "+test1"


def fail(msg):
    print("FAIL:", msg, file=sys.stderr, flush=True)
    sys.exit(1)


def say(msg):
    print(msg, flush=True)


def run(argv, check=True, **kw):
    r = subprocess.run(argv, capture_output=True, text=True, **kw)
    if check and r.returncode != 0:
        fail(f"{' '.join(argv)}: exit {r.returncode}:\n{r.stdout}{r.stderr}")
    return r


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# ---------------------------------------------------------------------------
# Building and linting


def copy_source(source, dest):
    """The files git knows (tracked, or new and not ignored), as a clean
    clone has them; without git, the tree less its build folders."""
    if os.path.isdir(os.path.join(source, ".git")):
        out = run(["git", "-C", source, "ls-files", "-z", "--cached",
                   "--others", "--exclude-standard"]).stdout
        for rel in filter(None, out.split("\0")):
            src = os.path.join(source, rel)
            if not os.path.isfile(src):
                continue  # deleted in the work tree
            os.makedirs(os.path.join(dest, os.path.dirname(rel)),
                        exist_ok=True)
            shutil.copy2(src, os.path.join(dest, rel))
    else:
        shutil.copytree(source, dest, ignore=shutil.ignore_patterns(
            "build", "build-*", "tally-data"), dirs_exist_ok=True)


def version_of(src):
    with open(os.path.join(src, "debian/changelog")) as f:
        return re.match(r"tally \(([^)]+)\)", f.readline()).group(1)


def build(source, work, name, new_version=None):
    """dpkg-buildpackage -b in a copy of the source; the .deb's path."""
    top = os.path.join(work, name)
    src = os.path.join(top, "tally")
    os.makedirs(src)
    copy_source(source, src)
    if new_version:
        with open(os.path.join(src, "debian/changelog")) as f:
            old = f.read()
        # A day after the entry before it (lintian wants a newer date).
        last = re.search(r"^ -- .*>  (.+)$", old, re.M).group(1)
        stamp = email.utils.format_datetime(
            email.utils.parsedate_to_datetime(last) + datetime.timedelta(days=1))
        with open(os.path.join(src, "debian/changelog"), "w") as f:
            f.write(f"tally ({new_version}) unstable; urgency=medium\n\n"
                    "  * Rebuilt by tests/debian_package.py to test an "
                    "upgrade.\n\n"
                    " -- tally developers <maintainers@users.noreply."
                    f"a-seed-6bd36f3c.example>  {stamp}\n\n" + old)
    env = dict(os.environ,
               DEB_BUILD_OPTIONS=f"parallel={os.cpu_count() or 2} nocheck")
    t0 = time.time()
    r = subprocess.run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=src,
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"dpkg-buildpackage: exit {r.returncode}:\n"
             f"{r.stdout[-6000:]}{r.stderr[-4000:]}")
    version = version_of(src)
    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    deb = os.path.join(top, f"tally_{version}_{arch}.deb")
    if not os.path.exists(deb):
        fail(f"dpkg-buildpackage made no {deb}: {os.listdir(top)}")
    say(f"ok: built {os.path.basename(deb)} in {time.time() - t0:.0f} s")
    return deb, os.path.join(top, f"tally_{version}_{arch}.changes")


def lint(changes):
    """lintian on the .changes (the .deb and its debug symbols): every
    tag, info and pedantic ones included, is a failure unless overridden."""
    r = run(["lintian", "--info", "--pedantic", "--display-experimental",
             "--tag-display-limit", "0", changes], check=False)
    tags = [line for line in r.stdout.splitlines()
            if re.match(r"^[EWIPX]: ", line)]
    if tags or r.returncode not in (0,):
        fail(f"lintian on {os.path.basename(changes)} (exit {r.returncode}):"
             f"\n{r.stdout}{r.stderr}")
    say(f"ok: lintian clean on {os.path.basename(changes)}")


def check_contents(deb):
    names = run(["dpkg-deb", "-c", deb]).stdout
    for path in ("./usr/bin/tally", "./usr/bin/tallyd",
                 "./usr/bin/tally-worker", "./lib/systemd/system/tallyd.service",
                 "./etc/tally/tallyd.json", "./etc/tally/tasks/sum.json",
                 "./usr/share/man/man1/tally.1.gz",
                 "./usr/share/man/man8/tallyd.8.gz",
                 "./usr/share/doc/tally/examples/jobs.jsonl",
                 "./usr/share/doc/tally/protocol.md.gz"):
        if not re.search(rf"\s{re.escape(path)}$", names, re.M):
            fail(f"the package has no {path}:\n{names}")
    conffiles = run(["dpkg-deb", "-f", deb, "Conffiles"], check=False).stdout
    with tempfile.TemporaryDirectory() as d:
        run(["dpkg-deb", "-e", deb, d])
        with open(os.path.join(d, "conffiles")) as f:
            conffiles = f.read().split()
    if "/etc/tally/tallyd.json" not in conffiles:
        fail(f"/etc/tally/tallyd.json is not a conffile: {conffiles}")


# ---------------------------------------------------------------------------
# The clean root


def make_root(root, mirror):
    t0 = time.time()
    r = subprocess.run(["debootstrap", "--variant=minbase", "bookworm", root,
                        mirror], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"debootstrap: exit {r.returncode}:\n{r.stdout[-3000:]}"
             f"{r.stderr[-3000:]}")
    say(f"ok: a clean bookworm root by debootstrap in {time.time() - t0:.0f} s")


def mount_api(root, console):
    """/proc, /sys and /dev for apt and systemd, in this process's own
    mount namespace."""
    run(["mount", "--make-rprivate", "/"])
    # The root a mount point of its own, as a container's is: systemd's
    # namespacing of a unit (ProtectSystem, PrivateTmp, ...) needs it.
    run(["mount", "--bind", root, root])
    run(["mount", "-t", "proc", "proc", f"{root}/proc"])
    run(["mount", "--rbind", "/sys", f"{root}/sys"])
    run(["mount", "--make-rslave", f"{root}/sys"])
    # A /dev of the root's own, as a container has: the host's harmless
    # nodes, a private devpts and shm, no terminals of the host.
    dev = f"{root}/dev"
    run(["mount", "-t", "tmpfs", "-o", "mode=755,nosuid", "tmpfs", dev])
    for node in ("null", "zero", "full", "random", "urandom", "tty"):
        open(f"{dev}/{node}", "w").close()
        run(["mount", "--bind", f"/dev/{node}", f"{dev}/{node}"])
    # The console is a file of the test's, which keeps what is written
    # to it.
    open(console, "a").close()
    open(f"{dev}/console", "w").close()
    run(["mount", "--bind", console, f"{dev}/console"])
    os.makedirs(f"{dev}/pts")
    run(["mount", "-t", "devpts", "-o", "newinstance,ptmxmode=0666,mode=620",
         "devpts", f"{dev}/pts"])
    os.symlink("pts/ptmx", f"{dev}/ptmx")
    os.makedirs(f"{dev}/shm")
    run(["mount", "-t", "tmpfs", "-o", "mode=1777,nosuid,nodev", "tmpfs",
         f"{dev}/shm"])
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{dev}/{name}")
    shutil.copy("/etc/resolv.conf", f"{root}/etc/resolv.conf")


def in_root(root, argv, check=True, env=None):
    """A command in the root before systemd runs there."""
    e = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
         "DEBIAN_FRONTEND": "noninteractive", "HOME": "/root"}
    e.update(env or {})
    return run(["chroot", root] + argv, check=check, env=e)


def install_first(root, deb):
    """apt installs the package and systemd, no service started: a
    policy-rc.d answers 101, as for any image built before it boots."""
    os.makedirs(f"{root}{DROP}", exist_ok=True)
    shutil.copy(deb, f"{root}{DROP}/")
    policy = f"{root}/usr/sbin/policy-rc.d"
    with open(policy, "w") as f:
        f.write("#!/bin/sh\nexit 101\n")
    os.chmod(policy, 0o755)
    t0 = time.time()
    in_root(root, ["apt-get", "update", "-qq"])
    in_root(root, ["apt-get", "install", "-y", "-qq",
                   "--no-install-recommends", "systemd", "systemd-sysv",
                   f"{DROP}/" + os.path.basename(deb)])
    os.unlink(policy)
    # Debian's redis-server enables its own service; the test's root runs
    # only tallyd's embedded Redis.
    in_root(root, ["systemctl", "disable", "redis-server.service"],
            check=False)
    # No logins in a root that has no terminals.
    in_root(root, ["systemctl", "mask", "getty.target",
                   "console-getty.service", "getty-static.service"])
    say(f"ok: apt installed {os.path.basename(deb)} and what it depends on "
        f"in {time.time() - t0:.0f} s")


# ---------------------------------------------------------------------------
# systemd in the root


class Booted:
    """systemd as PID 1 of a new PID and mount namespace whose root is
    the test's root."""

    def __init__(self, root, log):
        self.root = root
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "container": "tally-test",
               "LANG": "C.UTF-8"}
        # pivot_root, not chroot: the kernel lets no process in a chroot
        # make a user namespace, and the unit's PrivateUsers= makes one.
        boot = (f"mount -t proc proc {root}/proc && cd {root} && "
                "mkdir -p .oldroot && pivot_root . .oldroot && "
                "exec /bin/sh -c 'umount -l /.oldroot && rmdir /.oldroot && "
                "exec /lib/systemd/systemd --system --log-target=journal "
                "--show-status=false'")
        self.proc = subprocess.Popen(
            ["unshare", "--pid", "--fork", "--mount", "--propagation",
             "private", "/bin/sh", "-c", boot],
            env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        self.pid = None
        deadline = time.time() + 60
        state = None
        while time.time() < deadline:
            self.pid = self.find_pid()
            if self.pid is not None:
                r = self.run(["systemctl", "is-system-running"], check=False)
                state = r.stdout.strip()
                if state in ("running", "degraded"):
                    return
            time.sleep(0.3)
        fail(f"systemd did not boot in the root (state {state})")

    def find_pid(self):
        out = run(["pgrep", "-P", str(self.proc.pid)], check=False).stdout
        pids = out.split()
        return int(pids[0]) if pids else None

    def run(self, argv, check=True, timeout=300):
        r = subprocess.run(
            ["nsenter", "-t", str(self.pid), "-m", "-p", "-r", "-w"] + argv,
            capture_output=True, text=True, timeout=timeout,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
                 "DEBIAN_FRONTEND": "noninteractive", "HOME": "/root"})
        if check and r.returncode != 0:
            fail(f"in the root: {' '.join(argv)}: exit {r.returncode}:\n"
                 f"{r.stdout}{r.stderr}")
        return r

    def show(self, unit, prop):
        return self.run(["systemctl", "show", "-p", prop, "--value",
                         unit]).stdout.strip()

    def journal(self, unit):
        return self.run(["journalctl", "--no-pager", "-u", unit, "-n", "80"],
                        check=False).stdout

    def close(self):
        if self.pid is not None:
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass
        self.proc.wait(timeout=60)


REDIS = "unix:///var/lib/tally/redis.sock"


def wait_active(ns, what, timeout=60):
    deadline = time.time() + timeout
    while ns.show("tallyd", "ActiveState") != "active":
        if time.time() > deadline:
            fail(f"tallyd is not active {what}: "
                 + ns.show("tallyd", "ActiveState") + "\n"
                 + ns.journal("tallyd"))
        time.sleep(0.3)


def metric(port, name, labels):
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                  timeout=5).read().decode()
    m = re.search(rf"^{name}\{{{re.escape(labels)}\}} (\S+)$", body, re.M)
    return float(m.group(1)) if m else 0.0


def results(ns):
    """Each result's (submission, job entry id) from the results stream."""
    r = ns.run(["tally", "results", "--redis", REDIS, "--from", "0",
                "--no-follow", "--count", "1000000"])
    out = []
    for line in r.stdout.splitlines():
        if line.strip():
            doc = json.loads(line)
            out.append((doc.get("submission"), doc.get("id")))
    return out


def wait_results(ns, want, what, timeout=120):
    deadline = time.time() + timeout
    while True:
        got = results(ns)
        if len(got) >= want or time.time() > deadline:
            return got
        time.sleep(0.5)


def jobs_file(source, prefix, copies):
    """The example jobs, each submission id made unique per copy."""
    with open(os.path.join(source, "examples/jobs.jsonl")) as f:
        jobs = [json.loads(line) for line in f if line.strip()]
    lines = []
    for i in range(copies):
        for job in jobs:
            j = dict(job)
            j["submission"] = f"{prefix}-{i}-{job['submission']}"
            lines.append(json.dumps(j))
    return lines


def test_booted(root, ns, source, deb2, port):
    # Enabled, started at boot (the config exists), as the tally account.
    if ns.run(["systemctl", "is-enabled", "tallyd.service"],
              check=False).stdout.strip() != "enabled":
        fail("tallyd.service is not enabled after the install")
    wait_active(ns, "after boot")
    pid = ns.show("tallyd", "MainPID")
    st = ns.run(["cat", f"/proc/{pid}/status"]).stdout
    uid = re.search(r"^Uid:\s*(\d+)", st, re.M).group(1)
    want_uid = ns.run(["id", "-u", "tally"]).stdout.strip()
    if uid != want_uid:
        fail(f"tallyd runs as uid {uid}, not tally's {want_uid}")
    shell = ns.run(["getent", "passwd", "tally"]).stdout.strip()
    if not shell.endswith(":/usr/sbin/nologin") or ":/var/lib/tally:" not in shell:
        fail(f"the tally account is not a system account as expected: {shell}")
    mode = ns.run(["stat", "-c", "%a %U %G", "/etc/tally/tallyd.json"]).stdout
    if mode.split() != ["640", "root", "tally"]:
        fail(f"/etc/tally/tallyd.json is {mode.strip()}, not 640 root tally")
    # The operator moves the HTTP listener (a conffile change the upgrade
    # must keep), and restarts.
    conf_path = f"{root}/etc/tally/tallyd.json"
    with open(conf_path) as f:
        conf = json.load(f)
    conf["http"] = f"127.0.0.1:{port}"
    with open(conf_path, "w") as f:
        json.dump(conf, f, indent=2)
        f.write("\n")
    ns.run(["systemctl", "restart", "tallyd.service"])
    wait_active(ns, "after a restart")
    ready = urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz",
                                   timeout=5).read().decode()
    if ready != "ready\n":
        fail(f"/readyz: {ready}")

    # The example jobs, with the package's tally, against the package's
    # tallyd; the same scores as tally score gives offline in the root.
    ns.run(["tally", "submit", "--redis", REDIS,
            "/usr/share/doc/tally/examples/jobs.jsonl"])
    got = wait_results(ns, 5, "the example jobs")
    if len(got) != 5:
        fail(f"{len(got)} results of the 5 example jobs")
    offline = ns.run(["tally", "score", "--tasks", "/etc/tally/tasks",
                      "/usr/share/doc/tally/examples/jobs.jsonl"],
                     check=False).stdout
    scores = [json.loads(line).get("score") for line in offline.splitlines()
              if line.strip()]
    ranking = ns.run(["tally", "ranking", "--redis", REDIS, "--contest",
                      "default", "--json"]).stdout
    if not json.loads(ranking):
        fail(f"no ranking for the example contest: {ranking}")
    say(f"ok: tallyd.service enabled and started at boot as tally, scored "
        f"the 5 example jobs (offline scores {scores})")

    # The upgrade, while jobs flow.
    shutil.copy(deb2, f"{root}{DROP}/")
    old_pid = ns.show("tallyd", "MainPID")
    flow = jobs_file(source, "up", 300)  # 1,500 jobs
    batches = [flow[i:i + 25] for i in range(0, len(flow), 25)]
    errors = []
    sent_at = []

    def pump():
        for n, batch in enumerate(batches):
            path = f"{root}{DROP}/batch-{n}.jsonl"
            with open(path, "w") as f:
                f.write("\n".join(batch) + "\n")
            r = ns.run(["tally", "submit", "--redis", REDIS,
                        f"{DROP}/batch-{n}.jsonl"], check=False)
            if r.returncode != 0:
                # tallyd's Redis restarts with it: the batch is sent again.
                time.sleep(0.5)
                r = ns.run(["tally", "submit", "--redis", REDIS,
                            f"{DROP}/batch-{n}.jsonl"], check=False)
                while r.returncode != 0 and len(errors) < 100:
                    errors.append(r.stderr.strip())
                    time.sleep(0.5)
                    r = ns.run(["tally", "submit", "--redis", REDIS,
                                f"{DROP}/batch-{n}.jsonl"], check=False)
            sent_at.append(time.time())
            time.sleep(0.1)

    t = threading.Thread(target=pump)
    t.start()
    time.sleep(1.0)
    t0 = time.time()
    ns.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends",
            f"{DROP}/" + os.path.basename(deb2)])
    t1 = time.time()
    upgrade_s = t1 - t0
    t.join()
    before = sum(1 for x in sent_at if x < t0)
    after = sum(1 for x in sent_at if x > t1)
    if before == 0 or after == 0:
        fail(f"the jobs did not flow through the upgrade: {before} batches "
             f"before it, {after} after")
    wait_active(ns, "after the upgrade")
    new_pid = ns.show("tallyd", "MainPID")
    if new_pid == old_pid:
        fail("the upgrade did not restart tallyd")
    version = ns.run(["dpkg-query", "-W", "-f", "${Version}", "tally"]).stdout
    if not version.endswith(UPGRADE_VERSION_SUFFIX):
        fail(f"the installed version is {version}")
    with open(conf_path) as f:
        if json.load(f).get("http") != f"127.0.0.1:{port}":
            fail("the upgrade did not keep the operator's tallyd.json")
    want = 5 + len(flow)
    got = wait_results(ns, want, "the jobs sent during the upgrade")
    subs = [s for s, _ in got]
    entries = [e for _, e in got]
    missing = {json.loads(line)["submission"] for line in flow} - set(subs)
    if missing:
        fail(f"{len(missing)} jobs sent during the upgrade have no result: "
             f"{sorted(missing)[:10]}")
    if len(set(entries)) != len(entries):
        fail("a job has two results")
    dead = ns.run(["tally", "results", "--redis", REDIS, "--dead", "--from",
                   "0", "--no-follow"]).stdout.strip()
    if dead:
        fail(f"dead letters after the upgrade: {dead[:2000]}")
    say(f"ok: upgraded to {version} in {upgrade_s:.1f} s while "
        f"{len(flow)} jobs flowed ({before} batches of 25 before, "
        f"{len(batches) - before - after} during, {after} after; submit "
        f"retried {len(errors)} times): "
        f"tallyd restarted ({old_pid} -> {new_pid}), every job one result, "
        f"the operator's tallyd.json kept")

    # Removal stops tallyd and keeps config and state; purge takes both.
    ns.run(["apt-get", "remove", "-y", "-qq", "tally"])
    state = ns.show("tallyd", "ActiveState")
    if state not in ("inactive", ""):
        fail(f"tallyd is {state} after the package's removal")
    for path in ("/usr/bin/tallyd", "/usr/bin/tally"):
        if os.path.exists(root + path):
            fail(f"{path} is still there after removal")
    for path in ("/etc/tally/tallyd.json", "/var/lib/tally"):
        if not os.path.exists(root + path):
            fail(f"removal took {path}; only a purge may")
    ns.run(["apt-get", "purge", "-y", "-qq", "tally"])
    for path in ("/etc/tally", "/var/lib/tally",
                 "/etc/systemd/system/multi-user.target.wants/tallyd.service"):
        if os.path.lexists(root + path):
            fail(f"{path} is still there after purge")
    overrides = ns.run(["dpkg-statoverride", "--list"], check=False).stdout
    if "tallyd.json" in overrides:
        fail(f"the statoverride outlived the purge: {overrides}")
    say("ok: removal stopped tallyd and kept /etc/tally and /var/lib/tally; "
        "purge removed both")


def inner(a):
    """In a mount namespace of its own: mounts, install, boot, tests."""
    root = a.root
    mount_api(root, os.path.join(a.work, "console.log"))
    install_first(root, a.deb1)
    port = free_port()
    log = open(os.path.join(a.work, "systemd.log"), "w")
    ns = Booted(root, log)
    try:
        test_booted(root, ns, a.source, a.deb2, port)
    finally:
        ns.close()
        log.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", help="a folder for the builds and the root "
                    "(default: a new one in /var/tmp)")
    ap.add_argument("--mirror", default=MIRROR)
    ap.add_argument("--keep", action="store_true",
                    help="keep the work folder")
    ap.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--root", help=argparse.SUPPRESS)
    ap.add_argument("--deb1", help=argparse.SUPPRESS)
    ap.add_argument("--deb2", help=argparse.SUPPRESS)
    a = ap.parse_args()
    a.source = os.path.abspath(a.source)
    if a.inner:
        inner(a)
        return
    if os.geteuid() != 0:
        fail("needs root (debootstrap, chroot, systemd in a PID namespace)")
    for tool in ("dpkg-buildpackage", "lintian", "debootstrap", "dh"):
        if shutil.which(tool) is None:
            fail(f"{tool} is not installed (scripts/test installs it)")
    # Not under /tmp: the root's systemd units would see a private /tmp.
    work = a.work or tempfile.mkdtemp(prefix="tally-deb-test-", dir="/var/tmp")
    os.makedirs(work, exist_ok=True)
    try:
        deb1, changes1 = build(a.source, work, "first")
        version = version_of(os.path.join(work, "first", "tally"))
        deb2, changes2 = build(a.source, work, "second",
                               version + UPGRADE_VERSION_SUFFIX)
        check_contents(deb1)
        lint(changes1)
        lint(changes2)
        root = os.path.join(work, "root")
        make_root(root, a.mirror)
        r = subprocess.run(
            ["unshare", "--mount", sys.executable, os.path.abspath(__file__),
             "--inner", "--source", a.source, "--work", work, "--root", root,
             "--deb1", deb1, "--deb2", deb2])
        if r.returncode != 0:
            log = os.path.join(work, "systemd.log")
            if os.path.exists(log):
                with open(log) as f:
                    tail = f.readlines()[-40:]
                print("systemd's log ends:\n" + "".join(tail), file=sys.stderr)
            sys.exit(r.returncode)
    finally:
        if not a.keep:
            # The mounts were made in the inner namespace, gone with it;
            # --one-file-system refuses to cross into any that were not.
            subprocess.run(["rm", "-rf", "--one-file-system", work])
    say("ok: the Debian package builds, lints clean, installs, runs, "
        "upgrades with no job lost, and is removed and purged")


if __name__ == "__main__":
    main()
