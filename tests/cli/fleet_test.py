#!/usr/bin/env python3
"""`gpulock fleet check` end to end (issue 45): locks written here (the fit matrix's lock text,
tests/gpu/fit_matrix_test.py), inventories from fixtures/inventory (samples written from
shared/data/inventory-formats.md; nothing under ../shared is read at run time).

Checks: the text report of a mixed fleet is tests/cli/golden/fleet-check.txt (paths relative);
--json gives the right lock per node and the right unplaceable nodes; exit 1 when a lock runs on
no node, 0 when each runs somewhere, 1 with --require-all when a node runs none; --format github;
`-` reads standard input; exit 3 with one error: line naming the file when nothing can be read,
and kubectl YAML refused with its hint. `fleet place --emit k8s`: the emitted nodeAffinity,
applied by this test to the inventory's labels, selects exactly the nodes each lock fits.

Usage: fleet_test.py GPULOCK WORKDIR [--update]
"""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "tests" / "gpu"))
sys.path.insert(0, str(ROOT / "tests" / "support"))
from fit_matrix_test import lock_text  # noqa: E402
import hint_log  # noqa: E402

SAMPLES = ROOT / "fixtures" / "inventory"
GOLDEN = HERE / "golden" / "fleet-check.txt"
FAILURES = []


def check(ok, what):
    if not ok:
        FAILURES.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def run(exe, args, cwd, stdin=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPULOCK_", "PIP_", "UV_"))}
    env["NO_COLOR"] = "1"
    if "GPULOCK_HINT_LOG" in os.environ:
        env["GPULOCK_HINT_LOG"] = os.environ["GPULOCK_HINT_LOG"]
    argv = [exe] + args
    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=60,
                       input=stdin)
    hint_log.keep(argv, env, cwd, p.returncode, p.stdout, p.stderr)
    return p


def parse_affinity(text):
    """fleet place --emit k8s: lock name -> its nodeSelectorTerms (lists of (key, op, values))."""
    out, lock, term = {}, None, None
    for line in text.splitlines():
        m = re.match(r"# (\S+): runs on", line)
        if m:
            lock = m.group(1)
            out[lock] = []
            continue
        if line.strip() == "- matchExpressions:":
            term = []
            out[lock].append(term)
            continue
        m = re.match(r"\s+- \{key: (\S+), operator: (In|Gt), values: \[(.*)\]\}$", line)
        if m:
            term.append((m.group(1), m.group(2), json.loads("[" + m.group(3) + "]")))
    return out


def selects(term, labels):
    for key, op, values in term:
        if key not in labels:
            return False
        if op == "In" and labels[key] not in values:
            return False
        if op == "Gt" and not int(labels[key]) > int(values[0]):
            return False
    return True


def place_tests(exe, work, locks):
    """The emitted nodeAffinity, applied here to the inventory's labels, selects exactly the
    nodes fleet check says each lock fits."""
    kubectl = work / "inventory" / "kubectl-nodes.json"
    p = run(exe, ["fleet", "place", "--emit", "k8s", *locks, "--inventory", str(kubectl)], work)
    check(p.returncode == 1, f"place: a lock without a node exits 1, got {p.returncode}")
    affinity = parse_affinity(p.stdout)
    check(set(affinity) == {"pylock.cu124.toml", "pylock.cu130.toml", "pylock.cu130-arm.toml"},
          f"place: a selector per lock: {sorted(affinity)}")
    doc = json.loads(run(exe, ["fleet", "check", *locks, "--inventory", str(kubectl), "--json"],
                         work).stdout)
    items = json.loads(kubectl.read_text().split("\n", 1)[1])["items"]
    labels = {n["metadata"]["name"]: n["metadata"]["labels"] for n in items}
    for lock in doc["locks"]:
        terms = affinity.get(lock["name"], [])
        picked = sorted(n for n, l in labels.items() if any(selects(t, l) for t in terms))
        check(picked == sorted(lock["nodes"]),
              f"place: {lock['name']} selects {picked}, fits {sorted(lock['nodes'])}")
    check(affinity["pylock.cu124.toml"] and "exactly" in p.stdout, "place: checked exactly")
    # A node the lock fits whose labels cannot say so (no compute labels): exit 1, named.
    shutil.copy(SAMPLES / "kubectl-describe.txt", work / "describe.txt")
    p = run(exe, ["fleet", "place", "--emit", "k8s", "--lock", "pylock.cu130-arm.toml",
                  "--inventory", "describe.txt"], work)
    check(p.returncode == 1 and "misses nodes the lock fits: gb200-node-01" in p.stdout,
          f"place: unlabelled compute capability: {p.returncode} {p.stdout}")
    p = run(exe, ["fleet", "place", "--emit", "slurm", "--lock", "pylock.cu124.toml",
                  "--inventory", str(kubectl)], work)
    check(p.returncode == 0 and "#SBATCH --nodelist=a100-node-01,h100-r610-01" in p.stdout
          and "# no --constraint: not every node it fits is a Slurm node" in p.stdout,
          f"place slurm: {p.returncode} {p.stdout}")
    slurm_constraint_tests(exe, work)


