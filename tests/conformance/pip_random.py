#!/usr/bin/python3
"""Randomized differential test of gpulock resolve against pip 26.3 (issue 20, `conformance`).

Usage: pip_random.py --gpulock EXE --pip PIP_SRC_DIR --work DIR [--seed N] [--count N] [-j N]
                     [--record FILE | --check-golden FILE]
       pip_random.py --gpulock EXE --golden FILE --work DIR [-j N]

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
--record FILE writes pip's answers (and each other solution of gpulock's that pip accepted) to
FILE (tests/recorded/, scripts/record-golden); --golden FILE answers with those instead of running
pip (ctest's conformance_pip_random, no reference directory needed): a case whose generated
index no longer matches the recording, or where gpulock gives a solution pip was not asked
about, fails and asks for a re-recording. --check-golden FILE (live) fails when FILE is not
what pip answers today. ctest's live run (conformance_pip_live) runs a short count;
scripts/conformance runs a few hundred.
"""
import argparse
import concurrent.futures
import hashlib
import json
import random
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import packse_index  # noqa: E402
import recorded  # noqa: E402

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


def case_digest(sc):
    """What a recording is valid for: the generated case, byte for byte."""
    return hashlib.sha256(json.dumps(sc, sort_keys=True).encode()).hexdigest()[:16]


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
        return seed, "error", f"gpulock exit {g.returncode}: {g.stderr.strip()[-300:]}", sc, None
    row = {"seed": seed, "case": case_digest(sc), "accepts": []}
    if args.golden:
        row = args.golden.get(seed)
        if row is None or row["case"] != case_digest(sc):
            return seed, "error", "the recording does not hold this case (re-record it)", sc, None
        pp, err = row["pip"], ("deep" if row.get("deep") else "")
    else:
        pp, err = run_pip(args, out, url, reqs)
        row.update(pip=pp, deep=err == "deep")
    if err == "deep":
        return seed, "skipped", "pip: ResolutionTooDeep", sc, row
    if err:
        return seed, "error", err, sc, row
    if gp == pp:
        return seed, "agree", "", sc, row
    if gp is not None and pp is not None:
        # Both found a solution: is gpulock's one pip accepts too? Then the two differ only in
        # which competing requirement got its newest version (decision order).
        if args.golden:
            accepted = gp in row["accepts"]
            if not accepted:
                detail = (f"pip: {pp}; gpulock: {gp} (pip was not asked about this solution "
                          "when recorded: re-record)")
                return seed, "disagree", detail, sc, row
        else:
            pinned, err = run_pip(args, out, url, reqs + [f"{n}=={v}" for n, v in gp.items()])
            accepted = not err and pinned == gp
            if accepted:
                row["accepts"].append(gp)
        if accepted:
            return seed, "order", f"pip: {pp}; gpulock: {gp} (pip accepts gpulock's too)", sc, row
    if pp is None and prerelease_fallback(sc, gp):
        return seed, "deliberate", f"pip: {pp}; gpulock: {gp}", sc, row
    return seed, "disagree", f"pip: {pp}; gpulock: {gp}", sc, row


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


def is_prerelease(version):
    """PEP 440 pre- and dev-releases among the versions gen_versions writes (a1, b2, rc1, .dev0)."""
    return re.search(r"(a|b|rc)[0-9]+|\.dev[0-9]+", version) is not None


def prerelease_fallback(sc, gp):
    """README "Differences from uv and pip": gpulock takes a pre-release when the package's final
    releases cannot be used; pip's finder hides pre-releases once any final release exists, and
    finds no solution. True when gpulock's answer shows that case."""
    for name, version in (gp or {}).items():
        if not is_prerelease(version):
            continue
        finals = [v for v in sc["packages"].get(name, {}).get("versions", {})
                  if not is_prerelease(v)]
        if finals:
            return True
    return False


def pip_version(pip_dir):
    text = (Path(pip_dir) / "__init__.py").read_text()
    return re.search(r'__version__ = "([^"]+)"', text).group(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpulock", required=True)
    ap.add_argument("--pip", help="pip's source (REFERENCE/pip/src/pip): ask pip itself")
    ap.add_argument("--golden", help="a recording: answer with pip's recorded answers")
    ap.add_argument("--record", help="write pip's answers here")
    ap.add_argument("--check-golden", help="fail unless this recording is pip's answer today")
    ap.add_argument("--work", required=True)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--count", type=int, default=12)
    ap.add_argument("-j", type=int, default=2)
    args = ap.parse_args()
    if bool(args.pip) == bool(args.golden):
        ap.error("give either --pip (live) or --golden (recorded)")
    Path(args.work).mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    if args.golden:
        header, rows = recorded.read(args.golden)
        reference = f"pip {header['pip']} (recorded in {Path(args.golden).name})"
        args.golden = {r["seed"]: r for r in rows}
        seeds = sorted(args.golden)
        args.seed = header["seed"]
    else:
        reference = f"pip {pip_version(args.pip)}"
        seeds = [args.seed * 1000 + i for i in range(args.count)]
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        results = list(pool.map(lambda s: run_case(args, s), seeds))
    counts = {}
    for seed, status, detail, sc, _ in results:
        counts[status] = counts.get(status, 0) + 1
        if status in ("disagree", "error", "deliberate", "order"):
            print(f"{status.upper()} case {seed}: requirements {sc['root']['requires']}")
            for n, pd in sc["packages"].items():
                print(f"    {n}: " + "; ".join(
                    f"{v}{' (yanked)' if vd.get('yanked') else ''}"
                    f"{' -> ' + ', '.join(vd['requires']) if vd.get('requires') else ''}"
                    for v, vd in pd["versions"].items()))
            print(f"    {detail}")
    print(f"{reference} differential (seed {args.seed}): {len(results)} cases, "
          f"{counts.get('agree', 0)} agree, {counts.get('disagree', 0)} disagree, "
          f"{counts.get('deliberate', 0)} differ on purpose (pre-release fallback), "
          f"{counts.get('order', 0)} pick another valid solution (decision order), "
          f"{counts.get('skipped', 0)} skipped, {counts.get('error', 0)} errors "
          f"({time.monotonic() - start:.0f}s)")
    failed = bool(counts.get("disagree") or counts.get("error"))
    rows = [row for *_, row in results]
    if args.record:
        if any(row is None for row in rows):
            print("not recorded: a case has no pip answer")
            return 1
        recorded.write(args.record, {"what": "pip_random.py's cases and pip's answers",
                                     "pip": pip_version(args.pip), "seed": args.seed,
                                     "count": args.count}, rows)
        print(f"recorded {len(rows)} cases in {args.record}")
    if args.check_golden:
        _, old = recorded.read(args.check_golden)
        old = {r["seed"]: r for r in old}
        stale = [r["seed"] for r in rows if r is None or
                 {k: v for k, v in old.get(r["seed"], {}).items() if k != "accepts"} !=
                 {k: v for k, v in json.loads(json.dumps(r)).items() if k != "accepts"}]
        if stale:
            print(f"FAILED: {args.check_golden} is not pip's answer today for cases {stale[:10]} "
                  "(re-record it with scripts/record-golden)")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
