#!/usr/bin/env python3
"""A synthetic index for the scale benchmark (issue 27, goal 4: a 500-package requirement set).

    bench/scale_index.py OUT_DIR [--packages 500] [--versions 20]

Writes OUT_DIR/simple/index.{json,html}, OUT_DIR/simple/<name>/index.{json,html} (PEP 691 and
PEP 503) and OUT_DIR/packages/<name>/<wheel>.metadata (PEP 658), in the layout of
fixtures/generate.py, so that tests/support/servers.py serves it; and OUT_DIR/requirements.txt,
every package name once. Package `scale-pkg-I` has versions 1.0.0 ... 1.(V-1).0, each with an
sdist and wheels for cp310 - cp313 on manylinux x86_64 and cp311/cp312 on aarch64 (wheel files
themselves are not written, and PEP 658 metadata only for the cp311 x86_64 wheels: a resolve for
that target reads pages and those METADATA files only); version 1.K of package I
requires packages 2I+1 and 2I+2 (a binary tree) at `>=1.(K/2)`, so the newest of everything
fits. Deterministic; writes nothing when OUT_DIR/manifest.json already records the same
parameters. Python standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import random
import sys
from pathlib import Path

PYTHONS_X86 = ["cp310", "cp311", "cp312", "cp313"]
PYTHONS_ARM = ["cp311", "cp312"]
X86 = "manylinux_2_17_x86_64.manylinux2014_x86_64"
ARM = "manylinux_2_17_aarch64.manylinux2014_aarch64"


def name_of(i: int) -> str:
    return f"scale-pkg-{i:03d}"


def metadata(name: str, version: str, deps: list[str]) -> bytes:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}",
             "Requires-Python: >=3.9"]
    lines += [f"Requires-Dist: {d}" for d in deps]
    return ("\n".join(lines) + "\n\n").encode()


def write(out: Path, packages: int, versions: int) -> None:
    rng = random.Random(0x5CA1E)
    hexd = lambda: "%064x" % rng.getrandbits(256)
    simple = out / "simple"
    simple.mkdir(parents=True, exist_ok=True)
    names = [name_of(i) for i in range(packages)]
    for i, name in enumerate(names):
        files = []
        pkg_dir = out / "packages" / name
        pkg_dir.mkdir(parents=True, exist_ok=True)
        for k in range(versions):
            version = f"1.{k}.0"
            deps = [f"{name_of(j)}>=1.{k // 2}.0" for j in (2 * i + 1, 2 * i + 2) if j < packages]
            meta = metadata(name, version, deps)
            meta_sha = hashlib.sha256(meta).hexdigest()
            stamp = f"2024-{1 + k % 12:02d}-{1 + k % 28:02d}T12:00:00.000000Z"
            files.append({"filename": f"{name.replace('-', '_')}-{version}.tar.gz",
                          "sha256": hexd(), "meta": None, "time": stamp})
            wheels = [(py, X86) for py in PYTHONS_X86] + [(py, ARM) for py in PYTHONS_ARM]
            for py, plat in wheels:
                wheel = f"{name.replace('-', '_')}-{version}-{py}-{py}-{plat}.whl"
                # PEP 658 metadata for the benchmark target's wheels only (the others would be
                # 50,000 more small files that a cp311 x86_64 resolve never reads).
                target = py == "cp311" and plat == X86
                if target:
                    (pkg_dir / (wheel + ".metadata")).write_bytes(meta)
                files.append({"filename": wheel, "sha256": hexd(), "meta": meta_sha if target else None,
                              "time": stamp})
        page_dir = simple / name
        page_dir.mkdir(exist_ok=True)
        doc = {"meta": {"api-version": "1.1"}, "name": name,
               "versions": [f"1.{k}.0" for k in range(versions)], "files": []}
        anchors = []
        for f in files:
            url = f"../../packages/{name}/{f['filename']}"
            entry = {"filename": f["filename"], "url": url, "hashes": {"sha256": f["sha256"]},
                     "requires-python": ">=3.9", "yanked": False, "size": 10000,
                     "upload-time": f["time"]}
            entry["core-metadata"] = {"sha256": f["meta"]} if f["meta"] else False
            doc["files"].append(entry)
            meta_attr = f' data-core-metadata="sha256={f["meta"]}"' if f["meta"] else ""
            anchors.append(f'<a href="{url}#sha256={f["sha256"]}" data-requires-python="'
                           f'{html.escape(">=3.9")}"{meta_attr}>{f["filename"]}</a><br/>')
        (page_dir / "index.json").write_text(json.dumps(doc, separators=(",", ":")))
        (page_dir / "index.html").write_text(
            "<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.1\">"
            f"</head><body>\n" + "\n".join(anchors) + "\n</body></html>\n")
    (simple / "index.json").write_text(json.dumps(
        {"meta": {"api-version": "1.1"}, "projects": [{"name": n} for n in names]}))
    (simple / "index.html").write_text(
        "<!DOCTYPE html>\n<html><body>\n" +
        "\n".join(f'<a href="{n}/">{n}</a>' for n in names) + "\n</body></html>\n")
    (out / "requirements.txt").write_text("".join(n + "\n" for n in names))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--packages", type=int, default=500)
    ap.add_argument("--versions", type=int, default=20)
    args = ap.parse_args()
    manifest = args.out / "manifest.json"
    params = {"packages": args.packages, "versions": args.versions, "generator": 2}
    if manifest.exists() and json.loads(manifest.read_text()) == params:
        return 0
    write(args.out, args.packages, args.versions)
    manifest.write_text(json.dumps(params))
    return 0


if __name__ == "__main__":
    sys.exit(main())
