#!/usr/bin/env python3
"""Small wheels for gpulock's index tests (Python standard library only).

    make_test_wheels.py OUT_DIR

OUT_DIR/wheels/      one wheel per case: good, big (many entries, a central directory larger
                     than the 64 KiB tail gpulock reads first), no METADATA, METADATA over 10 MB,
                     a zip bomb (tiny entry declaring 1 GiB), a Name/Version mismatch, not a zip
OUT_DIR/links/       a find-links folder (wheels and an sdist of two projects, and a README)
OUT_DIR/simple/      a file:// Simple API tree (HTML for demo-pkg, JSON for other-pkg and for
                     hugemeta, whose .metadata file is over 10 MB)
OUT_DIR/manifest.json  sha256 and size of every wheel
Deterministic: fixed timestamps and a seeded random generator.
"""
import base64
import hashlib
import json
import os
import random
import struct
import sys
import zipfile

DATE = (2024, 1, 1, 0, 0, 0)


def metadata(name, version, extra=""):
    return (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
            f"Requires-Python: >=3.8\nRequires-Dist: numpy>=1.20\n"
            f"Requires-Dist: typing-extensions; python_version < \"3.11\"\n{extra}\n"
            f"A description that is not a header: value\n")


def write_wheel(path, dist, version, files, meta=None, compress=zipfile.ZIP_DEFLATED):
    info = f"{dist}-{version}.dist-info"
    with zipfile.ZipFile(path, "w", compress) as z:
        for name, data in files:
            z.writestr(zipfile.ZipInfo(name, DATE), data, compress)
        if meta is not None:
            z.writestr(zipfile.ZipInfo(f"{info}/METADATA", DATE), meta, compress)
        z.writestr(zipfile.ZipInfo(f"{info}/WHEEL", DATE),
                   "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n", compress)
        z.writestr(zipfile.ZipInfo(f"{info}/RECORD", DATE), "", compress)


def patch_declared_size(path, entry, size):
    """Makes `entry` declare `size` uncompressed bytes in its local and central headers."""
    data = bytearray(open(path, "rb").read())
    name = entry.encode()
    pos = 0
    while True:
        pos = data.find(name, pos)
        if pos < 0:
            break
        # Local header: name at +30, uncompressed size at +22. Central: name at +46, size at +24.
        if data[pos - 30:pos - 26] == b"PK\x03\x04":
            struct.pack_into("<I", data, pos - 30 + 22, size)
        elif data[pos - 46:pos - 42] == b"PK\x01\x02":
            struct.pack_into("<I", data, pos - 46 + 24, size)
        pos += len(name)
    open(path, "wb").write(bytes(data))


