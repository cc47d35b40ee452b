#!/usr/bin/python3
"""Turns uv's packse resolver scenarios into static indexes (issue 20, "Conformance").

Library used by packse_scenarios.py; also runnable on its own:
    packse_index.py SCENARIO.toml OUT_DIR      writes OUT_DIR/simple/... and prints the options

For one scenario the index is a directory tree served as file:// (or by any static server):
    simple/index.html, simple/index.json                 the project list (PEP 503 + PEP 691)
    simple/<name>/index.html, simple/<name>/index.json   the project pages (PEP 503 + PEP 691)
    files/<wheel>.whl, files/<wheel>.whl.metadata        tiny real wheels (METADATA, WHEEL, RECORD)
                                                         and their PEP 658 metadata
    files/<name>-<version>.tar.gz                        a tiny sdist, listed only: a wheel-only
                                                         resolve must see it as unusable
yanked versions carry "yanked" (PEP 691) / data-yanked (PEP 503) on every file.

Scenario format (packse, as in uv's test/scenarios): [root] requires / requires_python,
[packages.<name>.versions."<v>"] requires, requires_python, extras, yanked, wheel_tags,
sdist (default true), wheel (default true), [environment] python, [resolver_options]
(universal, prereleases, python_platform, resolution, no_binary, no_build, ...), [expected].
Python standard library only.
"""
import base64
import hashlib
import html
import io
import json
import re
import sys
import tomllib
import zipfile
from pathlib import Path

