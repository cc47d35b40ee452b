#!/usr/bin/env python3
"""`gpulock install` timings (issue 25): cold (empty cache) and warm (cached) native installs
into a fresh venv, against pip 26 reading the lock itself (`pip install --no-deps
--require-hashes -r pylock.toml`: pip 26.3 takes a PEP 751 lock as a requirements source, by its
file name, experimental) and `gpulock install --installer pip` (the lock exported for pip).
Venv creation is not timed.

Usage: install_bench.py --gpulock BUILD/cli/gpulock [--pip PIP_SRC] [--work DIR]
                        [--lock NAME=pylock.toml]... [--large-mb 400] [--large-wheels 4]

Without --lock only the generated set runs: --large-wheels wheels of --large-mb MB in total
(incompressible "libraries" plus 1500 small modules each), locked with file:// URLs.
Prints a Markdown table (seconds, the median of --repeat runs).
"""
import argparse
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PIP_ROW = "pip 26 install -r pylock.toml (--no-deps --require-hashes)"


def make_large(out, total_mb, count):
    os.makedirs(out, exist_ok=True)
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "install"))
    import make_wheels  # noqa: E402
    entries = []
    per = total_mb * 1024 * 1024 // count
    for i in range(count):
        name = f"bigpkg{i}"
        files = {f"{name}/lib/lib{name}.so": os.urandom(per)}
        for k in range(1500):
            files[f"{name}/mod{k // 100}/m{k}.py"] = f"X = {k}\n".encode() * 20
        files[f"{name}/__init__.py"] = b""
        wheel = make_wheels.make_wheel(out, name, "1.0", files, purelib=False,
                                       tag="py3-none-any")
        entries.append((name, "1.0", wheel))
    lock = os.path.join(out, "pylock.toml")
    make_wheels.write_lock(lock, entries)
    return lock


def timed(argv, env=None):
    start = time.perf_counter()
    r = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(argv)}\n{r.stdout}\n{r.stderr}")
    return elapsed


def venv(path, with_pip=False):
    shutil.rmtree(path, ignore_errors=True)
    argv = [sys.executable, "-m", "venv", path] + ([] if with_pip else ["--without-pip"])
    subprocess.run(argv, check=True)
    return os.path.join(path, "bin", "python")


def gpulock_argv(gpulock, lock, python, cache):
    """The native install of LOCK into PYTHON's environment (also bench/install_scale/run)."""
    return [gpulock, "install", "--lock", lock, "--python", python, "--no-probe", "--cache-dir", cache]


def pip_argv(pip, lock, python, cache):
    """pip 26 installing the files LOCK names into PYTHON's environment: PIP is pip's source
    directory (src/pip, run by this interpreter) or, given as "-m", `python -m pip`."""
    launcher = [sys.executable, "-m", "pip"] if pip == "-m" else [sys.executable, pip]
    return launcher + ["--python", python, "install", "--no-deps", "--require-hashes", "--no-input",
                       "--disable-pip-version-check", "--cache-dir", cache, "-r", lock]


def default_pip():
    """The reference pip 26.3 beside the checkout (shared/reference/pip), the one the tests use."""
    return os.path.join(HERE, "..", "..", "shared", "reference", "pip", "src", "pip")


def bench(name, lock, args, work):
    g, pip = args.gpulock, args.pip
    os.makedirs(work, exist_ok=True)
    cache = os.path.join(work, "cache")
    # pip 26.3 reads a lock given to -r only when its file name is pylock.toml or
    # pylock.<name>.toml (pip/_internal/cli/req_command.py, is_valid_pylock_filename); another
    # name is parsed as a requirements file. Such a lock is copied to work/pylock.toml (its
    # file:// URLs are absolute; a relative `path` entry would not be found from there).
    name = os.path.basename(lock)
    if not re.fullmatch(r"pylock\.([^.]+\.)?toml", name):
        shutil.copyfile(lock, os.path.join(work, "pylock.toml"))
        lock = os.path.join(work, "pylock.toml")
    rows = {}

    def best(label, prepare, argv_of):
        times = []
        for _ in range(args.repeat):
            argv = argv_of(prepare())
            times.append(timed(argv))
        rows[label] = statistics.median(times)

    def native_cold():
        shutil.rmtree(cache, ignore_errors=True)
        return venv(os.path.join(work, "v"))

    native = lambda py: gpulock_argv(g, lock, py, cache)  # noqa: E731
    best("gpulock native, cold cache", native_cold, native)
    best("gpulock native, warm cache", lambda: venv(os.path.join(work, "v")), native)
    pip_cache = os.path.join(work, "pip-cache")
    shutil.rmtree(pip_cache, ignore_errors=True)
    best(PIP_ROW, lambda: venv(os.path.join(work, "v")),
         lambda py: pip_argv(pip, lock, py, pip_cache))
    best("gpulock --installer pip", lambda: venv(os.path.join(work, "vp"), with_pip=True),
         lambda py: [g, "install", "--installer", "pip", "--lock", lock, "--python", py,
                     "--no-probe"])
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpulock", required=True)
    ap.add_argument("--pip", default=default_pip())
    ap.add_argument("--work", default="/tmp/gpulock-install-bench")
    ap.add_argument("--lock", action="append", default=[])
    ap.add_argument("--large-mb", type=int, default=400)
    ap.add_argument("--large-wheels", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    sets = [tuple(x.split("=", 1)) for x in args.lock]
    if args.large_mb > 0:
        sets.append((f"{args.large_wheels} generated wheels, {args.large_mb} MB",
                     make_large(os.path.join(args.work, "large"), args.large_mb,
                                args.large_wheels)))
    results = []
    for name, lock in sets:
        results.append((name, bench(name, os.path.abspath(lock), args,
                                    os.path.join(args.work, "run"))))
    labels = list(results[0][1])
    print("| | " + " | ".join(n for n, _ in results) + " |")
    print("|---|" + "---|" * len(results))
    for label in labels:
        print(f"| {label} | " + " | ".join(f"{r[label]:.2f} s" for _, r in results) + " |")
    for name, r in results:
        pip_t = r[PIP_ROW]
        print(f"\n{name}: warm {pip_t / r['gpulock native, warm cache']:.1f}x faster than pip, "
              f"cold {pip_t / r['gpulock native, cold cache']:.1f}x")


if __name__ == "__main__":
    main()
