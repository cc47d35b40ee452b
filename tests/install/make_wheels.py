#!/usr/bin/env python3
"""Writes small wheels and pylock.toml files for the `gpulock install` tests (standard library
only, independent of gpulock's code): OUT/wheels/*.whl and OUT/<name>.toml with file:// URLs.

  demo_pkg 1.0      console and GUI entry points, .data/{scripts,data,headers}, a `#!python`
                    script, an executable file, Root-Is-Purelib: true
  gpuvar 1.0+cu126  Root-Is-Purelib: false (platlib), a local label; also 1.0+cu130
  extra_pkg 2.0     a package no lock names
  wheel 0.0.1       a (fake) tool package

  broken_pkg 1.0    an entry point without a callable suffix: the install fails half way,
                    after its files are in

Locks: base.toml (demo-pkg, gpuvar+cu126), cu130.toml (demo-pkg, gpuvar+cu130), bad.toml
(cu130.toml with gpuvar's sha256 changed), evil.toml (a wheel with an entry
`../../evil.txt`), broken.toml (cu130.toml, then broken-pkg), late.toml (cu130.toml, then
wheel 0.0.1: a package installed last).
Usage: make_wheels.py OUT
"""
import base64
import hashlib
import os
import sys
import zipfile


def record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}", str(len(data))


def make_wheel(out_dir, name, version, files, purelib=True, tag="py3-none-any"):
    dist = f"{name}-{version}"
    info = f"{dist}.dist-info"
    files = dict(files)
    files[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: test\n").encode()
    files[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: make_wheels.py\nRoot-Is-Purelib: "
                              f"{'true' if purelib else 'false'}\nTag: {tag}\n").encode()
    path = os.path.join(out_dir, f"{dist}-{tag}.whl")
    rows = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for n, data in files.items():
            executable = n.endswith(".sh") or "/scripts/" in n
            zi = zipfile.ZipInfo(n, (2024, 1, 1, 0, 0, 0))
            zi.external_attr = (0o100000 | (0o755 if executable else 0o644)) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
            h, s = record_hash(data)
            rows.append(f"{n},{h},{s}")
        rows.append(f"{info}/RECORD,,")
        z.writestr(f"{info}/RECORD", "\n".join(rows) + "\n")
    return path


def write_lock(path, wheels, tamper=None):
    lines = ['lock-version = "1.0"', 'created-by = "tests/install/make_wheels.py"',
             'requires-python = ">=3.8"']
    for name, version, wheel in wheels:
        data = open(wheel, "rb").read()
        sha = hashlib.sha256(data).hexdigest()
        if tamper == name:
            sha = hashlib.sha256(data + b"tampered").hexdigest()
        lines += ["", "[[packages]]", f'name = "{name}"', f'version = "{version}"', "",
                  "[[packages.wheels]]", f'name = "{os.path.basename(wheel)}"',
                  f'url = "file://{os.path.abspath(wheel)}"', f"size = {len(data)}",
                  f'hashes = {{ sha256 = "{sha}" }}']
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main(out):
    wheels = os.path.join(out, "wheels")
    os.makedirs(wheels, exist_ok=True)
    demo = make_wheel(wheels, "demo_pkg", "1.0", {
        "demo_pkg/__init__.py": b"def main():\n    print('demo main')\n    return 0\n"
                                b"def gui():\n    return 0\n",
        "demo_pkg/data.txt": b"hello\n",
        "demo_pkg/tool.sh": b"#!/bin/sh\necho tool\n",
        "demo_pkg-1.0.dist-info/entry_points.txt":
            b"[console_scripts]\ndemo = demo_pkg:main\ndemo-sub = demo_pkg:main\n\n"
            b"[gui_scripts]\ndemo-gui = demo_pkg:gui\n",
        "demo_pkg-1.0.data/scripts/demo-script": b"#!python\nprint('script')\n",
        "demo_pkg-1.0.data/scripts/plain.sh": b"#!/bin/sh\necho plain\n",
        "demo_pkg-1.0.data/data/share/demo/readme.txt": b"data file\n",
        "demo_pkg-1.0.data/headers/demo.h": b"int demo;\n",
    })
    variants = {}
    for label in ("cu126", "cu130"):
        variants[label] = make_wheel(wheels, "gpuvar", f"1.0+{label}", {
            "gpuvar/__init__.py": f"VARIANT = '{label}'\n".encode(),
            f"gpuvar/lib_{label}.so": b"\x7fELF not really " + label.encode(),
        }, purelib=False)
    make_wheel(wheels, "extra_pkg", "2.0", {"extra_pkg.py": b"X = 1\n"})
    tool = make_wheel(wheels, "wheel", "0.0.1", {"wheel/__init__.py": b""})
    write_lock(os.path.join(out, "base.toml"),
               [("demo-pkg", "1.0", demo), ("gpuvar", "1.0+cu126", variants["cu126"])])
    write_lock(os.path.join(out, "cu130.toml"),
               [("demo-pkg", "1.0", demo), ("gpuvar", "1.0+cu130", variants["cu130"])])
    evil = os.path.join(wheels, "evil-1.0-py3-none-any.whl")
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("evil/__init__.py", b"")
        z.writestr("../../evil.txt", b"outside\n")
        z.writestr("evil-1.0.dist-info/METADATA", b"Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n")
        z.writestr("evil-1.0.dist-info/WHEEL", b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\n")
        z.writestr("evil-1.0.dist-info/RECORD", b"")
    write_lock(os.path.join(out, "evil.toml"), [("evil", "1.0", evil)])
    broken = make_wheel(wheels, "broken_pkg", "1.0", {
        "broken_pkg/__init__.py": b"",
        "broken_pkg-1.0.dist-info/entry_points.txt": b"[console_scripts]\nbroken = no_callable\n",
    })
    write_lock(os.path.join(out, "broken.toml"),
               [("demo-pkg", "1.0", demo), ("gpuvar", "1.0+cu130", variants["cu130"]),
                ("broken-pkg", "1.0", broken)])
    write_lock(os.path.join(out, "late.toml"),
               [("demo-pkg", "1.0", demo), ("gpuvar", "1.0+cu130", variants["cu130"]),
                ("wheel", "0.0.1", tool)])
    write_lock(os.path.join(out, "bad.toml"),
               [("demo-pkg", "1.0", demo), ("gpuvar", "1.0+cu130", variants["cu130"])],
               tamper="gpuvar")


if __name__ == "__main__":
    main(sys.argv[1])
