#!/usr/bin/env python3
"""Writes the seed corpora fuzz/corpus/<harness>/ from the project's fixtures and unit tests.

    python3 fuzz/make_seeds.py --index DIR [--out fuzz/corpus]

DIR is a generated fixture index (python3 fixtures/generate.py --data fixtures/data --out DIR).
Seeds are named seed-<sha1 prefix>; inputs the campaign adds (scripts/fuzz --merge) keep
libFuzzer's names, and crash regressions are named crash-<what>. Only small files are kept.
"""
import argparse
import hashlib
import json
import re
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
MAX_SEED = 16 * 1024


def literals(*paths, max_len=200):
    out = []
    for p in paths:
        for m in LITERAL.finditer((ROOT / p).read_text(errors="replace")):
            s = m.group(1)
            try:
                s = bytes(s, "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")
            except (UnicodeError, ValueError):
                continue
            if 0 < len(s) <= max_len:
                out.append(s)
    return out


def write(out, harness, items, prefix=b"", max_seed=MAX_SEED):
    d = out / harness
    d.mkdir(parents=True, exist_ok=True)
    seen = set()
    for item in items:
        data = item if isinstance(item, bytes) else item.encode()
        data = prefix + data
        if len(data) > max_seed or data in seen:
            continue
        seen.add(data)
        (d / ("seed-" + hashlib.sha1(data).hexdigest()[:12])).write_bytes(data)


