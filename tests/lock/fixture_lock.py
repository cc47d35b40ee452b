#!/usr/bin/env python3
"""Writes a pylock.toml for a few packages of the generated fixture index, from its
manifest.json (independent of gpulock: standard library only), for the end-to-end test with pip.

Usage: fixture_lock.py MANIFEST HTTP_URL OUT

The lock is written in pip's own layout ([[packages.wheels]] tables, literal hashes), with every
wheel and sdist of each chosen version, so gpulock reads a foreign-shaped lock, re-writes it, and
exports it; [tool.gpulock.target] says which wheel a direct-URL export picks (CPython 3.11 on
manylinux_2_28_x86_64, the host pip runs on).
"""
import json
import sys

PICKS = [("filelock", "3.16.1", None), ("jinja2", "3.1.4", None), ("markupsafe", "3.0.2", None),
         ("mpmath", "1.3.0", None), ("sympy", "1.13.1", None),
         ("typing-extensions", "4.12.2", None),
         ("colorama", "0.4.6", 'sys_platform == "win32"')]


def q(s):
    return json.dumps(s)  # ASCII only: a JSON string is a TOML basic string


def main(manifest, http_url, out):
    with open(manifest) as fh:
        projects = json.load(fh)["indexes"]["pypi"]["projects"]
    lines = ['lock-version = "1.0"', 'created-by = "fixture_lock.py"']
    for name, version, marker in PICKS:
        files = [f for f in projects[name] if f["version"] == version and not f["yanked"]]
        if not files:
            sys.exit(f"{name} {version} is not in {manifest}")
        lines += ["", "[[packages]]", f"name = {q(name)}", f"version = {q(version)}"]
        if marker:
            lines.append(f"marker = {q(marker)}")
        lines.append(f"index = {q(http_url + '/simple/')}")
        for f in sorted(files, key=lambda f: f["filename"]):
            table = "[packages.sdist]" if not f["filename"].endswith(".whl") else "[[packages.wheels]]"
            lines += ["", table, f"name = {q(f['filename'])}", f"url = {q(http_url + f['url'])}",
                      f"size = {f['size']}"]
            if f.get("upload_time"):
                lines.append(f"upload-time = {f['upload_time']}")
            lines.append(f"hashes = {{ sha256 = {q(f['sha256'])} }}")
    lines += ["", "[tool.gpulock]", "schema = 1", "", "[tool.gpulock.target]",
              'python = "3.11"', 'platform = "manylinux_2_28_x86_64"']
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