def slurm_constraints(text):
    """fleet place --emit slurm: lock name -> its --constraint (None: a --nodelist)."""
    out, lock = {}, None
    for line in text.splitlines():
        m = re.match(r"# (\S+): runs on", line)
        if m:
            lock = m.group(1)
            out[lock] = None
        m = re.match(r"#SBATCH --constraint=(\S+)$", line)
        if m:
            out[lock] = m.group(1)
    return out


def satisfies(constraint, features):
    if "|" in constraint:
        return any(f in features for f in constraint.split("|"))
    return all(f in features for f in constraint.split("&"))


def slurm_constraint_tests(exe, work):
    """`fleet place --emit slurm`: a --constraint over ActiveFeatures when some select exactly
    the nodes each lock fits (applied here to the scontrol records), else --nodelist and why."""
    locks = ["--lock", "pylock.cu124.toml", "--lock", "pylock.cu130.toml"]
    sample = (SAMPLES / "slurm-features.txt").read_text()
    extra_and = ("NodeName=gpu21 Arch=x86_64 ActiveFeatures=a100,ib,nvidia-driver-580.65.06 "
                 "Gres=gpu:a100:8\n"
                 "NodeName=gpu22 Arch=aarch64 ActiveFeatures=a100,nvidia-driver-580.65.06 "
                 "Gres=gpu:gh200:1\n"
                 "NodeName=gpu23 Arch=aarch64 ActiveFeatures=ib,nvidia-driver-580.65.06 "
                 "Gres=gpu:gh200:1\n")
    twin = "NodeName=gpu15 Arch=aarch64 ActiveFeatures=a100,nvidia-driver-580.65.06 Gres=gpu:gh200:1\n"
    cases = {
        "slurm-or.txt": (sample, {"pylock.cu124.toml": "nvidia-driver-550.54.15|nvidia-driver-580.65.06",
                                  "pylock.cu130.toml": "nvidia-driver-580.65.06"}),
        "slurm-and.txt": (extra_and, {"pylock.cu124.toml": "a100&ib",
                                      "pylock.cu130.toml": "a100&ib"}),
        "slurm-twin.txt": (sample + twin, {"pylock.cu124.toml": None, "pylock.cu130.toml": None}),
    }
    for name, (text, want) in cases.items():
        (work / name).write_text(text)
        p = run(exe, ["fleet", "place", "--emit", "slurm", *locks, "--inventory", name], work)
        got = slurm_constraints(p.stdout)
        check(p.returncode == 0 and got == want, f"place slurm {name}: {p.returncode} {got}\n"
              f"{p.stdout}{p.stderr}")
        doc = json.loads(run(exe, ["fleet", "check", *locks, "--inventory", name, "--json"],
                             work).stdout)
        features = {}
        for line in text.splitlines():
            m = re.search(r"NodeName=(\S+).*ActiveFeatures=(\S+)", line)
            if m:
                features[m.group(1)] = m.group(2).split(",")
        for lock in doc["locks"]:
            c = got.get(lock["name"])
            if c is None:
                check(f"#SBATCH --nodelist={','.join(lock['nodes'])}" in p.stdout,
                      f"place slurm {name}: {lock['name']} falls back to its nodes")
                continue
            picked = sorted(n for n, f in features.items() if satisfies(c, f))
            check(picked == sorted(lock["nodes"]),
                  f"place slurm {name}: {c} selects {picked}, fits {sorted(lock['nodes'])}")
        if name == "slurm-twin.txt":
            check("gpu13's features (a100,nvidia-driver-580.65.06) are all on gpu15" in p.stdout,
                  f"place slurm: the fallback says why: {p.stdout}")
        else:
            check(p.stdout.count("# checked: its ActiveFeatures select exactly") == 2,
                  f"place slurm {name}: checked: {p.stdout}")


