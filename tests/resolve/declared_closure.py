#!/usr/bin/python3
"""Checks the nvidia-*/cuda-* packages of a lock against what its torch wheel declares.

Independent of gpulock's code (Python's standard library plus `packaging`, so /usr/bin/python3):
reads the METADATA of the locked torch wheel from the served fixture tree, evaluates its
Requires-Dist markers for the target, follows every requirement through the METADATA of the
locked wheels (extras included, as a resolver does), and collects the closure. The lock's set
of nvidia-*/cuda-* packages must equal the closure's, and every requirement met on the way must
hold for the locked version (so torch's `==` pins are exact).

Usage: declared_closure.py --lock pylock.toml --index-root DIR --http-url URL
                           --python 3.11 [--machine x86_64] [--root torch]
Prints the closure's nvidia-*/cuda-* set (`name==version`, sorted) on stdout; exit 1 with the
differences on stderr when the lock disagrees.
"""
import argparse
import re
import sys
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from packaging.requirements import Requirement
from packaging.version import Version


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def gpu_name(name: str) -> bool:
    return name.startswith("nvidia-") or name.startswith("cuda-")


def metadata_of(wheel: Path) -> list:
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1]
        if len(names) != 1:
            raise SystemExit(f"{wheel}: expected one .dist-info/METADATA, found {names}")
        msg = Parser().parsestr(z.read(names[0]).decode("utf-8"))
    return msg.get_all("Requires-Dist") or []


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lock", required=True, type=Path)
    ap.add_argument("--index-root", required=True, type=Path)
    ap.add_argument("--http-url", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--machine", default="x86_64")
    ap.add_argument("--root", default="torch")
    args = ap.parse_args()

    lock = tomllib.loads(args.lock.read_text())
    locked = {}
    for p in lock["packages"]:
        wheels = p.get("wheels", [])
        if len(wheels) != 1:
            raise SystemExit(f"{p['name']}: expected one wheel in the lock, found {len(wheels)}")
        url = wheels[0]["url"]
        if not url.startswith(args.http_url):
            raise SystemExit(f"{p['name']}: {url} is not under {args.http_url}")
        path = args.index_root / unquote(urlsplit(url).path).lstrip("/")
        locked[norm(p["name"])] = (p["version"], path)

    env = {
        "python_version": args.python,
        "python_full_version": args.python + ".0",
        "platform_machine": args.machine,
        "platform_system": "Linux",
        "sys_platform": "linux",
        "os_name": "posix",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "implementation_version": args.python + ".0",
        "platform_release": "",
        "platform_version": "",
    }

    problems = []
    closure = set()
    queue = [(norm(args.root), frozenset())]
    seen = set()
    while queue:
        name, extras = queue.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        if name not in locked:
            problems.append(f"{name} is required but not locked")
            continue
        closure.add(name)
        version, wheel = locked[name]
        for text in metadata_of(wheel):
            req = Requirement(text)
            if req.marker is not None:
                applies = any(req.marker.evaluate(dict(env, extra=e)) for e in ({""} | set(extras)))
                if not applies:
                    continue
            dep = norm(req.name)
            if dep not in locked:
                problems.append(f"{name} {version} requires {text!r}, but {dep} is not locked")
                continue
            if not req.specifier.contains(Version(locked[dep][0]), prereleases=True):
                problems.append(f"{name} {version} requires {text!r}, but {dep} {locked[dep][0]} is locked")
            queue.append((dep, frozenset(norm(x) for x in req.extras)))

    expected = {n for n in closure if gpu_name(n)}
    have = {n for n in locked if gpu_name(n)}
    for n in sorted(have - expected):
        problems.append(f"{n} {locked[n][0]} is locked but {args.root} does not need it")
    for n in sorted(expected - have):
        problems.append(f"{n} is needed but not locked")
    for n in sorted(expected):
        print(f"{n}=={locked[n][0]}")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
