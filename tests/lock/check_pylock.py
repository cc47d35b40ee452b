#!/usr/bin/env python3
"""An independent reader for the locks gpulock writes: loads each file with Python's tomllib and
checks PEP 751 from outside (canonical spec: packaging.python.org "pylock.toml Specification",
plus the extra checks of pypa/packaging's packaging.pylock), with `packaging` for names,
versions, markers, specifiers and file names when it is importable (/usr/bin/python3 on Debian).

Usage: check_pylock.py FILE...      exit 0 when every file is a valid lock, 1 otherwise
       check_pylock.py --invalid FILE...   exit 0 when every file is rejected
"""
import datetime
import re
import sys
import tomllib

try:
    from packaging.markers import Marker
    from packaging.specifiers import SpecifierSet
    from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename
    from packaging.version import Version
except ImportError:  # still checks structure and types
    Marker = SpecifierSet = Version = None

NORMALIZED = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


# [tool.gpulock.gpu]'s typed values, as gpu/src/cuda_versions.cpp parses them.
def number(text):
    return int(text) if re.fullmatch(r"[0-9]{1,9}", text) else None


def driver_version(text):
    parts = text.split(".")
    return len(parts) <= 4 and all(number(p) is not None for p in parts)


def cuda_version(text):
    major, dot, rest = text.partition(".")
    if not 1 <= (number(major) or 0) <= 99:
        return False
    if not dot:
        return True
    minor, dot2, extra = rest.partition(".")
    return (number(minor) is not None and number(minor) <= 9
            and (not dot2 or number(extra) is not None))


def compute_capability(text):
    if text.startswith("sm_"):
        digits = text[3:]
        return (2 <= len(digits) <= 3 and bool(number(digits[:-1]))
                and number(digits[-1]) is not None)
    major, dot, minor = text.partition(".")
    return (bool(dot) and 1 <= (number(major) or 0) <= 99 and number(minor) is not None
            and number(minor) <= 9)


GPU_VALUES = {"driver": lambda t: t in ("none", "auto") or driver_version(t),
              "min-driver": driver_version, "cuda": cuda_version, "cuda-ceiling": cuda_version,
              "compat": lambda t: t in ("strict", "minor")}


