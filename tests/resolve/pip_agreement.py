#!/usr/bin/env python3
"""gpulock resolve agrees with pip on ordinary packages (issue 6, "Agreement with pip").

For each requirement set below, on the PyPI-like fixture index served by the test servers:
  pip:     python3 -m pip install --dry-run --ignore-installed --report FILE --only-binary :all:
           --python-version X.Y --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64
           --platform manylinux2014_x86_64 --target DIR --index-url $PYPI_URL -q REQS
  gpulock: gpulock resolve REQS --python-version X.Y --platform manylinux_2_28_x86_64
           --index-url $PYPI_URL -o FILE --report FILE.json
and the name -> version sets must be equal. Cases where gpulock deliberately differs from pip
are listed in DIFFERENCES with the reason and the versions each side must pick, so the
difference itself is checked too.

Usage: pip_agreement.py --gpulock EXE --env servers.env --work DIR [-k SUBSTRING]
pip comes from the `python3` first on PATH (it must have pip; /usr/bin/python3 may not). pip runs
offline against loopback with a private cache directory.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# (python version, requirements, extra flags for both tools). Specifier material is the
# fixture-* packages (fixtures/README.md "Facts tests rely on"), plus ordinary deps. pip costs
# about a second of CPU per run, so one run checks several independent requirement sets at once
# (their dependency graphs do not share packages).
# fixture-versions: 1.0 1.1 1.1.1 1.2.0 1.2.5 1.4 1.4.2 2.0.0 2.0.1 2.0.post1 2.1.0.dev3
# 2.1.0rc1 3.0a1.
CASES = [
    # Specifier operators, the yanked filelock 3.20.0 (skipped unless pinned with ==),
    # pre-releases named in a specifier or the only versions, markers and extras.
    ("3.11", ["fixture-versions", "filelock", "jinja2", "colorama"], []),
    ("3.11", ["fixture-versions~=1.2", "numpy", "mpmath>=1.4.0a1"], []),
    ("3.11", ["fixture-versions~=1.2.0", "fixture-onlypre", "filelock==3.20.0"], []),
    ("3.11", ["fixture-versions!=2.0.1", "numpy>=2.4.0rc1", "jinja2", "markupsafe<3"], []),
    ("3.11", ["fixture-versions!=2.0.*", "sympy>=1.15.0rc1"], []),
    ("3.11", ["fixture-versions==1.*", "fixture-conflict"], []),
    ("3.11", ["fixture-versions==1.4.*,!=1.4.2", "sympy", "filelock>=3.16"], []),
    ("3.11", ["fixture-versions>2.0", "fixture-markers[remote]"], []),
    ("3.11", ["fixture-versions<=2.0", "fixture-markers"], []),
    ("3.11", ["fixture-versions==2.0.post1", "opt-einsum<3.4"], []),
    ("3.11", ["fixture-versions===1.4", "optree", "typing-extensions~=4.10"], []),
    ("3.11", ["fixture-versions>=1.1,<1.2", "fixture-versions!=1.1.1",
              "networkx", "pillow!=8.3.*,>=5.3.0", "setuptools<80", "fsspec==2025.*"], []),
    ("3.11", ["fixture-versions>=2.1.0.dev0", "mpmath", "colorama; sys_platform == 'win32'",
              "fsspec; python_version >= '3.11'"], []),
    ("3.11", ["fixture-versions<3", "numpy", "sympy", "filelock"], ["--pre"]),
    # Requires-Python limits for other targets.
    ("3.10", ["numpy", "networkx", "filelock", "pillow", "fixture-py312", "sympy", "jinja2"], []),
    ("3.12", ["numpy", "networkx", "fixture-versions~=2.0", "setuptools", "opt-einsum"], []),
]


def _pip_marker_python(pip_python: tuple) -> dict:
    # numpy 2.2.6 is the newest for Python 3.10; pip applies `numpy>=2.1; python_version >=
    # "3.11"` when it runs on 3.11+, `numpy<2` otherwise.
    return {"numpy": "2.2.6" if pip_python >= (3, 11) else "1.26.4"}


# Where gpulock deliberately differs from pip: (python, requirements, flags) -> why, what gpulock
# must pick, and what pip picks given the (major, minor) of the interpreter pip runs on (a dict,
# a list of acceptable dicts, or None: pip finds no solution). The difference is checked, not
# just ignored.
DIFFERENCES = {
    ("3.10", ("fixture-markers",), ()): (
        "pip evaluates environment markers for the interpreter it runs on even with "
        "--python-version 3.10; gpulock evaluates them for the target, so `numpy<2; "
        "python_version < \"3.11\"` applies",
        {"numpy": "1.26.4"},
        _pip_marker_python,
    ),
    ("3.12", ("fixture-py312",), ()): (
        "pip 23 checks the Requires-Python of PEP 658 metadata (fixture-py312 2.0: >=3.12) "
        "against the interpreter it runs on, not --python-version; gpulock checks the target "
        "(a pip that fixes this agrees with gpulock)",
        {"fixture-py312": "2.0"},
        lambda v: [{"fixture-py312": "2.0"}] if v >= (3, 12) else [{"fixture-py312": "1.0"}, {"fixture-py312": "2.0"}],
    ),
    ("3.11", ("fixture-versions>2.0.1",), ()): (
        "only pre-releases (2.1.0.dev3, 2.1.0rc1, 3.0a1) satisfy the requirement: gpulock's "
        "--prerelease if-necessary (uv's default) then takes the best pre-release; pip refuses "
        "pre-releases that no specifier names unless --pre is given",
        {"fixture-versions": "3.0a1"},
        lambda v: None,
    ),
}
CASES += [(py, list(reqs), list(flags)) for (py, reqs, flags) in DIFFERENCES]


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_env(path: Path) -> dict:
    env = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#") and "=" in line:
            k, v = line.split("=", 1)
            env[k] = v
    return env


def find_pip_python() -> tuple:
    for cand in [shutil.which("python3"), sys.executable, "/usr/bin/python3"]:
        if cand and subprocess.run([cand, "-m", "pip", "--version"], capture_output=True).returncode == 0:
            out = subprocess.run([cand, "-c", "import sys; print(*sys.version_info[:2])"],
                                 capture_output=True, text=True).stdout.split()
            return cand, (int(out[0]), int(out[1]))
    raise SystemExit("no python3 with pip found on PATH (the agreement test needs real pip)")


def run_pip(py: str, pypi: str, python_version: str, reqs, flags, work: Path, cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_CONFIG_FILE=os.devnull, PIP_NO_INPUT="1",
               PYTHONDONTWRITEBYTECODE="1", PIP_CACHE_DIR=str(cache))
    with tempfile.TemporaryDirectory(dir=work) as d:
        report = Path(d) / "report.json"
        cmd = [py, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--report", str(report),
               "--only-binary", ":all:", "--python-version", python_version,
               "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64",
               "--platform", "manylinux2014_x86_64", "--target", str(Path(d) / "target"),
               "--index-url", pypi, "-q", *flags, *reqs]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=240)
        if p.returncode != 0:
            return {"error": f"pip failed ({p.returncode}): {p.stderr.strip()[-600:]}"}
        doc = json.loads(report.read_text())
    return {norm(i["metadata"]["name"]): i["metadata"]["version"] for i in doc["install"]}


def run_gpulock(exe: str, pypi: str, python_version: str, reqs, flags, work: Path, cache: Path) -> dict:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "NO_COLOR": "1"}
    with tempfile.TemporaryDirectory(dir=work) as d:
        report = Path(d) / "report.json"
        cmd = [exe, "resolve", *reqs, "--python-version", python_version,
               "--platform", "manylinux_2_28_x86_64", "--index-url", pypi, "--cache-dir", str(cache),
               "-o", str(Path(d) / "pylock.toml"), "--report", str(report), "-q", *flags]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
        if p.returncode != 0:
            return {"error": f"gpulock failed ({p.returncode}): {p.stderr.strip()[-600:]}"}
        doc = json.loads(report.read_text())
    return {norm(x["name"]): x["version"] for x in doc["packages"]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpulock", required=True)
    ap.add_argument("--env", required=True, type=Path)
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("-k", default="")
    args = ap.parse_args()
    env = read_env(args.env)
    pypi = env["PYPI_URL"]
    py, pip_python = find_pip_python()
    print(f"pip runs on {py} (Python {pip_python[0]}.{pip_python[1]})")
    args.work.mkdir(parents=True, exist_ok=True)
    pip_cache = args.work / "pip-cache"
    gl_cache = args.work / "gpulock-cache"

    cases = [c for c in CASES if args.k in " ".join(c[1])]
    failures = []

    def one(case):
        pyv, reqs, flags = case
        return case, run_pip(py, pypi, pyv, reqs, flags, args.work, pip_cache), \
            run_gpulock(args.gpulock, pypi, pyv, reqs, flags, args.work, gl_cache)

    # pip is the slow side (about 1 s of CPU each); two at a time suits a 2-core machine.
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(one, cases))
    for (pyv, reqs, flags), pip_got, gl_got in results:
        label = f"[py{pyv}] {' '.join(reqs)} {' '.join(flags)}".strip()
        key = (pyv, tuple(reqs), tuple(flags))
        if key in DIFFERENCES:
            why, want_gl, pip_rule = DIFFERENCES[key]
            want_pip = pip_rule(pip_python)
            bad = {k: (gl_got.get(k), v) for k, v in want_gl.items() if gl_got.get(k) != v}
            if want_pip is None:
                if "error" not in pip_got:
                    bad["pip"] = (pip_got, "no solution")
            else:
                options = want_pip if isinstance(want_pip, list) else [want_pip]
                if not any(all(pip_got.get(k) == v for k, v in w.items()) for w in options):
                    bad["pip"] = (pip_got, options)
            print(f"DIFF (expected) {label}: {why}\n    gpulock {gl_got}\n    pip     {pip_got}")
            if bad:
                failures.append(f"{label}: the documented difference changed (got, expected): {bad}")
            continue
        if "error" in pip_got or "error" in gl_got:
            failures.append(f"{label}: {pip_got.get('error', '')} {gl_got.get('error', '')}")
            continue
        if pip_got != gl_got:
            only_pip = {k: v for k, v in pip_got.items() if gl_got.get(k) != v}
            only_gl = {k: v for k, v in gl_got.items() if pip_got.get(k) != v}
            failures.append(f"{label}: pip {only_pip} != gpulock {only_gl}")
        else:
            print(f"ok   {label}: {', '.join(f'{k}=={v}' for k, v in sorted(gl_got.items()))}")
    print(f"{len(results) - len(failures)}/{len(results)} cases agree")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
