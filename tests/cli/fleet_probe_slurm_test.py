#!/usr/bin/env python3
"""`gpulock fleet probe --slurm` on a real Slurm, not a mock (issue 45 item 4).

The test starts its own cluster on loopback: munged (a key of its own, its socket in the work
directory), slurmctld and slurmd (Debian's slurm-wlm, from scripts/install-deps) with a
configuration written to the work directory: the node NodeName = this host's short name (NodeAddr
127.0.0.1, ProctrackType=proctrack/linuxproc, TaskPlugin=task/none, no cgroups, no accounting,
free ports) in partition `debug`, and a second slurmd on the same host as node NAME-b in
partition `second` (`slurmd -N`, a port of its own), so that the array has a task per node to
pin. It waits, bounded, until sinfo shows both idle, then:

- `fleet probe --slurm --output FILE` submits the job array (to both partitions), waits for it,
  and gathers each node's `probe --machine --json`: exit 0, the report names the nodes, the file
  holds a gpulock.machine/1 document per node whose `node` is its Slurm name, each written by a
  task that ran on that node;
- `fleet place --emit slurm` over it prints those names as the `--nodelist`;
- `fleet check --inventory FILE` reads it under that name and judges a CUDA lock and a CPU lock
  against what the probe found (on a machine without an NVIDIA driver: no GPU, the CPU lock
  fits, the CUDA lock does not, and why);
- `--lock L` runs `probe --lock L --json` on the node too and reports its result per node;
- a task that fails (`--gpulock` naming no program on the node) is kept with its error in the
  report and in the file (`probe_error`), exit 1, and fleet check still lists the node;
- a task still running at `--timeout` is cancelled and its node kept with why;
- a drained node is not submitted to, and is kept with why; a task whose node is not in the
  partition given after `--` is cancelled at once, not at --timeout;
- `--sbcast` copies the binary to the node with salloc + sbcast, the task runs the copy and
  removes it; a copy that cannot be made is exit 74 before anything is submitted;
- a node Slurm does not know is refused before anything is submitted (exit 2).

The daemons are stopped in a finally block, by pid. Needs root (slurmd runs as root) and the
Debian packages: it fails, never skips, when they are missing.

Usage: fleet_probe_slurm_test.py GPULOCK WORKDIR
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "tests" / "gpu"))
sys.path.insert(0, str(ROOT / "tests" / "support"))
from fit_matrix_test import lock_text, package  # noqa: E402
import hint_log  # noqa: E402
import jsonschema  # noqa: E402  (python3-jsonschema, scripts/install-deps)

MACHINE_SCHEMA = jsonschema.Draft202012Validator(
    json.loads((ROOT / "docs" / "schemas" / "probe-machine.schema.json").read_text()))

FAILURES = []


def check(ok, what):
    if not ok:
        FAILURES.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """munged, slurmctld and slurmd of this test, in `root`."""

    def __init__(self, root: Path):
        self.root = root
        self.node = socket.gethostname().split(".")[0]
        self.node2 = f"{self.node}-b"
        self.procs = []
        self.munge = None  # munged's key and socket directory (start)
        self.env = dict(os.environ)
        self.env["SLURM_CONF"] = str(root / "slurm.conf")

    def logs(self):
        out = ""
        for p in sorted((self.root / "log").glob("*.log")):
            out += f"--- {p.name}\n" + "\n".join(p.read_text(errors="replace").splitlines()[-15:])
        return out

    def start(self):
        for tool in ["munged", "slurmctld", "slurmd", "sbatch", "sinfo"]:
            if shutil.which(tool) is None and not Path(f"/usr/sbin/{tool}").exists():
                raise SystemExit(f"{tool} is not installed: run scripts/install-deps "
                                 "(slurm-wlm, munge)")
        if os.geteuid() != 0:
            raise SystemExit("slurmd must run as root (SlurmdUser=root): run the test as root")
        r = self.root
        for d in ["run", "log", "state", "spool"]:
            (r / d).mkdir(parents=True)
        # munged refuses a socket whose every ancestor others cannot search ("execute permissions
        # for all required"), and a key others can read. The work directory may sit below one
        # only its owner can enter (a clone in a mktemp directory): munged's files get a
        # directory of their own under /tmp.
        m = self.munge = Path(tempfile.mkdtemp(prefix="gpulock-munge-", dir="/tmp"))
        for d in ["key", "run"]:
            (m / d).mkdir()
        for d in [m, m / "run"]:
            d.chmod(0o755)
        (m / "key").chmod(0o700)
        key = m / "key" / "munge.key"
        key.write_bytes(os.urandom(128))
        key.chmod(0o600)
        sock = m / "run" / "munge.sock"
        munged = shutil.which("munged") or "/usr/sbin/munged"
        self.spawn([munged, "-F", f"--key-file={key}", f"--socket={sock}",
                    f"--pid-file={m / 'run' / 'munged.pid'}",
                    f"--log-file={r / 'log' / 'munged.log'}", f"--seed-file={m / 'key' / 'seed'}"])
        self.wait_for(lambda: sock.exists(), 10, "munged's socket")
        ctld_port, d_port, d2_port = free_port(), free_port(), free_port()
        conf = f"""ClusterName=gpulocktest
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={ctld_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
SlurmUser=root
SlurmdUser=root
StateSaveLocation={r / 'state'}
SlurmdSpoolDir={r / 'spool'}/%n
SlurmctldPidFile={r / 'run' / 'slurmctld.pid'}
SlurmdPidFile={r / 'run' / 'slurmd-%n.pid'}
SlurmctldLogFile={r / 'log' / 'slurmctld.log'}
SlurmdLogFile={r / 'log' / 'slurmd-%n.log'}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/linear
SchedulerParameters=sched_interval=1,bf_interval=1
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
NodeName={self.node} NodeHostname={self.node} NodeAddr=127.0.0.1 Port={d_port} CPUs=1 State=UNKNOWN
NodeName={self.node2} NodeHostname={self.node} NodeAddr=127.0.0.1 Port={d2_port} CPUs=1 State=UNKNOWN
PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP
PartitionName=second Nodes={self.node2} MaxTime=INFINITE State=UP
"""
        (r / "slurm.conf").write_text(conf)
        self.spawn([shutil.which("slurmctld") or "/usr/sbin/slurmctld", "-D", "-i"])
        for n in [self.node, self.node2]:
            self.spawn([shutil.which("slurmd") or "/usr/sbin/slurmd", "-D", "-N", n], n)

        def idle():
            p = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], env=self.env,
                               capture_output=True, text=True, timeout=10)
            lines = p.stdout.splitlines()
            return p.returncode == 0 and all(f"{n} idle" in lines
                                             for n in [self.node, self.node2])
        self.wait_for(idle, 30, f"sinfo to show {self.node} and {self.node2} idle")

    def spawn(self, argv, tag=""):
        log = open(self.root / "log" / (Path(argv[0]).name + tag + ".out"), "w")
        self.procs.append(subprocess.Popen(argv, env=self.env, stdout=log, stderr=log,
                                           stdin=subprocess.DEVNULL))

    def wait_for(self, ready, seconds, what):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if ready():
                return
            for p in self.procs:
                if p.poll() is not None:
                    raise SystemExit(f"{p.args[0]} exited {p.returncode} while waiting for "
                                     f"{what}\n{self.logs()}")
            time.sleep(0.2)
        raise SystemExit(f"timed out waiting for {what}\n{self.logs()}")

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                os.kill(p.pid, signal.SIGTERM)
        for p in reversed(self.procs):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(p.pid, signal.SIGKILL)
                p.wait(timeout=10)
        if self.munge is not None:
            shutil.rmtree(self.munge, ignore_errors=True)


def run(exe, args, cwd, env):
    env = {k: v for k, v in env.items() if not k.startswith(("GPULOCK_", "PIP_", "UV_"))}
    env["NO_COLOR"] = "1"
    if "GPULOCK_HINT_LOG" in os.environ:
        env["GPULOCK_HINT_LOG"] = os.environ["GPULOCK_HINT_LOG"]
    argv = [exe] + args
    t0 = time.monotonic()
    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    print(f"{time.monotonic() - t0:5.1f} s: {' '.join(args)}", file=sys.stderr)
    hint_log.keep(argv, env, cwd, p.returncode, p.stdout, p.stderr)
    return p


def documents(text):
    """The gathered inventory: JSON objects one after the other, each valid against
    docs/schemas/probe-machine.schema.json."""
    out, dec, i = [], json.JSONDecoder(), 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        doc, i = dec.raw_decode(text, i)
        errors = [e.message for e in MACHINE_SCHEMA.iter_errors(doc)]
        check(not errors, f"entry for {doc.get('node')}: schema: {errors}")
        out.append(doc)


def cpu_lock():
    body = ('lock-version = "1.0"\ncreated-by = "gpulock 0.1.0"\n'
            'environments = ["sys_platform == \\"linux\\" and platform_machine == \\"x86_64\\""]\n'
            'requires-python = "==3.11.*"\n\n')
    body += package("torch", "2.5.1+cpu", "manylinux_2_28_x86_64")
    return body


def probe_tests(exe, work, cluster):
    env, node, node2 = cluster.env, cluster.node, cluster.node2
    # Every node sinfo lists, one task each, in the partitions of the nodes (debug, second).
    p = run(exe, ["fleet", "probe", "--slurm", "--output", "all.json", "--work-dir", "."],
            work, env)
    check(p.returncode == 0, f"probe: exit 0, got {p.returncode}: {p.stdout}{p.stderr}\n"
          f"{cluster.logs()}")
    check(all(f"\n{n} " in p.stdout for n in [node, node2]) and "2 nodes probed, 0 failed"
          in p.stdout, f"probe: the report names both nodes: {p.stdout}")
    check(not list(work.glob(".gpulock-fleet-probe.*")), "probe: the private directory is gone")
    docs = documents((work / "all.json").read_text()) if (work / "all.json").exists() else []
    check([d.get("node") for d in docs] == sorted([node, node2])
          and all(d.get("schema") == "gpulock.machine/1" and "probe_error" not in d
                  for d in docs), f"probe: a document per node, each pinned: {docs}")

    # The Slurm names are what sbatch takes: fleet place prints them as the --nodelist.
    p = run(exe, ["fleet", "place", "--emit", "slurm", "--inventory", "all.json", "--lock",
                  "pylock.cpu.toml"], work, env)
    check(p.returncode == 0
          and f"#SBATCH --nodelist={','.join(sorted([node, node2]))}" in p.stdout,
          f"place: the probed nodes by their Slurm names: {p.returncode} {p.stdout}{p.stderr}")

    # One node.
    p = run(exe, ["fleet", "probe", "--slurm", "--nodes", node, "--output", "fleet.json"],
            work, env)
    check(p.returncode == 0 and "1 node probed, 0 failed" in p.stdout,
          f"probe --nodes: exit 0, got {p.returncode}: {p.stdout}{p.stderr}")
    docs = documents((work / "fleet.json").read_text()) if (work / "fleet.json").exists() else []
    check(len(docs) == 1 and docs[0].get("node") == node and "probe_error" not in docs[0],
          f"probe --nodes: one document for {node}: {docs}")
    no_driver = bool(docs) and docs[0].get("status") == "no-driver"

    p = run(exe, ["fleet", "check", "--inventory", "fleet.json", "--lock", "pylock.cu124.toml",
                  "--lock", "pylock.cpu.toml", "--json"], work, env)
    doc = json.loads(p.stdout) if p.stdout.startswith("{") else {"nodes": []}
    names = [n["name"] for n in doc["nodes"]]
    check(names == [node], f"check: the node keeps its Slurm name: {names} {p.stderr}")
    if no_driver and names == [node]:
        n = doc["nodes"][0]
        fits = {f["lock"]: f for f in n["fits"]}
        check(n["best"] == "pylock.cpu.toml" and fits["pylock.cpu.toml"]["fits"]
              and not fits["pylock.cu124.toml"]["fits"],
              f"check: without a driver the CPU lock fits, the CUDA lock not: {n}")
        check(any("no NVIDIA GPU" in r for r in fits["pylock.cu124.toml"]["reasons"]),
              f"check: the reason names the missing GPU: {fits['pylock.cu124.toml']}")
        check(any("no NVIDIA driver" in r for r in n["read"]), f"check: read no driver: {n}")
        check(f"platform linux/{os.uname().machine}" in n["read"],
              f"check: the node's OS and CPU, as its probe read them: {n}")
        check(p.returncode == 1, f"check: the CUDA lock runs on no node: exit 1, got "
              f"{p.returncode}")

    # --lock: probe --lock on the node too (no environment there: its verdict fails, exit 1).
    p = run(exe, ["fleet", "probe", "--slurm", "--nodes", node, "--lock",
                  str(work / "pylock.cpu.toml"), "-o", "fleet-locks.json"], work, env)
    check(p.returncode in (0, 1) and "lock probes" in p.stdout
          and f"{node}: {work / 'pylock.cpu.toml'}: " in p.stdout,
          f"probe --lock: the lock probe's result per node: {p.returncode} {p.stdout}{p.stderr}")
    docs = documents((work / "fleet-locks.json").read_text())
    check(len(docs) == 1 and len(docs[0].get("lock_probes", [])) == 1
          and docs[0]["lock_probes"][0]["lock"] == str(work / "pylock.cpu.toml"),
          f"probe --lock: recorded in the inventory: {docs}")
    # The failed verdict line is named, read from the node's JSON document (torch is locked but
    # not installed where the task runs).
    check(bool(docs) and bool(docs[0].get("lock_probes"))
          and docs[0]["lock_probes"][0]["result"].startswith(
              "the environment does not match the lock: lock-missing: torch 2.5.1+cpu is in the "
              "lock but not installed."),
          f"probe --lock: the failed line named: {docs}")

    # --sbcast: the binary copied to the node first (salloc + sbcast from here), the task runs
    # the copy and removes it. The node is this host, so this shows the copy made, run (the
    # document is there) and removed, not a node that lacked gpulock before.
    sbcast_dir = work / "node-local"
    sbcast_dir.mkdir()
    p = run(exe, ["fleet", "probe", "--slurm", "--nodes", node, "--sbcast", "--sbcast-dir",
                  str(sbcast_dir), "-o", "sbcast.json"], work, env)
    check(p.returncode == 0 and "with sbcast" in p.stderr and "1 node probed, 0 failed"
          in p.stdout, f"sbcast: exit 0: {p.returncode} {p.stdout}{p.stderr}\n{cluster.logs()}")
    docs = documents((work / "sbcast.json").read_text()) if (work / "sbcast.json").exists() \
        else []
    check(len(docs) == 1 and docs[0].get("node") == node and "probe_error" not in docs[0],
          f"sbcast: the copy ran on the node: {docs}")
    check(not list(sbcast_dir.iterdir()), f"sbcast: the task removed its copy: "
          f"{list(sbcast_dir.iterdir())}")
    # A copy that cannot be made is an error before anything is submitted.
    p = run(exe, ["fleet", "probe", "--slurm", "--nodes", node, "--sbcast", "--sbcast-dir",
                  str(work / "no such dir"), "-o", "sbcast-bad.json"], work, env)
    check(p.returncode == 74 and "\nerror: --sbcast: copying " in p.stderr
          and not (work / "sbcast-bad.json").exists(),
          f"sbcast: a copy that fails is exit 74: {p.returncode} {p.stderr}")

    # A task that fails is kept with its error, never dropped; standard output: the inventory.
    p = run(exe, ["fleet", "probe", "--slurm", "--nodes", node, "--gpulock",
                  str(work / "no such gpulock"), "--timeout", "60"], work, env)
    check(p.returncode == 1, f"failed task: exit 1, got {p.returncode}: {p.stderr}")
    check(f"{node}" in p.stderr and "failed: gpulock probe --machine --json exited 127" in p.stderr,
          f"failed task: the report names the node and its error: {p.stderr}")
    docs = documents(p.stdout) if p.stdout.startswith("{") else []
    check(len(docs) == 1 and docs[0].get("node") == node and "exited 127" in
          docs[0].get("probe_error", ""), f"failed task: kept in the inventory: {p.stdout}")
    (work / "failed.json").write_text(p.stdout)
    p = run(exe, ["fleet", "check", "--inventory", "failed.json", "--lock", "pylock.cpu.toml"],
            work, env)
    check(node in p.stdout and "the probe failed on the node" in p.stdout,
          f"failed task: fleet check lists the node and why: {p.returncode} {p.stdout}{p.stderr}")

    # --timeout: a task still running is cancelled, and its node reported with why.
    slow = work / "slow-gpulock"
    slow.write_text("#!/bin/sh\nsleep 60\n")
    slow.chmod(0o755)
    started = time.monotonic()
    p = run(exe, ["fleet", "probe", "--slurm", "--nodes", node, "--gpulock", str(slow),
                  "--timeout", "2", "-o", "slow.json"], work, env)
    check(p.returncode == 1 and "cancelled at --timeout" in p.stdout
          and time.monotonic() - started < 30,
          f"timeout: exit 1, the node reported: {p.returncode} {p.stdout}{p.stderr}")
    docs = documents((work / "slow.json").read_text())
    check(len(docs) == 1 and "the task left no result" in docs[0].get("probe_error", ""),
          f"timeout: kept in the inventory: {docs}")

    # A drained node is not submitted to (it would wait to --timeout), and is kept with why.
    def scontrol(*args):
        subprocess.run(["scontrol", "update", f"NodeName={node}", *args], env=env, check=True,
                       capture_output=True, timeout=30)
    scontrol("State=DRAIN", "Reason=fleet-probe-test")
    try:
        p = run(exe, ["fleet", "probe", "--slurm", "-o", "drained.json"], work, env)
    finally:
        scontrol("State=RESUME")
    # drained, or draining while the task cancelled above completes; the other node probed
    check(p.returncode == 1 and "not submitted: sinfo shows it drain" in p.stdout
          and "1 node probed, 1 failed" in p.stdout,
          f"drained: exit 1, the node reported: {p.returncode} {p.stdout}{p.stderr}")
    docs = {d.get("node"): d for d in documents((work / "drained.json").read_text())}
    check(set(docs) == {node, node2} and "sinfo shows it drain" in
          docs[node].get("probe_error", "") and "probe_error" not in docs[node2],
          f"drained: kept in the inventory: {docs}")
    # A task Slurm will never start as submitted (its node is not in the partition sbatch was
    # given) is cancelled at once, not at --timeout.
    started = time.monotonic()
    p = run(exe, ["fleet", "probe", "--slurm", "--nodes", node2, "--", "--partition=debug"],
            work, env)
    check(p.returncode == 1 and "Slurm will not start it as submitted" in p.stderr
          and time.monotonic() - started < 30,
          f"partition: cancelled at once: {p.returncode} {p.stderr}")

    # A node Slurm does not know: refused before anything is submitted.
    p = run(exe, ["fleet", "probe", "--slurm", "--nodes", "no-such-node"], work, env)
    check(p.returncode == 2 and p.stderr.startswith("error: Slurm has no node 'no-such-node'"),
          f"unknown node: exit 2 with an error: line, got {p.returncode}: {p.stderr}")


def main():
    exe, work = os.path.abspath(sys.argv[1]), Path(sys.argv[2]).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / "pylock.cu124.toml").write_text(lock_text("cu124"))
    (work / "pylock.cpu.toml").write_text(cpu_lock())
    cluster = Cluster(work / "slurm")
    started = time.monotonic()
    try:
        cluster.start()
        print(f"slurm up in {time.monotonic() - started:.1f} s", file=sys.stderr)
        probe_tests(exe, work, cluster)
    finally:
        cluster.stop()
    print(f"done in {time.monotonic() - started:.1f} s", file=sys.stderr)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)", file=sys.stderr)
        return 1
    print("fleet probe --slurm: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
