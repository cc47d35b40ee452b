#!/usr/bin/python3
"""Randomized differential test of gpulock resolve against pip 26.3 (issue 20, `conformance`).

Usage: pip_random.py --gpulock EXE --pip PIP_SRC_DIR --work DIR [--seed N] [--count N] [-j N]

Each case is a generated index (packse_index.py's static file:// index: wheels, PEP 658
metadata, yanked files) of a few packages with final, pre-, post- and local versions and random
dependencies (specifiers with pre-release and post-release bounds, `==` pins, `!=`,
wildcards), and a random requirement set. pip (`python3 PIP_SRC_DIR install --dry-run
--ignore-installed --only-binary :all: --report ...`) and gpulock resolve it for CPython 3.12 on
manylinux_2_28_x86_64; the two answers (name -> version, or no solution) must be equal. Every
disagreement is printed with the index, the requirements and both answers. Cases where pip
reports ResolutionTooDeep are skipped and counted. One disagreement is deliberate (README,
"Differences from uv and pip"): gpulock takes a pre-release when a package's final releases
cannot be used, where pip finds no solution. And where both find a solution and pip also
accepts gpulock's (pip run again with gpulock's versions pinned), the two differ only in which
competing requirement got its newest version: counted as "decision order". Both kinds are
printed and counted apart; any other difference fails the test.
Seeded: the same seed gives the same cases.
ctest runs a short count; `scripts/conformance --long` runs a few hundred.
"""
import argparse
import concurrent.futures
import json
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import packse_index  # noqa: E402

NAMES = ["a", "b", "c", "d", "e"]


def gen_versions(r):
    out = set()
    for _ in range(r.randint(1, 6)):
        major, minor = r.randint(0, 3), r.randint(0, 3)
        v = f"{major}.{minor}.{r.choice([0, 0, 1])}"
        kind = r.random()
        if kind < 0.2:
            v += r.choice(["a1", "b2", "rc1", ".dev0"])
        elif kind < 0.3:
            v += ".post1"
        elif kind < 0.35:
            v += "+local"
        out.add(v)
    return sorted(out)


def gen_spec(r, versions):
    v = r.choice(versions).split("+")[0]
    base = v.split("a")[0].split("b")[0].split("rc")[0].split(".dev")[0].split(".post")[0]
    op = r.choice([">=", ">", "<", "<=", "==", "!=", "~=", "==*"])
    if op == "==*":
        return "==" + ".".join(base.split(".")[:2]) + ".*"
    if op == "~=":
        return "~=" + base
    bound = r.choice([v, base, base + "a1", base + ".post1"]) if op != "==" else v
    return op + bound


def gen_case(seed):
    r = random.Random(seed)
    names = NAMES[: r.randint(2, 5)]
    versions = {n: gen_versions(r) for n in names}
    packages = {}
    for i, n in enumerate(names):
        vs = {}
        for v in versions[n]:
            vd = {}
            reqs = []
            for m in names[i + 1:]:
                if r.random() < 0.45:
                    spec = ",".join(gen_spec(r, versions[m]) for _ in range(r.randint(1, 2)))
                    reqs.append(m + spec)
            if reqs:
                vd["requires"] = reqs
            if r.random() < 0.08:
                vd["yanked"] = True
            vs[v] = vd
        packages[n] = {"versions": vs}
    roots = []
    for n in r.sample(names, r.randint(1, min(3, len(names)))):
        roots.append(n + (gen_spec(r, versions[n]) if r.random() < 0.5 else ""))
    return {"name": f"random-{seed}", "root": {"requires": roots}, "packages": packages}