DEFAULT_PYTHON = "3.12"  # packse's default target interpreter
DEFAULT_PLATFORM = "manylinux_2_28_x86_64"


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def load(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


def options(sc):
    """The single-target resolve options a scenario asks for."""
    env = sc.get("environment", {})
    ro = sc.get("resolver_options", {})
    python = ro.get("python") or env.get("python") or DEFAULT_PYTHON
    platform = DEFAULT_PLATFORM
    pp = ro.get("python_platform")
    if pp:
        arch, _, plat = pp.partition("-")
        if plat == "manylinux2014":
            platform = f"manylinux2014_{arch}"
        else:
            platform = None  # unsupported platform spelling
    pre = "allow" if ro.get("prereleases") else None
    return {"python": python, "platform": platform, "prerelease": pre}


def tag_compatible(tag, python, platform):
    """Rough PEP 425 check of one wheel tag for a CPython target (X.Y) on `platform`."""
    py, abi, plat = tag.split("-")
    xy = "".join(python.split(".")[:2])
    major = xy[0]
    py_ok = any(p in (f"py{major}", f"py{xy}", f"cp{xy}") or
                (p.startswith(f"cp{major}") and abi == "abi3" and int(p[2:] or 0) <= int(xy))
                for p in py.split("."))
    abi_ok = any(a in ("none", "abi3", f"cp{xy}") for a in abi.split("."))
    arch = platform.rsplit("_", 1)[-1] if platform else "x86_64"
    plat_ok = any(p == "any" or ((p.startswith("manylinux") or p.startswith("linux")) and
                                 p.endswith(arch)) for p in plat.split("."))
    return py_ok and abi_ok and plat_ok


def target_independent(sc):
    """True when no requirement has a marker and no version a Requires-Python or wheel tags:
    then a universal lock is the single-target lock (wrong-backtracking-basic, ...)."""
    if sc.get("root", {}).get("requires_python"):
        return False
    reqs = list(sc.get("root", {}).get("requires", []))
    for pd in sc.get("packages", {}).values():
        for vd in pd.get("versions", {}).values():
            vd = vd or {}
            if vd.get("requires_python") or vd.get("wheel_tags") or vd.get("wheel") is False:
                return False
            reqs += vd.get("requires", [])
            for extra_reqs in vd.get("extras", {}).values():
                reqs += extra_reqs
    return not any(";" in r for r in reqs)


def applicability(sc):
    """None if the scenario applies to a single-target wheel-only resolve, else the reason."""
    ro = sc.get("resolver_options", {})
    if sc.get("testgen", {}).get("disable"):
        return "uv does not run it either (testgen disable)"
    if ro.get("universal") and not target_independent(sc):
        return "universal lock (markers, Python or wheel tags make it differ by platform)"
    if ro.get("required_environments"):
        return "required environments of a universal lock"
    if ro.get("resolution"):
        return f"resolution = {ro['resolution']} (gpulock resolves highest only)"
    if ro.get("no_binary"):
        return "no_binary: building from source"
    if sc.get("environment", {}).get("additional_python"):
        return "several interpreters (additional_python)"
    opts = options(sc)
    if opts["platform"] is None:
        return f"python_platform {ro.get('python_platform')} has no gpulock --platform spelling"
    exp = sc.get("expected", {})
    if exp.get("satisfiable"):
        def wheel_only_unusable(name, version):
            vd = sc["packages"].get(name, {}).get("versions", {}).get(version) or {}
            has_wheel = vd.get("wheel", True) and python_allows(
                vd.get("requires_python"), opts["python"]) and any(
                tag_compatible(t, opts["python"], opts["platform"])
                for t in vd.get("wheel_tags", ["py3-none-any"]))
            return not has_wheel and vd.get("sdist", True)
        for name, version in exp.get("packages", {}).items():
            if wheel_only_unusable(name, version):
                return f"building from source: {name} {version} has no usable wheel, only an sdist"
        if not exp.get("packages"):
            # No versions given: uv's answer needs an sdist if some required package has no
            # version with a usable wheel.
            for req in sc["root"]["requires"]:
                name = normalize(re.match(r"[A-Za-z0-9._-]+", req).group(0))
                versions = next((pd.get("versions", {}) for n, pd in sc["packages"].items()
                                 if normalize(n) == name), {})
                if versions and all(wheel_only_unusable(n, v) for n in [name] for v in versions):
                    return f"building from source: no version of {name} has a usable wheel"
    return None


def python_allows(requires_python, python):
    """A rough Requires-Python check (lower bounds only, the way uv reads them: upper bounds
    are ignored) for the applicability test; the resolvers under test use the real rules."""
    if not requires_python:
        return True
    target = tuple(int(x) for x in python.split(".")[:3])
    for clause in requires_python.split(","):
        m = re.match(r"\s*(>=|>|==|~=)\s*([0-9.]+)", clause)
        if not m:
            continue
        bound = tuple(int(x) for x in m.group(2).strip(".").split("."))
        if m.group(1) in (">=", "~=") and target[:len(bound)] < bound:
            return False
        if m.group(1) == ">" and target[:len(bound)] <= bound:
            return False
    return True


def metadata_text(name, version, vd):
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if vd.get("requires_python"):
        lines.append(f"Requires-Python: {vd['requires_python']}")
    for req in vd.get("requires", []):
        lines.append(f"Requires-Dist: {req}")
    for extra, reqs in vd.get("extras", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for req in reqs:
            base, sep, marker = req.partition(";")
            if sep:
                lines.append(f'Requires-Dist: {base.strip()} ; ({marker.strip()}) and extra == "{extra}"')
            else:
                lines.append(f'Requires-Dist: {req} ; extra == "{extra}"')
    return "\n".join(lines) + "\n"


def wheel_bytes(name, version, tag, metadata):
    dist = f"{re.sub(r'[-.]+', '_', name)}-{version}.dist-info"
    py, abi, plat = tag.split("-")
    files = {
        f"{dist}/METADATA": metadata.encode(),
        f"{dist}/WHEEL": (f"Wheel-Version: 1.0\nGenerator: packse_index\nRoot-Is-Purelib: true\n"
                          f"Tag: {tag}\n").encode(),
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=(2024, 1, 1, 0, 0, 0))
            z.writestr(info, data)
    return buf.getvalue()


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def write_index(sc, out):
    """Writes the scenario's index under `out` and returns the simple/ directory."""
    out = Path(out)
    simple = out / "simple"
    files_dir = out / "files"
    files_dir.mkdir(parents=True, exist_ok=True)
    projects = []
    for name, pd in sc.get("packages", {}).items():
        proj = normalize(name)
        projects.append(proj)
        entries = []
        for version, vd in pd.get("versions", {}).items():
            vd = vd or {}
            metadata = metadata_text(name, version, vd)
            yanked = bool(vd.get("yanked", False))
            stem = re.sub(r"[-.]+", "_", name)
            if vd.get("wheel", True):
                for tag in vd.get("wheel_tags", ["py3-none-any"]):
                    fn = f"{stem}-{version}-{tag}.whl"
                    data = wheel_bytes(name, version, tag, metadata)
                    (files_dir / fn).write_bytes(data)
                    (files_dir / (fn + ".metadata")).write_bytes(metadata.encode())
                    entries.append((fn, sha256(data), vd.get("requires_python"), yanked,
                                    sha256(metadata.encode())))
            if vd.get("sdist", True):
                fn = f"{stem}-{version}.tar.gz"
                data = f"sdist of {name} {version}\n".encode()
                (files_dir / fn).write_bytes(data)
                entries.append((fn, sha256(data), vd.get("requires_python"), yanked, None))
        pdir = simple / proj
        pdir.mkdir(parents=True, exist_ok=True)
        links = []
        jfiles = []
        for fn, digest, rp, yanked, md in entries:
            url = f"../../files/{fn}"
            attrs = f'href="{url}#sha256={digest}"'
            if rp:
                attrs += f' data-requires-python="{html.escape(rp)}"'
            if yanked:
                attrs += ' data-yanked=""'
            if md:
                attrs += f' data-dist-info-metadata="sha256={md}" data-core-metadata="sha256={md}"'
            links.append(f"<a {attrs}>{fn}</a><br/>")
            jf = {"filename": fn, "url": url, "hashes": {"sha256": digest}}
            if rp:
                jf["requires-python"] = rp
            if yanked:
                jf["yanked"] = True
            if md:
                jf["core-metadata"] = {"sha256": md}
                jf["dist-info-metadata"] = {"sha256": md}
            jfiles.append(jf)
        (pdir / "index.html").write_text(
            "<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.1\">"
            f"<title>Links for {proj}</title></head><body>\n" + "\n".join(links) +
            "\n</body></html>\n")
        (pdir / "index.json").write_text(json.dumps(
            {"meta": {"api-version": "1.1"}, "name": proj, "files": jfiles,
             "versions": sorted(pd.get("versions", {}))}, indent=1))
    simple.mkdir(parents=True, exist_ok=True)
    (simple / "index.html").write_text(
        "<!DOCTYPE html>\n<html><body>\n" +
        "\n".join(f'<a href="{p}/">{p}</a><br/>' for p in sorted(projects)) + "\n</body></html>\n")
    (simple / "index.json").write_text(json.dumps(
        {"meta": {"api-version": "1.1"},
         "projects": [{"name": p} for p in sorted(projects)]}, indent=1))
    return simple


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    scenario = load(sys.argv[1])
    simple = write_index(scenario, sys.argv[2])
    print(json.dumps({"index": simple.resolve().as_uri(), "options": options(scenario),
                      "not-applicable": applicability(scenario)}))
