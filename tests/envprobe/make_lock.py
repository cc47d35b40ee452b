#!/usr/bin/env python3
"""Writes a pylock.toml of chosen packages of the generated fixture index, from its
manifest.json (standard library only, independent of gpulock), for `gpulock install` tests.

Usage: make_lock.py MANIFEST HTTP_URL OUT [--gpu KEY=VALUE]... NAME==VERSION@INDEX...

INDEX is a manifest index ("pypi", "whl/cu124"). For each package the wheel for CPython 3.11 on
Linux x86_64 is chosen (the interpreter the tests install into). `--gpu` entries go into
[tool.gpulock.gpu] (`archs=sm_90,sm_80` becomes a list); the target is Python 3.11 on
manylinux_2_28_x86_64.
"""
import json
import sys


def q(s):
    return json.dumps(s)  # ASCII only: a JSON string is a TOML basic string


def fits(tag):
    py, abi, plat = tag.split("-", 2)
    ok_py = any(p in ("py3", "cp311") for p in py.split("."))
    ok_abi = any(a in ("none", "cp311", "abi3") for a in abi.split("."))
    ok_plat = plat == "any" or any(
        p.endswith("x86_64") and (p.startswith("manylinux") or p.startswith("linux"))
        for p in plat.split("."))
    return ok_py and ok_abi and ok_plat


def main(argv):
    manifest, http_url, out = argv[:3]
    gpu, picks = [], []
    rest = argv[3:]
    i = 0
    while i < len(rest):
        if rest[i] == "--gpu":
            gpu.append(rest[i + 1].split("=", 1))
            i += 2
        else:
            picks.append(rest[i])
            i += 1
    with open(manifest) as fh:
        indexes = json.load(fh)["indexes"]
    lines = ['lock-version = "1.0"', 'created-by = "tests/envprobe/make_lock.py"',
             'requires-python = ">=3.11"']
    for pick in picks:
        spec, index = pick.rsplit("@", 1)
        name, version = spec.split("==")
        files = [f for f in indexes[index]["projects"][name]
                 if f["version"] == version and f["filename"].endswith(".whl") and fits(f["tag"])]
        if not files:
            sys.exit(f"no wheel of {name} {version} for cp311 x86_64 on {index}")
        f = sorted(files, key=lambda f: f["filename"])[0]
        lines += ["", "[[packages]]", f"name = {q(name)}", f"version = {q(version)}",
                  f"index = {q(http_url + ('/simple/' if index == 'pypi' else '/' + index))}",
                  "", "[[packages.wheels]]", f"name = {q(f['filename'])}",
                  f"url = {q(http_url + f['url'])}", f"size = {f['size']}",
                  f"hashes = {{ sha256 = {q(f['sha256'])} }}"]
    lines += ["", "[tool.gpulock]", "schema = 1", "", "[tool.gpulock.target]",
              'python = "3.11"', 'platform = "manylinux_2_28_x86_64"']
    if gpu:
        lines += ["", "[tool.gpulock.gpu]"]
        for key, value in gpu:
            if key == "archs":
                lines.append(f"archs = [{', '.join(q(a) for a in value.split(','))}]")
            else:
                lines.append(f"{key} = {q(value)}")
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