def small_files(root, pattern, limit, max_size=MAX_SEED):
    files = sorted(p for p in root.rglob(pattern) if p.is_file() and p.stat().st_size <= max_size)
    step = max(1, len(files) // limit)
    return [p.read_bytes() for p in files[::step][:limit]]


RAW = re.compile(r'R"\((.*?)\)"', re.S)


def raw_literals(path, needle):
    """The C++ raw string literals R"(...)" of a test file that contain `needle`."""
    return [m.group(1) for m in RAW.finditer((ROOT / path).read_text()) if needle in m.group(1)]


def issue25_seeds(out):
    """unpack_wheel, variants_json, gpu_stacks, targets (no fixture index needed)."""
    with tempfile.TemporaryDirectory() as t:
        subprocess.run(["python3", str(ROOT / "tests/install/make_wheels.py"), t], check=True,
                       capture_output=True)
        write(out, "unpack_wheel", small_files(Path(t) / "wheels", "*.whl", 12))
    names = [b"torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl",
             b"torch-2.10.0-1-cp312-cp312-manylinux_2_28_x86_64-null.whl",
             b"torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl",
             b"demo-1.0-py3-none-any-CUDA.whl"]
    jsons = [j.encode() for j in raw_literals("tests/stacks/variants_test.cpp", "$schema")]
    write(out, "variants_json", [b"\x00" + j for j in jsons] + [b"\x01" + n for n in names])
    table = (ROOT / "gpu/data/gpu_stacks.txt").read_bytes()
    rows = [line for line in table.splitlines() if line and not line.startswith(b"#")]
    labels = [b"2.8.3+cu12torch2.8cxx11abiTRUE", b"2.6.0+pt28cu128", b"2.6.0+pt211cu130",
              b"0.10.0+cu129", b"1.0+cu13torch2.10cxx11abiFALSE", b"1.0+cpu"]
    write(out, "gpu_stacks", [b"\x00" + table] + [b"\x00" + r for r in rows[::6]] +
          [b"\x01" + v for v in labels], max_seed=64 * 1024)
    targets = [raw.encode() for raw in raw_literals("tests/resolve/targets_test.cpp", "[targets.")]
    targets += [s.encode() for s in literals("tests/resolve/targets_test.cpp", max_len=400)
                if "targets." in s]
    pyproject = [b'[project]\nname = "demo"\n[tool.gpulock.targets.cu126]\npython-version = '
                 b'">=3.10,<3.13"\nplatform = ["manylinux_2_28_x86_64", "manylinux_2_28_aarch64"]\n'
                 b'cuda-ceiling = "12.6"\ngpu-arch = ["sm_90"]\ntorch-backend = "cu126"\n'
                 b'cuda-compat = "minor"\n[tool.gpulock.targets.cpu]\npython-version = "3.13t"\n'
                 b'platform = "manylinux_2_28_x86_64"\ndriver = "none"\n']
    write(out, "targets", [b"\x01" + t for t in targets] + [b"\x00" + t for t in targets
                                                            if b"tool.gpulock" in t] +
          [b"\x00" + p for p in pyproject])


def issue44_seeds(out):
    """zip_directory: wheels shaped like NVIDIA's, written by Python's zipfile (plain, with a
    comment, zip64 end records forced), plus those the C++ tests build (seed-cudnn-like*, ...)."""
    import io
    import zipfile
    files = [("nvidia/__init__.py", b""), ("nvidia/cudnn/", b""),
             ("nvidia/cudnn/lib/libcudnn_graph.so.9", b"\x7fELF"),
             ("nvidia/cudnn/lib/libcudnn.so.9", b"\x7fELF" * 40),
             ("nvidia_cudnn_cu13-9.20.0.48.dist-info/RECORD", b"")]
    seeds = []
    for comment, zip64, method in ((b"", False, zipfile.ZIP_DEFLATED), (b"c" * 300, False,
                                   zipfile.ZIP_STORED), (b"", True, zipfile.ZIP_DEFLATED)):
        limit = zipfile.ZIP_FILECOUNT_LIMIT
        if zip64:
            zipfile.ZIP_FILECOUNT_LIMIT = 1  # forces the zip64 end record and locator
        try:
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w", method) as z:
                for name, data in files:
                    z.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), data, method)
                z.comment = comment
            seeds.append(buf.getvalue())
        finally:
            zipfile.ZIP_FILECOUNT_LIMIT = limit
    write(out, "zip_directory", seeds)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=ROOT / "fuzz" / "corpus")
    a = ap.parse_args()
    idx, out = a.index, a.out

    data = [json.loads((ROOT / "fixtures/data" / f).read_text()) for f in
            ("torch.json", "gpu.json", "deps.json")]
    versions, reqs, rps, wheels = set(), set(), set(), set()

    def walk(x):
        if isinstance(x, dict):
            if isinstance(x.get("version"), str):
                versions.add(x["version"])
            for r in x.get("requires_dist", []) or []:
                if isinstance(r, str):
                    reqs.add(r)
            if isinstance(x.get("requires_python"), str):
                rps.add(x["requires_python"])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(data)
    manifest = json.loads((idx / "manifest.json").read_text())
    for f in re.findall(r'"([^"/]+\.whl)"', json.dumps(manifest)):
        wheels.add(f)

    write(out, "version", literals("tests/core/version_test.cpp", max_len=64) + sorted(versions)[:150])
    specs = literals("tests/core/specifier_test.cpp", max_len=64) + sorted(rps)
    write(out, "specifier", specs[:300] + [f"{s}\n{v}" for s, v in
                                            zip(specs[:120], sorted(versions) * 3)])
    write(out, "requirement", literals("tests/core/requirement_test.cpp") + sorted(reqs)[:150])
    write(out, "marker", literals("tests/core/marker_test.cpp") +
          [r.split(";", 1)[1] for r in sorted(reqs) if ";" in r][:80])
    write(out, "wheel_filename", literals("tests/core/filename_test.cpp", max_len=120) +
          sorted(wheels)[::4][:150] + literals("tests/core/tags_test.cpp", max_len=80)[:80])
    write(out, "metadata", small_files(idx / "packages", "*.metadata", 60) +
          small_files(idx / "broken", "*.metadata", 20))
    for sel in (0, 1, 2, 3):
        write(out, "html_page", small_files(idx / "simple", "index.html", 12) +
              small_files(idx / "whl", "index.html", 12) + small_files(idx / "broken", "*.html", 6),
              prefix=bytes([sel]))
        write(out, "json_page", small_files(idx / "simple", "index.json", 12) +
              small_files(idx / "broken", "*.json", 6), prefix=bytes([sel]))
    write(out, "zip_metadata", small_files(idx, "*.whl", 25, max_size=12 * 1024))
    write(out, "pylock", small_files(ROOT / "fixtures/locks", "*.toml", 60))
    reqfiles = [s for s in literals("tests/app/requirements_file_test.cpp", max_len=400) if "\n" in s or " " in s]
    write(out, "requirements_file", [bytes([sel]) + s.encode() for s in reqfiles for sel in (0, 1)] + [
        b"\x00torch==2.5.1+cu124 --hash=sha256:" + b"a" * 64 + b"\n-r nested.txt\n-c missing.txt\n",
        b"\x00-i https://example.org/simple\n--extra-index-url ${URL}\n-f ./wheels\n--pre\n${TORCH}\nnumpy \\\n  >=1.26 # comment\n",
        b"\x01--no-index\n--only-binary :all:\n-e ./local\n",
    ])
    write(out, "pyproject", [bytes([sel]) + t for sel in (0, 15) for t in (
        b'[project]\nname = "demo"\ndependencies = ["torch>=2.4", "numpy; python_version>=\'3.10\'"]\n'
        b'[project.optional-dependencies]\ngpu = ["nvidia-cudnn-cu12==9.1.0.70"]\nTest-Extra = ["pytest"]\n'
        b'[dependency-groups]\ndev = ["ruff", {include-group = "docs"}]\ndocs = ["sphinx>=7"]\n',
        b'[project]\ndependencies = []\n[dependency-groups]\ndev = [{include-group = "dev"}]\n',
        b'[project]\nname = "x"\ndependencies = "torch"\n',
    )])
    write(out, "ld_cache", [Path("/etc/ld.so.cache").read_bytes(), b"glibc-ld.so.cache1.1" + bytes(28)],
          max_seed=64 * 1024)
    write(out, "proc_text", literals("tests/probe/machine_sources_test.cpp", max_len=300) +
          literals("tests/probe/cuda_versions_test.cpp", max_len=80))
    with tempfile.TemporaryDirectory() as t:
        src = Path(t) / "lib.c"
        src.write_text("const unsigned long cudnn_graph_version = 90100;\nint f(void) { return 1; }\n")
        libs = []
        for flags in (["-Wl,-soname,libcudnn_graph.so.9", "-Wl,-rpath,$ORIGIN/../lib:/opt/x"],
                      ["-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN", "-lm"], ["-m32"]):
            so = Path(t) / "lib.so"
            r = subprocess.run(["gcc", "-shared", "-fPIC", "-Os", "-s", *flags, "-o", so, src],
                               capture_output=True)
            if r.returncode == 0:
                libs.append(so.read_bytes())
        write(out, "elf", libs)
    issue25_seeds(out)
    issue44_seeds(out)


if __name__ == "__main__":
    main()
