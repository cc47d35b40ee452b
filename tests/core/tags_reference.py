#!/usr/bin/python3
"""Reference supported-tag lists from pypa/packaging, for tags_test.cpp.

Reads one target per line on stdin:
    IMPL MAJOR MINOR THREADED OS ARCH GLIBC MUSL MACOS
e.g. `cp 3 11 0 linux x86_64 2.28 - -` ("-" = none), and prints, per target, its tags in
priority order, one per line, followed by a line "==".

packaging computes tags for the *running* interpreter; we drive its generators with explicit
arguments (cpython_tags/generic_tags/compatible_tags, mac_platforms) and replace the two host
probes of the Linux platform generators (glibc and musl version, ELF ABI check) by the target's
values. Debian 12 ships packaging 23.0; gpulock follows the newer packaging that pip 24-26.2
vendors, and the differences are applied here, each on its own line below:
  - free-threaded CPython (packaging >= 24.1/26.1): no abi3; abi3t takes its place;
  - macOS "fat32" was renamed "fat3" (the distutils name) in later packaging;
  - manylinux architectures: packaging 26.x's _ALLOWED_ARCHS (adds loongarch64, riscv64), and
    i686/armv7l are assumed to have the matching ABI (an ELF check of the host otherwise).
Run with /usr/bin/python3 (Debian's interpreter, which has python3-packaging).
"""

import sys

from packaging import _manylinux, _musllinux, tags

MANYLINUX_ARCHS = {"x86_64", "i686", "aarch64", "armv7l", "ppc64", "ppc64le", "s390x",
                   "loongarch64", "riscv64"}


def version_pair(text):
    major, minor = text.split(".")
    return int(major), int(minor)


def linux_platforms(arch, glibc, musl):
    out = []
    if glibc != "-":
        current = _manylinux._GLibCVersion(*version_pair(glibc))
        _manylinux._get_glibc_version = lambda: current
        _manylinux._have_compatible_abi = lambda executable, a: a in MANYLINUX_ARCHS
        out += list(_manylinux.platform_tags("linux_" + arch, arch))
    if musl != "-":
        version = _musllinux._MuslVersion(*version_pair(musl))
        _musllinux._get_musl_version = lambda executable: version
        out += list(_musllinux.platform_tags(arch))
    out.append("linux_" + arch)
    return out


def platforms_for(os_name, arch, glibc, musl, macos):
    if os_name == "linux":
        return linux_platforms(arch, glibc, musl)
    if os_name == "macos":
        plats = list(tags.mac_platforms(version_pair(macos), arch))
        return [p.replace("_fat32", "_fat3") for p in plats]
    if os_name == "windows":
        return [{"amd64": "win_amd64", "arm64": "win_arm64", "x86": "win32"}[arch]]
    raise SystemExit(f"unknown os {os_name}")


def tags_for(impl, major, minor, threaded, plats):
    if not plats:
        raise SystemExit("empty platform list: packaging would fall back to the host's")
    xy = f"{major}{minor}"
    if impl == "cp":
        abi = f"cp{xy}" + ("t" if threaded else "") + ("m" if (major, minor) < (3, 8) else "")
        out = list(tags.cpython_tags((major, minor), [abi], plats))
        if threaded:
            out = [tags.Tag(t.interpreter, "abi3t" if t.abi == "abi3" else t.abi, t.platform)
                   for t in out]
        interp = f"cp{xy}"
    else:
        out = list(tags.generic_tags(f"{impl}{xy}", [f"pypy{xy}_pp73"], plats))
        interp = "pp3" if impl == "pp" else None
    out += list(tags.compatible_tags((major, minor), interp, plats))
    return out


def main():
    for line in sys.stdin:
        fields = line.split()
        if not fields:
            continue
        impl, major, minor, threaded, os_name, arch, glibc, musl, macos = fields
        plats = platforms_for(os_name, arch, glibc, musl, macos)
        for tag in tags_for(impl, int(major), int(minor), threaded == "1", plats):
            print(tag)
        print("==")


if __name__ == "__main__":
    main()