class Invalid(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise Invalid(msg)


def check_str(d, key, where, required=False):
    if key not in d:
        need(not required, f"{where}: '{key}' is required")
        return None
    need(isinstance(d[key], str), f"{where}: '{key}' must be a string")
    return d[key]


def check_str_list(d, key, where):
    if key in d:
        need(isinstance(d[key], list) and all(isinstance(x, str) for x in d[key]),
             f"{where}: '{key}' must be an array of strings")


def check_file(f, where, package, kind):
    need(isinstance(f, dict), f"{where}: must be a table")
    check_str(f, "name", where)
    url = check_str(f, "url", where)
    path = check_str(f, "path", where)
    need(url is not None or path is not None, f"{where}: needs 'url' or 'path'")
    if "size" in f:
        need(isinstance(f["size"], int) and not isinstance(f["size"], bool) and f["size"] >= 0,
             f"{where}: 'size' must be a non-negative integer")
    if "upload-time" in f:
        t = f["upload-time"]
        need(isinstance(t, datetime.datetime), f"{where}: 'upload-time' must be a datetime")
        need(t.tzinfo is not None and t.utcoffset() == datetime.timedelta(0),
             f"{where}: 'upload-time' must be in UTC")
    need(isinstance(f.get("hashes"), dict) and len(f["hashes"]) >= 1,
         f"{where}: 'hashes' must be a table with at least one entry")
    for algo, digest in f["hashes"].items():
        need(isinstance(digest, str) and digest, f"{where}: hash '{algo}' must be a string")
    if kind in ("wheel", "sdist") and Version is not None:
        filename = f.get("name") or (path or url.split("?")[0].split("#")[0]).rsplit("/", 1)[-1]
        if url is not None and "name" not in f and path is None:
            from urllib.parse import unquote
            filename = unquote(filename)
        if kind == "wheel":
            name, version, _, _ = parse_wheel_filename(filename)
        else:
            name, version = parse_sdist_filename(filename)
        need(name == package["name"], f"{where}: file {filename} is not of {package['name']}")
        if "version" in package:
            need(version == Version(package["version"]),
                 f"{where}: file {filename} has another version")


def file_name(f):
    from urllib.parse import unquote
    if f.get("name"):
        return f["name"]
    if f.get("path"):
        return f["path"].rsplit("/", 1)[-1]
    return unquote(f.get("url", "").split("?")[0].split("#")[0].rsplit("/", 1)[-1])


# [packages.tool.gpulock.files."<wheel>"] (lock/include/gpulock/lock/wheel_files.h): gpulock's
# record of each wheel's files, keyed by a file name the package lists.
def check_wheel_files(p, where):
    files = p.get("tool", {}).get("gpulock", {}).get("files")
    if files is None:
        return
    where = f"{where}.tool.gpulock.files"
    need(isinstance(files, dict), f"{where}: must be a table")
    names = {file_name(f) for f in p.get("wheels", []) + [p[k] for k in ("archive", "sdist")
                                                          if k in p] if isinstance(f, dict)}
    for name, rec in files.items():
        need(name in names, f"{where}: {name!r} is not a file of the package")
        need(isinstance(rec, dict), f"{where}.{name}: must be a table")
        n = rec.get("members")
        need(isinstance(n, int) and not isinstance(n, bool) and n >= 0,
             f"{where}.{name}: 'members' must be a non-negative integer")
        need(isinstance(rec.get("members-sha256"), str)
             and re.fullmatch(r"[0-9a-f]{64}", rec["members-sha256"]),
             f"{where}.{name}: 'members-sha256' must be 64 lowercase hex digits")
        for lib in rec.get("shared-libraries", []):
            need(isinstance(lib, str) and lib and not lib.startswith("/")
                 and all(part not in ("", ".", "..") for part in lib.split("/"))
                 and "\\" not in lib
                 and not any(ord(c) < 0x20 or ord(c) == 0x7f for c in lib),
                 f"{where}.{name}: shared library {lib!r} is not a relative path")
        for text in rec.get("conflicts", []):
            need(isinstance(text, str) and text,
                 f"{where}.{name}: conflict {text!r} is not a sentence")


def check_lock(doc):
    lv = check_str(doc, "lock-version", "top level", required=True)
    if Version is not None:
        need(Version("1") <= Version(lv) < Version("2"), f"unsupported lock-version {lv}")
    else:
        need(re.match(r"^1(\.\d+)?$", lv), f"unsupported lock-version {lv}")
    check_str(doc, "created-by", "top level", required=True)
    for key in ("environments", "extras", "dependency-groups", "default-groups"):
        check_str_list(doc, key, "top level")
    if Marker is not None:
        for env in doc.get("environments", []):
            Marker(env)
    rp = check_str(doc, "requires-python", "top level")
    if rp is not None and SpecifierSet is not None:
        SpecifierSet(rp)
    need(isinstance(doc.get("packages"), list), "'packages' must be an array of tables")
    seen = set()
    for i, p in enumerate(doc["packages"]):
        where = f"packages[{i}]"
        need(isinstance(p, dict), f"{where}: must be a table")
        name = check_str(p, "name", where, required=True)
        need(NORMALIZED.match(name), f"{where}: name {name!r} is not normalized")
        version = check_str(p, "version", where)
        if version is not None and Version is not None:
            Version(version)
        marker = check_str(p, "marker", where)
        if marker is not None and Marker is not None:
            # PEP 751's `extras` / `dependency_groups` set variables are newer than packaging 23.
            if not re.search(r"\b(extras|dependency_groups)\b", marker):
                Marker(marker)
        key = (name, marker)
        need(key not in seen, f"{where}: second entry for {name} with the same marker")
        seen.add(key)
        prp = check_str(p, "requires-python", where)
        if prp is not None and SpecifierSet is not None:
            SpecifierSet(prp)
        check_str(p, "index", where)
        trees = [k for k in ("vcs", "directory", "archive") if k in p]
        dists = [k for k in ("sdist", "wheels") if k in p]
        need(len(trees) + (1 if dists else 0) == 1,
             f"{where}: needs exactly one source, has {trees + dists}")
        if "vcs" in p:
            v = p["vcs"]
            check_str(v, "type", where + ".vcs", required=True)
            check_str(v, "commit-id", where + ".vcs", required=True)
            need("url" in v or "path" in v, f"{where}.vcs: needs 'url' or 'path'")
        if "directory" in p:
            check_str(p["directory"], "path", where + ".directory", required=True)
            if "editable" in p["directory"]:
                need(isinstance(p["directory"]["editable"], bool), f"{where}: editable not bool")
        if "archive" in p:
            check_file(p["archive"], where + ".archive", p, "archive")
        if "sdist" in p:
            check_file(p["sdist"], where + ".sdist", p, "sdist")
        if "wheels" in p:
            need(isinstance(p["wheels"], list), f"{where}: 'wheels' must be an array")
            for j, w in enumerate(p["wheels"]):
                check_file(w, f"{where}.wheels[{j}]", p, "wheel")
        need(dists != ["wheels"] or p["wheels"], f"{where}: no wheels and no sdist")
        for a in p.get("attestation-identities", []):
            check_str(a, "kind", where + ".attestation-identities", required=True)
        check_wheel_files(p, where)
    g = doc.get("tool", {}).get("gpulock")
    if g is not None:
        need(isinstance(g.get("schema"), int), "[tool.gpulock] needs an integer schema")
        gpu = g.get("gpu", {})
        check_str_list(gpu, "archs", "[tool.gpulock.gpu]")
        for key in ("driver", "cuda-ceiling", "method", "compat", "variant", "cuda", "cudnn",
                    "min-driver"):
            check_str(gpu, key, "[tool.gpulock.gpu]")
        # The typed values (gpu/cuda_versions.h): each must parse.
        for key, parses in GPU_VALUES.items():
            if key in gpu:
                need(parses(gpu[key]), f"[tool.gpulock.gpu]: bad '{key}' {gpu[key]!r}")
        for arch in gpu.get("archs", []):
            need(compute_capability(arch), f"[tool.gpulock.gpu]: bad 'archs' entry {arch!r}")
        inputs = g.get("inputs", {})
        for key in ("requirements", "extras", "groups"):
            check_str_list(inputs, key, "[tool.gpulock.inputs]")
        for f in inputs.get("files", []):
            for key in ("path", "kind", "sha256"):
                check_str(f, key, "[tool.gpulock.inputs] files", required=True)
        for k, v in inputs.get("options", {}).items():
            need(isinstance(v, str), f"[tool.gpulock.inputs.options] {k} must be a string")
        snapshot = g.get("snapshot", {})
        if "exclude-newer" in snapshot:
            need(isinstance(snapshot["exclude-newer"], datetime.datetime),
                 "[tool.gpulock.snapshot] exclude-newer must be a datetime")
        for i in g.get("indexes", []):
            for key in ("name", "url", "role"):
                check_str(i, key, "[tool.gpulock] indexes", required=True)
            need("@" not in i["url"].split("//", 1)[-1].split("/", 1)[0],
                 "[tool.gpulock] indexes: url carries credentials")


def main(argv):
    expect_invalid = argv[:1] == ["--invalid"]
    files = argv[1:] if expect_invalid else argv
    status = 0
    for path in files:
        try:
            with open(path, "rb") as fh:
                check_lock(tomllib.load(fh))
            ok, why = True, ""
        except (Invalid, ValueError, TypeError, KeyError, AttributeError) as e:
            ok, why = False, f"{type(e).__name__}: {e}"
        if ok == expect_invalid:
            status = 1
            print(f"{path}: {'accepted, expected invalid' if ok else why}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