def run_case(args, seed):
    sc = gen_case(seed)
    out = Path(args.work) / sc["name"]
    for s in sc["packages"].values():
        for vd in s["versions"].values():
            vd["sdist"] = False
    simple = packse_index.write_index(sc, out)
    url = simple.resolve().as_uri()
    reqs = sc["root"]["requires"]
    g = subprocess.run([args.gpulock, "resolve", *reqs, "--index-url", url, "--python-version",
                        "3.12", "--platform", "manylinux_2_28_x86_64", "--driver", "none",
                        "--no-cache", "-q", "-o", str(out / "pylock.toml"), "--report",
                        str(out / "report.json")], capture_output=True, text=True, timeout=60)
    if g.returncode == 0:
        rep = json.loads((out / "report.json").read_text())
        gp = {x["name"]: x["version"] for x in rep["packages"]}
    elif g.returncode == 1:
        gp = None
    else:
        return seed, "error", f"gpulock exit {g.returncode}: {g.stderr.strip()[-300:]}", sc
    pp, err = run_pip(args, out, url, reqs)
    if err == "deep":
        return seed, "skipped", "pip: ResolutionTooDeep", sc
    if err:
        return seed, "error", err, sc
    if gp == pp:
        return seed, "agree", "", sc
    if gp is not None and pp is not None:
        # Both found a solution: is gpulock's one pip accepts too? Then the two differ only in
        # which competing requirement got its newest version (decision order).
        pinned, err = run_pip(args, out, url, reqs + [f"{n}=={v}" for n, v in gp.items()])
        if not err and pinned == gp:
            return seed, "order", f"pip: {pp}; gpulock: {gp} (pip accepts gpulock's too)", sc
    if pp is None and prerelease_fallback(args, sc, gp):
        return seed, "deliberate", f"pip: {pp}; gpulock: {gp}", sc
    return seed, "disagree", f"pip: {pp}; gpulock: {gp}", sc


def run_pip(args, out, url, reqs):
    """pip's answer: ({name: version} or None for no solution, error text or "deep" or "")."""
    p = subprocess.run([sys.executable, args.pip, "install", "--dry-run", "--ignore-installed",
                        "--only-binary", ":all:", "--python-version", "3.12", "--platform",
                        "manylinux_2_28_x86_64", "--target", str(out / "target"),
                        "--index-url", url, "--no-cache-dir", "--disable-pip-version-check",
                        "-q", "--report", str(out / "pip.json"), *reqs],
                       capture_output=True, text=True, timeout=120)
    if p.returncode == 0:
        rep = json.loads((out / "pip.json").read_text())
        return {packse_index.normalize(x["metadata"]["name"]): x["metadata"]["version"]
                for x in rep["install"]}, ""
    if "ResolutionTooDeep" in p.stderr:
        return None, "deep"
    if "ResolutionImpossible" in p.stderr or "No matching distribution" in p.stderr:
        return None, ""
    return None, f"pip exit {p.returncode}: {p.stderr.strip()[-300:]}"


def prerelease_fallback(args, sc, gp):
    """README "Differences from uv and pip": gpulock takes a pre-release when the package's final
    releases cannot be used; pip's finder hides pre-releases once any final release exists, and
    finds no solution. True when gpulock's answer shows that case."""
    sys.path.insert(0, str(Path(args.pip).parent))
    from pip._vendor.packaging.version import Version
    for name, version in gp.items():
        if not Version(version).is_prerelease:
            continue
        finals = [v for v in sc["packages"].get(name, {}).get("versions", {})
                  if not Version(v).is_prerelease]
        if finals:
            return True
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpulock", required=True)
    ap.add_argument("--pip", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--count", type=int, default=12)
    ap.add_argument("-j", type=int, default=2)
    args = ap.parse_args()
    Path(args.work).mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    seeds = [args.seed * 1000 + i for i in range(args.count)]
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        results = list(pool.map(lambda s: run_case(args, s), seeds))
    counts = {}
    for seed, status, detail, sc in results:
        counts[status] = counts.get(status, 0) + 1
        if status in ("disagree", "error", "deliberate", "order"):
            print(f"{status.upper()} case {seed}: requirements {sc['root']['requires']}")
            for n, pd in sc["packages"].items():
                print(f"    {n}: " + "; ".join(
                    f"{v}{' (yanked)' if vd.get('yanked') else ''}"
                    f"{' -> ' + ', '.join(vd['requires']) if vd.get('requires') else ''}"
                    for v, vd in pd["versions"].items()))
            print(f"    {detail}")
    print(f"pip 26.3 differential (seed {args.seed}): {len(results)} cases, "
          f"{counts.get('agree', 0)} agree, {counts.get('disagree', 0)} disagree, "
          f"{counts.get('deliberate', 0)} differ on purpose (pre-release fallback), "
          f"{counts.get('order', 0)} pick another valid solution (decision order), "
          f"{counts.get('skipped', 0)} skipped, {counts.get('error', 0)} errors "
          f"({time.monotonic() - start:.0f}s)")
    return 1 if counts.get("disagree") or counts.get("error") else 0


if __name__ == "__main__":
    sys.exit(main())
