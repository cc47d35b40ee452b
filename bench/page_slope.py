#!/usr/bin/env python3
"""The cost of a page's size (issue 46 item 4): the slope of a cold resolve's wall time.

    bench/page_slope.py --gpulock build/release/cli/gpulock [--files 10,100000] [--runs 5]
                        [--work DIR] [--json FILE] [--plot FILE.png] [--format json,html]

Generates one project's page (`huge`, PyPI-shaped: an sdist and 12 wheels per version, sha256,
core-metadata, size, upload-time, requires-python; ~500 bytes a file) at each --files count, as
PEP 691 JSON and as PEP 503 HTML from the same records, and serves them UNCOMPRESSED (gzip off)
from its own nginx on loopback. For each (format, size) it times `gpulock resolve huge` for
CPython 3.11 on manylinux_2_28_x86_64 with an empty cache directory each run (the page fetched,
parsed, stored in the cache, filtered, the newest wheel's METADATA read): --runs runs, the
median wall time (after one untimed run) and the largest peak RSS (GNU /usr/bin/time's %M).
It prints, per format, the slope between the smallest and the largest page in ms per MB of page
(MB = 10^6 bytes; issue 46's goal: at most 2) and the peak RSS per page byte of the largest
(goal: under 2). Nothing under ../shared is read. Python standard library, nginx.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NGINX = os.environ.get("GPULOCK_NGINX", "/usr/sbin/nginx")
TIME = "/usr/bin/time"  # GNU time (Debian package time)
PYTHONS = ["cp39", "cp310", "cp311", "cp312"]
PLATFORMS = ["manylinux_2_17_x86_64.manylinux2014_x86_64", "manylinux_2_17_aarch64", "win_amd64"]


def records(n: int) -> tuple[list[dict], list[str]]:
    """n file records (deterministic) and the versions they belong to, oldest first; URLs
    root-relative, under /N/packages/ (a URL as long as PyPI's absolute ones)."""
    rng = random.Random(0x5EED)
    hexd = lambda k: "%0*x" % (k, rng.getrandbits(4 * k))
    out: list[dict] = []
    versions: list[str] = []
    v = 0
    while len(out) < n:
        version = f"1.{v // 100}.{v % 100}"
        versions.append(version)
        names = [f"huge-{version}.tar.gz"] + [
            f"huge-{version}-{py}-{py}-{plat}.whl" for py in PYTHONS for plat in PLATFORMS]
        for name in names[:n - len(out)]:
            out.append({"filename": name, "sha256": hexd(64), "wheel": name.endswith(".whl"),
                        "size": 1000000 + rng.randrange(20000000), "version": version,
                        "time": f"2024-0{1 + v % 9}-1{v % 10}T10:00:00.000000Z",
                        "url": f"/{n}/packages/{hexd(2)}/{hexd(2)}/{hexd(60)}/{name}"})
        v += 1
    return out, versions


def write_json(path: Path, recs: list[dict], versions: list[str]) -> None:
    with open(path, "w") as out:
        out.write('{"meta":{"api-version":"1.1"},"name":"huge","files":[')
        for i, r in enumerate(recs):
            out.write(("," if i else "") +
                      '{"core-metadata":%s,"filename":"%s","hashes":{"sha256":"%s"},'
                      '"requires-python":">=3.9","size":%d,"upload-time":"%s","url":"%s",'
                      '"yanked":false}' % ("true" if r["wheel"] else "false", r["filename"],
                                           r["sha256"], r["size"], r["time"], r["url"]))
        out.write('],"versions":[' + ",".join(f'"{x}"' for x in versions) + "]}")


def write_html(path: Path, recs: list[dict]) -> None:
    with open(path, "w") as out:
        out.write('<!DOCTYPE html>\n<html>\n<head>\n<meta name="pypi:repository-version" '
                  'content="1.1">\n<title>Links for huge</title>\n</head>\n<body>\n'
                  '<h1>Links for huge</h1>\n')
        for r in recs:
            meta = ' data-dist-info-metadata="true" data-core-metadata="true"' if r["wheel"] else ""
            out.write(f'<a href="{r["url"]}#sha256={r["sha256"]}" '
                      f'data-requires-python="&gt;=3.9"{meta}>{r["filename"]}</a><br />\n')
        out.write("</body>\n</html>\n")


def generate(root: Path, n: int) -> dict[str, int]:
    """<root>/<n>/{json,html}/simple/huge/index.*, METADATA of the newest versions' wheels."""
    base = root / str(n)
    stamp = base / "done"
    recs, versions = records(n)
    if not stamp.exists():
        for fmt in ("json", "html"):
            (base / fmt / "simple/huge").mkdir(parents=True, exist_ok=True)
        write_json(base / "json/simple/huge/index.json", recs, versions)
        write_html(base / "html/simple/huge/index.html", recs)
        newest = set(versions[-2:])  # the last version may lack the cp311 wheel
        for r in recs:
            if r["version"] in newest and r["wheel"]:
                meta = root / r["url"].lstrip("/")
                meta = meta.with_name(meta.name + ".metadata")
                meta.parent.mkdir(parents=True, exist_ok=True)
                meta.write_text(f"Metadata-Version: 2.1\nName: huge\nVersion: {r['version']}\n"
                                "Requires-Python: >=3.9\n\n")
        stamp.write_text("")
    return {"json": (base / "json/simple/huge/index.json").stat().st_size,
            "html": (base / "html/simple/huge/index.html").stat().st_size}


class Nginx:
    """nginx on 127.0.0.1, gzip off: /N/json/simple/ and /N/html/simple/ (the page as index.*),
    /N/packages/ (METADATA files)."""

    def __init__(self, root: Path, state: Path):
        self.state = state
        state.mkdir(parents=True, exist_ok=True)
        for d in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (state / "tmp" / d).mkdir(parents=True, exist_ok=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        user = "user root root;\n" if os.geteuid() == 0 else ""
        tmp = state / "tmp"
        (state / "nginx.conf").write_text(f"""{user}worker_processes 1;
daemon on;
pid {state}/nginx.pid;
error_log {state}/error.log warn;
events {{ worker_connections 256; }}
http {{
    types {{ }}
    default_type application/octet-stream;
    access_log off;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    sendfile on;
    gzip off;
    server {{
        listen 127.0.0.1:{self.port};
        root {root};
        location ~ ^/[0-9]+/json/simple/ {{
            index index.json;
            default_type application/vnd.pypi.simple.v1+json;
        }}
        location ~ ^/[0-9]+/html/simple/ {{
            index index.html;
            default_type text/html;
        }}
    }}
}}
""")
        subprocess.run([NGINX, "-p", f"{state}/", "-c", f"{state}/nginx.conf", "-e",
                        f"{state}/error.log"], check=True)
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        pid_file = self.state / "nginx.pid"
        if pid_file.exists():
            os.kill(int(pid_file.read_text().strip()), signal.SIGQUIT)


def measure(argv: list[str], env: dict, scratch: Path) -> tuple[int, float, float, int, str]:
    """(exit status, wall s, CPU s, peak RSS bytes, stderr) of one run, through GNU time: a
    process keeps its parent's peak RSS across exec, so this (large) Python cannot be the parent
    whose wait4 reads it."""
    report = scratch / "time.txt"
    err_path = scratch / "stderr.txt"
    start = time.monotonic()
    with open(err_path, "wb") as err:
        p = subprocess.Popen([TIME, "-q", "-f", "%e %U %S %M", "-o", str(report), *argv], env=env,
                             stdout=subprocess.DEVNULL, stderr=err)
        # CPU time from wait4 (microseconds, GNU time's %U and %S have 10 ms steps): time's own
        # and gpulock's, which time waited for.
        _, status, usage = os.wait4(p.pid, 0)
        rc = os.waitstatus_to_exitcode(status)
    took = time.monotonic() - start
    text = err_path.read_text(errors="replace")
    fields = report.read_text().split()
    if len(fields) < 4:
        return rc or 1, took, 0.0, 0, text + report.read_text()
    # GNU time's %e has 10 ms steps: the wall time is this process's, less nothing (a fork and
    # exec of /usr/bin/time, under a millisecond, is in both ends of the slope).
    return rc, took, usage.ru_utime + usage.ru_stime, int(fields[3]) * 1024, text


def plot(points: list[dict], out: Path) -> None:
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        print("(no gnuplot: apt-get install gnuplot-nox for the plot)")
        return
    data = out.with_suffix(".dat")
    with open(data, "w") as f:
        for fmt in ("json", "html"):
            f.write(f"# {fmt}\n")
            for p in sorted((p for p in points if p["format"] == fmt), key=lambda p: p["bytes"]):
                f.write(f"{p['bytes'] / 1e6:.3f} {p['wall_ms']:.1f} {p['cpu_ms']:.1f}\n")
            f.write("\n\n")
    script = f"""set terminal pngcairo size 800,500
set output '{out}'
set title 'gpulock resolve, cold, one project page served uncompressed'
set xlabel 'page size (MB)'
set ylabel 'ms (median)'
set key top left
set grid
plot '{data}' index 0 using 1:2 with linespoints lc 1 title 'PEP 691 JSON, wall', \\
     '{data}' index 0 using 1:3 with linespoints lc 1 dt 2 title 'PEP 691 JSON, CPU', \\
     '{data}' index 1 using 1:2 with linespoints lc 2 title 'PEP 503 HTML, wall', \\
     '{data}' index 1 using 1:3 with linespoints lc 2 dt 2 title 'PEP 503 HTML, CPU'
"""
    r = subprocess.run([gnuplot], input=script, text=True, capture_output=True)
    if r.returncode != 0:
        print("gnuplot failed:", r.stderr.strip())
    data.unlink(missing_ok=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpulock", required=True)
    ap.add_argument("--files", default="10,100000", help="page sizes in files, comma-separated")
    ap.add_argument("--format", default="json,html")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--work", type=Path)
    ap.add_argument("--json", type=Path, help="also write the measurements here")
    ap.add_argument("--plot", type=Path,
                    help="a PNG of wall and CPU time against page size (gnuplot)")
    args = ap.parse_args()
    gpulock = str(Path(args.gpulock).resolve())
    sizes = sorted(int(x) for x in args.files.split(","))
    formats = args.format.split(",")
    work = (args.work or Path(tempfile.gettempdir()) / "gpulock-page-slope").resolve()
    work.mkdir(parents=True, exist_ok=True)
    pages = {n: generate(work / "pages", n) for n in sizes}
    server = Nginx(work / "pages", work / "nginx")
    env = dict(os.environ, GPULOCK_HTTP_DEADLINE="600")
    env.pop("GPULOCK_CACHE_DIR", None)
    points: list[dict] = []
    try:
        for fmt in formats:
            for n in sizes:
                walls, cpus, peaks = [], [], []
                for i in range(args.runs + 1):  # the first, untimed, warms nginx and the disk
                    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
                    argv = [gpulock, "resolve", "huge", "--index-url",
                            f"{server.url}/{n}/{fmt}/simple/", "--python-version", "3.11",
                            "--platform", "manylinux_2_28_x86_64", "--driver", "none",
                            "--cache-dir", str(cache), "-o", str(cache / "pylock.toml")]
                    rc, wall, cpu, peak, err = measure(argv, env, work)
                    shutil.rmtree(cache, ignore_errors=True)
                    if rc != 0:
                        print(f"gpulock failed ({rc}) on {fmt} {n}:\n{err}", file=sys.stderr)
                        return 1
                    if i == 0:
                        continue
                    walls.append(wall)
                    cpus.append(cpu)
                    peaks.append(peak)
                p = {"format": fmt, "files": n, "bytes": pages[n][fmt],
                     "wall_ms": 1000 * statistics.median(walls),
                     "cpu_ms": 1000 * statistics.median(cpus), "peak_rss": max(peaks),
                     "walls_ms": [round(1000 * w, 1) for w in walls]}
                points.append(p)
                print(f"{fmt:4} {n:>7} files {p['bytes'] / 1e6:8.2f} MB  wall {p['wall_ms']:8.1f} ms"
                      f"  CPU {p['cpu_ms']:8.1f} ms  peak RSS {p['peak_rss'] / 2**20:7.1f} MiB"
                      f"  runs {p['walls_ms']}", flush=True)
    finally:
        server.stop()
    summary = {}
    for fmt in formats:
        lo = min((p for p in points if p["format"] == fmt), key=lambda p: p["bytes"])
        hi = max((p for p in points if p["format"] == fmt), key=lambda p: p["bytes"])
        mb = (hi["bytes"] - lo["bytes"]) / 1e6
        slope = (hi["wall_ms"] - lo["wall_ms"]) / mb if mb > 0 else float("nan")
        cpu_slope = (hi["cpu_ms"] - lo["cpu_ms"]) / mb if mb > 0 else float("nan")
        per_byte = hi["peak_rss"] / hi["bytes"]
        summary[fmt] = {"slope_ms_per_mb": slope, "cpu_slope_ms_per_mb": cpu_slope,
                        "rss_per_page_byte": per_byte}
        print(f"{fmt}: slope {slope:.2f} ms/MB of wall time (goal <= 2; CPU {cpu_slope:.2f} ms/MB),"
              f" peak RSS {per_byte:.2f} bytes per page byte (goal < 2) at {hi['files']} files")
    if args.json:
        args.json.write_text(json.dumps({"points": points, "summary": summary}, indent=1) + "\n")
    if args.plot:
        plot(points, args.plot.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
