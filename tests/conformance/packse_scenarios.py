#!/usr/bin/python3
"""uv's resolver scenarios against gpulock resolve (issue 20, ctest label `conformance`).

Usage: packse_scenarios.py --gpulock EXE --scenarios DIR --work DIR [-k SUBSTRING] [-j N]

For every scenario (packse TOML, uv's test/scenarios) that applies to a single-target,
wheel-only resolve, packse_index.py writes a static index and gpulock resolves the scenario's
[root] requires against it as file://, with the scenario's Python, platform and pre-release
options, and compares with [expected]: satisfiable or not, the version of every listed
package, and for an unsatisfiable scenario, that gpulock's explanation names one of the packages
uv's explanation text names (in backquotes), else one of the required packages. Scenarios that do not apply are listed with the reason. Scenarios where gpulock differs
from uv on purpose are in DELIBERATE with the reason (README "Differences from uv and pip") and
the outcome gpulock must give instead, so the difference itself is checked. Exits 1 on any
other mismatch, printing both answers.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import packse_index  # noqa: E402

# name -> (reason, gpulock's expected outcome: None = unsatisfiable, else {package: version}).
# Each outcome is also pip 26.3's on the same index (checked when the list was written).
PRE = ("pre-release rule of packaging/pip 26: a specifier naming a pre-release admits "
       "pre-releases and the highest matching version wins; uv prefers a stable version in range")
DELIBERATE = {
    "package-prerelease-specified-mixed-available": (PRE, {"a": "1.0.0a1"}),
    "package-prereleases-specifier-boundary": (PRE, {"a": "0.2.0a1"}),
    "prerelease-base-extra-stable-preference-after-backtrack":
        (PRE, {"a": "1.0.0", "c": "2.0.0a1", "d": "1.0.0"}),
    "prerelease-base-extra-stable-preference-explicit-first": (PRE, {"c": "2.0.0a1"}),
    "prerelease-base-extra-stable-preference-plain-first": (PRE, {"c": "2.0.0a1"}),
    "prerelease-equivalent-stable-preference-explicit-first": (PRE, {"c": "2.0.0a1"}),
    "prerelease-equivalent-stable-preference-plain-first": (PRE, {"c": "2.0.0a1"}),
    "prerelease-extra-stable-preference": (PRE, {"c": "2.0.0a1"}),
    "prerelease-multiple-redundant-stable-preference-explicit-first": (PRE, {"c": "2.0.0a1"}),
    "prerelease-multiple-redundant-stable-preference": (PRE, {"c": "2.0.0a1"}),
    "prerelease-redundant-stable-preference-explicit-first": (PRE, {"c": "2.0.0a1"}),
    "prerelease-redundant-stable-preference-plain-first": (PRE, {"c": "2.0.0a1"}),
    "transitive-prerelease-equivalent-stable-preference-explicit-first":
        (PRE, {"a": "1.0.0", "c": "2.0.0a1"}),
    "transitive-prerelease-equivalent-stable-preference-plain-first":
        (PRE, {"a": "1.0.0", "c": "2.0.0a1"}),
    "transitive-prerelease-prefers-stable": (PRE, {"a": "1.0.0", "c": "2.0.0a1"}),
    "transitive-prerelease-redundant-stable-preference-parent-first":
        (PRE, {"a": "1.0.0", "c": "2.0.0a1"}),
    "python-less-than-current": ("a Requires-Python upper bound is honoured (uv ignores it)",
                                 None),
    "transitive-yanked-and-unyanked-dependency":
        ("PEP 592: a yanked release pinned with == is usable, also when the pin is transitive "
         "(uv: only for direct pins)", {"a": "1.0.0", "b": "1.0.0", "c": "2.0.0"}),
}


def run_one(exe, path, work):
    sc = packse_index.load(path)
    name = sc["name"]
    reason = packse_index.applicability(sc)
    if reason:
        return name, "n/a", reason
    out = Path(work) / name
    simple = packse_index.write_index(sc, out)
    opts = packse_index.options(sc)
    cmd = [exe, "resolve", *sc["root"]["requires"], "--index-url", simple.resolve().as_uri(),
           "--python-version", opts["python"], "--platform", opts["platform"], "--driver", "none",
           "--no-cache", "-q", "-o", str(out / "pylock.toml"), "--report", str(out / "report.json")]
    if opts["prerelease"]:
        cmd += ["--prerelease", opts["prerelease"]]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    got = None
    if p.returncode == 0:
        rep = json.loads((out / "report.json").read_text())
        got = {packse_index.normalize(x["name"]): x["version"] for x in rep["packages"]}
    elif p.returncode != 1:
        return name, "error", f"exit {p.returncode}: {p.stderr.strip()[-400:]}"
    exp = sc["expected"]
    if name in DELIBERATE:
        why, want = DELIBERATE[name]
        ok = (got is None) if want is None else (
            got is not None and all(got.get(k) == v for k, v in want.items()))
        detail = f"deliberate ({why}); gpulock must give {want}, gave {got}"
        return name, "deliberate" if ok else "fail", detail
    if not exp["satisfiable"]:
        if got is not None:
            return name, "fail", f"uv: unsatisfiable; gpulock: {got}"
        # The packages uv's explanation names (in backquotes) must appear in gpulock's.
        known = {packse_index.normalize(n) for n in sc["packages"]}
        named = {packse_index.normalize(m.split("=")[0].split("<")[0].split(">")[0])
                 for m in re.findall(r"`([^`]+)`", exp.get("explanation", ""))}
        named &= known
        if not named:  # no names in uv's text: one of the user's requirements, then
            named = {packse_index.normalize(re.match(r"[A-Za-z0-9._-]+", r).group(0))
                     for r in sc["root"]["requires"]}
        said = p.stderr.lower().replace("_", "-")
        if named and not any(n in said for n in named):
            return name, "fail", f"explanation names none of {sorted(named)}: {p.stderr[-300:]}"
        return name, "pass", ""
    if got is None:
        return name, "fail", f"uv: {exp.get('packages', {})}; gpulock: no solution: " + \
            p.stderr.strip()[-300:].replace("\n", " | ")
    want = {packse_index.normalize(k): v for k, v in exp.get("packages", {}).items()}
    bad = {k: (v, got.get(k)) for k, v in want.items() if got.get(k) != v}
    if bad:
        return name, "fail", f"uv: {want}; gpulock: {got}"
    return name, "pass", ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpulock", required=True)
    ap.add_argument("--scenarios", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("-k", default="")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--json", help="write the per-scenario results here")
    args = ap.parse_args()
    paths = sorted(p for p in Path(args.scenarios).rglob("*.toml") if args.k in p.stem)
    if not paths:
        sys.exit(f"no scenarios under {args.scenarios}")
    Path(args.work).mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        results = list(pool.map(lambda p: run_one(args.gpulock, p, args.work), paths))
    counts = {}
    for name, status, detail in results:
        counts[status] = counts.get(status, 0) + 1
        if status != "pass":
            print(f"{status:10} {name}: {detail}")
    applicable = len(results) - counts.get("n/a", 0)
    print(f"{len(results)} scenarios, {applicable} applicable: {counts.get('pass', 0)} pass, "
          f"{counts.get('deliberate', 0)} differ on purpose, {counts.get('fail', 0)} fail, "
          f"{counts.get('error', 0)} errors, {counts.get('n/a', 0)} not applicable "
          f"({time.monotonic() - start:.1f}s)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 1 if counts.get("fail", 0) or counts.get("error", 0) else 0


if __name__ == "__main__":
    sys.exit(main())
