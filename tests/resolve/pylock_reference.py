#!/usr/bin/env python3
"""Reads locks with packaging 26.3's own PEP 751 reader (packaging.pylock, as vendored in pip 26.3
under REFERENCE/pip), the reference for what a valid pylock.toml is, and asks it what it
would install for a machine: an independent check of gpulock's multi-target locks.

Usage: pylock_reference.py REFERENCE FILE... [--select PYTHON:PLATFORM ...]

Each FILE must load (Pylock.from_dict) and validate. With --select, for each FILE and each
machine (e.g. 3.12:manylinux_2_28_x86_64) Pylock.select() runs with that machine's markers and
tags, and one line per package is printed: "PYTHON:PLATFORM FILE NAME VERSION WHEEL".
Exit 0 when every file validates and every selection succeeds, 1 otherwise (with the reason).
"""
import os
import pathlib
import sys
import tomllib


def machine(spec):
    python, platform = spec.split(":", 1)
    major, minor = (int(x) for x in python.split(".")[:2])
    arch = platform.split("_", 3)[-1] if platform.startswith("manylinux_") else platform
    glibc = int(platform.split("_")[2]) if platform.startswith("manylinux_") else 17
    platforms = [f"manylinux_2_{m}_{arch}" for m in range(glibc, 4, -1)]
    legacy = ["manylinux2014", "manylinux2010", "manylinux1"] if arch == "x86_64" else ["manylinux2014"]
    platforms += [f"{name}_{arch}" for name in legacy] + [f"linux_{arch}"]
    env = {
        "implementation_name": "cpython",
        "implementation_version": f"{major}.{minor}.0",
        "os_name": "posix",
        "platform_machine": arch,
        "platform_release": "",
        "platform_system": "Linux",
        "platform_version": "",
        "python_full_version": f"{major}.{minor}.0",
        "platform_python_implementation": "CPython",
        "python_version": f"{major}.{minor}",
        "sys_platform": "linux",
    }
    return env, (major, minor), platforms


def main(argv):
    reference, rest = argv[1], argv[2:]
    sys.path.insert(0, os.path.join(reference, "pip", "src"))
    from pip._vendor.packaging import tags as ptags
    from pip._vendor.packaging.pylock import Pylock, is_valid_pylock_path

    files, selects = [], []
    it = iter(rest)
    for a in it:
        if a == "--select":
            selects.append(next(it))
        else:
            files.append(a)
    ok = True
    for f in files:
        try:
            if not is_valid_pylock_path(pathlib.Path(f)):
                raise ValueError("not a pylock file name")
            with open(f, "rb") as fh:
                lock = Pylock.from_dict(tomllib.load(fh))
            lock.validate()
        except Exception as e:  # noqa: BLE001 - every failure is reported the same way
            print(f"{f}: invalid: {type(e).__name__}: {e}")
            ok = False
            continue
        for spec in selects:
            env, version, platforms = machine(spec)
            tags = list(ptags.cpython_tags(version, platforms=platforms))
            tags += list(ptags.compatible_tags(version, f"cp{version[0]}{version[1]}", platforms))
            try:
                for package, dist in lock.select(environment=env, tags=tags):
                    name = getattr(dist, "name", None) or os.path.basename(dist.url or "")
                    print(f"{spec} {f} {package.name} {package.version} {name}")
            except Exception as e:  # noqa: BLE001
                print(f"{spec} {f}: select failed: {type(e).__name__}: {e}")
                ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