def main():
    out = sys.argv[1]
    rng = random.Random(3)
    wheels = os.path.join(out, "wheels")
    links = os.path.join(out, "links")
    os.makedirs(wheels, exist_ok=True)
    os.makedirs(links, exist_ok=True)
    code = [("demo_pkg/__init__.py", "x = 1\n")]

    write_wheel(f"{wheels}/demo_pkg-1.2.3-py3-none-any.whl", "demo_pkg", "1.2.3", code,
                metadata("demo-pkg", "1.2.3"))
    # Many entries with long names and incompressible data: the central directory alone is
    # several times the 64 KiB tail, and METADATA sits after 300 KiB of other entries.
    many = [(f"big_pkg/module_{i:05d}_{'x' * 60}.py", f"# {i}\n") for i in range(2500)]
    many.append(("big_pkg/blob.bin", rng.randbytes(300_000)))
    write_wheel(f"{wheels}/big_pkg-2.0-py3-none-any.whl", "big_pkg", "2.0", many,
                metadata("big-pkg", "2.0", "Provides-Extra: fast\n"))
    # 200 KB of incompressible data first, then METADATA and a small central directory: both in
    # the last 64 KiB, as in most wheels (issue 27: one range request, not two).
    write_wheel(f"{wheels}/tail_pkg-1.0-py3-none-any.whl", "tail_pkg", "1.0",
                [("tail_pkg/blob.bin", random.Random(27).randbytes(200_000))], metadata("tail-pkg", "1.0"))
    write_wheel(f"{wheels}/nometa-1.0-py3-none-any.whl", "nometa", "1.0", code, None)
    huge = base64.b64encode(rng.randbytes(9 * 1024 * 1024)).decode()  # 12 MiB, incompressible
    write_wheel(f"{wheels}/bigmeta-1.0-py3-none-any.whl", "bigmeta", "1.0", code,
                metadata("bigmeta", "1.0") + "\n" + huge)
    write_wheel(f"{wheels}/bomb-1.0-py3-none-any.whl", "bomb", "1.0", code, metadata("bomb", "1.0"))
    patch_declared_size(f"{wheels}/bomb-1.0-py3-none-any.whl", "bomb-1.0.dist-info/METADATA", 1 << 30)
    write_wheel(f"{wheels}/mismatch-1.0-py3-none-any.whl", "mismatch", "1.0", code,
                metadata("other-name", "2.0"))
    with open(f"{wheels}/notzip-1.0-py3-none-any.whl", "w") as f:
        f.write("this is not a zip file\n")

    # find-links: two projects, an sdist and a file that is not a distribution.
    write_wheel(f"{links}/demo_pkg-1.2.3-py3-none-any.whl", "demo_pkg", "1.2.3", code,
                metadata("demo-pkg", "1.2.3"))
    write_wheel(f"{links}/demo_pkg-1.3.0-py3-none-any.whl", "demo_pkg", "1.3.0", code,
                metadata("demo-pkg", "1.3.0"))
    write_wheel(f"{links}/other_pkg-0.1-py3-none-any.whl", "other_pkg", "0.1", code,
                metadata("other-pkg", "0.1"))
    with open(f"{links}/demo-pkg-1.1.0.tar.gz", "wb") as f:
        f.write(b"\x1f\x8b not really an sdist")
    with open(f"{links}/README.txt", "w") as f:
        f.write("not a distribution\n")

    # A wheel whose PEP 658 .metadata file is over the 10 MB limit (served by a private nginx
    # rooted here: /simple/hugemeta/ is JSON, as that server negotiates).
    write_wheel(f"{wheels}/hugemeta-1.0-py3-none-any.whl", "hugemeta", "1.0", code,
                metadata("hugemeta", "1.0"))
    with open(f"{wheels}/hugemeta-1.0-py3-none-any.whl.metadata", "w") as f:
        f.write(metadata("hugemeta", "1.0") + "\n" + huge)
    hugemeta = os.path.join(out, "simple", "hugemeta")
    os.makedirs(hugemeta, exist_ok=True)
    with open(os.path.join(hugemeta, "index.json"), "w") as f:
        json.dump({"meta": {"api-version": "1.1"}, "name": "hugemeta",
                   "files": [{"filename": "hugemeta-1.0-py3-none-any.whl",
                              "url": "../../wheels/hugemeta-1.0-py3-none-any.whl",
                              "hashes": {}, "core-metadata": True}]}, f)

    manifest = {}
    for d in (wheels, links):
        for name in sorted(os.listdir(d)):
            data = open(os.path.join(d, name), "rb").read()
            manifest[f"{os.path.basename(d)}/{name}"] = {
                "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}

    # A file:// Simple API tree pointing at the find-links files.
    demo = os.path.join(out, "simple", "demo-pkg")
    other = os.path.join(out, "simple", "other-pkg")
    os.makedirs(demo, exist_ok=True)
    os.makedirs(other, exist_ok=True)
    with open(os.path.join(demo, "index.html"), "w") as f:
        f.write("<!DOCTYPE html><html><body>\n")
        for name in ("demo_pkg-1.2.3-py3-none-any.whl", "demo_pkg-1.3.0-py3-none-any.whl"):
            h = manifest[f"links/{name}"]["sha256"]
            f.write(f'<a href="../../links/{name}#sha256={h}" data-requires-python="&gt;=3.8">{name}</a><br/>\n')
        f.write("</body></html>\n")
    name = "other_pkg-0.1-py3-none-any.whl"
    with open(os.path.join(other, "index.json"), "w") as f:
        json.dump({"meta": {"api-version": "1.1"}, "name": "other-pkg", "versions": ["0.1"],
                   "files": [{"filename": name, "url": f"../../links/{name}",
                              "hashes": {"sha256": manifest[f"links/{name}"]["sha256"]},
                              "size": manifest[f"links/{name}"]["size"]}]}, f)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