def main():
    exe, work = sys.argv[1], Path(sys.argv[2])
    update = "--update" in sys.argv
    shutil.rmtree(work, ignore_errors=True)
    inv = work / "inventory"
    inv.mkdir(parents=True)
    for name in ["kubectl-nodes.json", "smi-r470-79col.txt", "smi-r550-91col.txt", "smi-r580.txt",
                 "smi-wsl.txt", "csv-hosts.csv", "proc-open-aarch64.txt",
                 "smi-graphics-device.txt"]:
        shutil.copy(SAMPLES / name, inv / name)
    for name in ["cu118", "cu124", "cu130", "cu130-arm"]:
        (work / f"pylock.{name}.toml").write_text(lock_text(name))
    locks = ["--lock", "pylock.cu124.toml", "--lock", "pylock.cu130.toml",
             "--lock", "pylock.cu130-arm.toml"]

    # The text report (directory source, sorted files).
    p = run(exe, ["fleet", "check", *locks, "--inventory", "inventory"], work)
    check(p.returncode == 0, f"every lock runs somewhere: exit 0, got {p.returncode}: {p.stderr}")
    if update:
        GOLDEN.write_text(p.stdout)
    check(p.stdout == GOLDEN.read_text(),
          f"text report differs from {GOLDEN} (rerun with --update to see):\n{p.stdout}")

    # JSON: the lock per node and the unplaceable nodes.
    p = run(exe, ["fleet", "check", *locks, "--inventory", "inventory", "--json"], work)
    doc = json.loads(p.stdout)
    check(doc["schema"] == "gpulock.fleet-check/1", "schema name")
    best = {n["name"]: n["best"] for n in doc["nodes"]}
    want = {
        "a100-node-01": "pylock.cu124.toml",      # 550, 12.4, sm_80
        "gh200-node-01": None,                     # aarch64, 570 (12.8) < 13.0
        "mig-node-01": None,                       # 535 (12.2) < 12.4
        "t4-node-01": None,                        # 470 (11.4)
        "h100-r610-01": "pylock.cu130.toml",       # 610 (13.3)
        "cpu-node-01": None,                       # no GPU labels: CUDA locks need a driver
        "node01": "pylock.cu130.toml",             # CSV 580.142 -> 13.0 derived
        "node02": None,                            # 525 (12.0) < 12.4
        "node03": "pylock.cu130.toml",             # R615: at least 13.3, arch unknown
        "proc-open-aarch64": "pylock.cu130-arm.toml",
        "smi-graphics-device": None,               # 520 (11.8 derived from ERR!)
        "v100-box": None,                          # 470 (11.4)
        "smi-r550-91col": "pylock.cu124.toml",
        "smi-r580": "pylock.cu130.toml",           # sm_120 has cu130's 12.0 kernels
        "DESKTOP-1234": "pylock.cu124.toml",       # WSL: the stated 12.5
    }
    check(best == want, f"best lock per node: {best}")
    node = {n["name"]: n for n in doc["nodes"]}
    check(node["node01"]["ceiling_method"] == "derived" and node["node01"]["ceiling"] == "13.0",
          "CSV ceiling derived from the branch")
    check(node["DESKTOP-1234"]["wsl"] and node["DESKTOP-1234"]["driver"] == "",
          "WSL: no Linux driver for the fit")
    check(any("newer than gpulock's table" in u for u in node["node03"]["unknown"]),
          "R615 ceiling unknown")
    t4 = [f for f in node["t4-node-01"]["fits"] if f["lock"] == "pylock.cu124.toml"][0]
    check(t4["reasons"] == ["driver 470.82.01 supports CUDA <= 11.4, the lock needs 12.4"],
          f"t4 reason: {t4['reasons']}")
    per_lock = {l["name"]: l["nodes"] for l in doc["locks"]}
    check(per_lock["pylock.cu130-arm.toml"] == ["node01", "node03", "proc-open-aarch64", "smi-r580"],
          f"cu130-arm nodes: {per_lock['pylock.cu130-arm.toml']}")

    # --require-all: some nodes run no lock.
    p = run(exe, ["fleet", "check", *locks, "--inventory", "inventory", "--require-all"], work)
    check(p.returncode == 1, f"--require-all: exit 1, got {p.returncode}")
    # A lock that runs on no node: exit 1; github annotations.
    p = run(exe, ["fleet", "check", "--lock", "pylock.cu130-arm.toml", "--inventory",
                  "inventory/smi-r550-91col.txt", "--format", "github"], work)
    check(p.returncode == 1, f"lock on no node: exit 1, got {p.returncode}")
    check("::error title=gpulock fleet::pylock.cu130-arm.toml runs on no node" in p.stdout,
          f"github annotation: {p.stdout}")
    # Standard input, a forced format.
    p = run(exe, ["fleet", "check", "--lock", "pylock.cu124.toml", "--inventory", "-",
                  "--inventory-format", "nvidia-smi", "--json"], work,
            stdin=(SAMPLES / "smi-r550-91col.txt").read_text())
    check(p.returncode == 0 and json.loads(p.stdout)["nodes"][0]["name"] == "stdin",
          f"stdin: {p.returncode} {p.stderr}")
    # Nothing readable: exit 3, one error: line naming the file.
    (work / "notes.txt").write_text("nothing here\n")
    p = run(exe, ["fleet", "check", *locks, "--inventory", "notes.txt"], work)
    errors = [l for l in p.stderr.splitlines() if l.startswith("error:")]
    check(p.returncode == 3 and len(errors) == 1 and "notes.txt" in errors[0],
          f"unreadable: exit {p.returncode}, {p.stderr}")
    shutil.copy(SAMPLES / "kubectl-nodes.yaml", work / "nodes.yaml")
    p = run(exe, ["fleet", "check", *locks, "--inventory", "nodes.yaml"], work)
    check(p.returncode == 3 and "-o json" in p.stderr, f"yaml: exit {p.returncode}, {p.stderr}")
    p = run(exe, ["fleet", "check", *locks, "--inventory", "inventory", "--inventory-format",
                  "yaml"], work)
    check(p.returncode == 2, f"bad --inventory-format: exit 2, got {p.returncode}")

    place_tests(exe, work, locks)

    # A site's Slurm names: the driver from a feature, the GPU from a Gres type.
    (work / "site.map").write_text("cuda13 driver=580.65.06\nhopper gpu=NVIDIA H100 80GB HBM3\n")
    (work / "nodes.slurm").write_text(
        "NodeName=h01 Arch=x86_64 ActiveFeatures=cuda13,ib Gres=gpu:hopper:8 State=IDLE\n")
    p = run(exe, ["fleet", "check", "--lock", "pylock.cu130.toml", "--inventory", "nodes.slurm",
                  "--slurm-features", "site.map", "--json"], work)
    doc = json.loads(p.stdout) if p.stdout else {"nodes": [{}]}
    check(p.returncode == 0 and doc["nodes"][0].get("best") == "pylock.cu130.toml",
          f"--slurm-features: {p.returncode} {p.stderr} {doc['nodes'][0]}")

    # --all-targets: the declared targets' locks.
    (work / "gpulock.toml").write_text(
        '[targets.cu124]\npython-version = "3.11"\nplatform = "manylinux_2_28_x86_64"\n'
        'driver = "550.54.14"\n\n[targets.cu130]\npython-version = "3.11"\n'
        'platform = "manylinux_2_28_x86_64"\ndriver = "580.65.06"\n')
    p = run(exe, ["fleet", "check", "--all-targets", "--inventory", "inventory/smi-r580.txt",
                  "--json"], work)
    doc = json.loads(p.stdout) if p.stdout else {"locks": []}
    check([l["path"] for l in doc["locks"]] == ["pylock.cu124.toml", "pylock.cu130.toml"],
          f"--all-targets: {p.returncode} {p.stderr} {doc['locks']}")

    if FAILURES:
        print(f"{len(FAILURES)} failure(s)", file=sys.stderr)
        return 1
    print("fleet: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
