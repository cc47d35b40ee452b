#!/usr/bin/env python3
"""Peak RSS of gpulock reading one huge PEP 691 page (issue 18: at most 8 bytes of RSS per byte).

    bench/huge_page.py --gpulock build/release/cli/gpulock [--files 1000000] [--work DIR]
                       [--lean] [--resolve [--warm]] [--json FILE]

Writes a PyPI-shaped PEP 691 JSON page of N files (sdist + 12 wheels per version, sha256,
core-metadata, size, upload-time, requires-python, files.pythonhosted.org-style URLs; ~510 bytes
a file, or ~320 with --lean: filename, sha256 and URL only), serves it from 127.0.0.1 and runs
`gpulock index show huge --no-cache` against it (output discarded), then prints the page size, the
peak RSS (getrusage of the child) and RSS per page byte.

--resolve runs `gpulock resolve huge` for CPython 3.11 on manylinux_2_28_x86_64 instead, with an
empty cache (the page is parsed, stored in the cache, filtered to the target's wheels, and the
newest wheel's METADATA read): the page's URLs are then root-relative (/packages/...) and
core-metadata is `true`, so the server can answer each `.metadata` request. --warm (with
--resolve) runs it twice with the same cache and measures the second run (the page from the
cache, within its max-age). Time, CPU time and peak RSS are the measured run's own (wait4);
--json FILE also writes them as JSON (bench/run's `scale` section).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PYTHONS = ["cp39", "cp310", "cp311", "cp312"]
PLATFORMS = ["manylinux_2_17_x86_64.manylinux2014_x86_64", "manylinux_2_17_aarch64", "win_amd64"]


def write_page(path: Path, n: int, lean: bool = False, local: bool = False) -> int:
    host = "" if local else "https://files.pythonhosted.org"
    rng = random.Random(0x5EED)
    hexd = lambda k: "%0*x" % (k, rng.getrandbits(4 * k))
    versions = []
    count = 0
    with open(path, "w") as out:
        out.write('{"meta":{"api-version":"1.1"},"name":"huge","files":[')
        v = 0
        while count < n:
            version = f"1.{v // 100}.{v % 100}"
            versions.append(version)
            names = [f"huge-{version}.tar.gz"] + [
                f"huge-{version}-{py}-{py}-{plat}.whl" for py in PYTHONS for plat in PLATFORMS]
            for name in names:
                if count >= n:
                    break
                sep = "," if count else ""
                if lean:
                    # About 300 bytes: filename, sha256 and URL only (the most files per byte).
                    out.write(sep + '{"filename":"%s","hashes":{"sha256":"%s"},'
                              '"url":"%s/packages/%s/%s/%s/%s"%s}'
                              % (name, hexd(64), host, hexd(2), hexd(2), hexd(60), name,
                                 ',"core-metadata":true' if local else ""))
                    count += 1
                    continue
                core = '{"sha256":"%s"}' % hexd(64) if name.endswith(".whl") else "false"
                if local:
                    core = "true" if name.endswith(".whl") else "false"
                out.write(sep +
                          '{"core-metadata":%s,"filename":"%s","hashes":{"sha256":"%s"},'
                          '"requires-python":">=3.9","size":%d,"upload-time":"2024-0%d-1%dT10:00:00.000000Z",'
                          '"url":"%s/packages/%s/%s/%s/%s","yanked":false}'
                          % (core, name, hexd(64), 1000000 + rng.randrange(20000000), 1 + v % 9,
                             v % 10, host, hexd(2), hexd(2), hexd(60), name))
                count += 1
            v += 1
        out.write('],"versions":[' + ",".join(f'"{x}"' for x in versions) + "]}")
    return path.stat().st_size


def serve(page: Path) -> tuple[ThreadingHTTPServer, str]:
    data_path = page

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_GET(self):
            if self.path.startswith("/packages/") and self.path.endswith(".whl.metadata"):
                # huge-<version>-<tags>.whl.metadata
                version = self.path.rsplit("/", 1)[1].split("-")[1]
                body = f"Metadata-Version: 2.1\nName: huge\nVersion: {version}\n\n".encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            if self.path.rstrip("/") != "/simple/huge":
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            size = data_path.stat().st_size
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            # As PyPI's CDN: a page is fresh for 10 minutes (a --warm run reads it from the cache).
            self.send_header("Cache-Control", "max-age=600")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            with open(data_path, "rb") as f:
                while chunk := f.read(1 << 20):
                    self.wfile.write(chunk)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}/simple/"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpulock", required=True)
    ap.add_argument("--files", type=int, default=1_000_000)
    ap.add_argument("--work", type=Path)
    ap.add_argument("--resolve", action="store_true",
                    help="measure `gpulock resolve huge` (empty cache) instead of `index show`")
    ap.add_argument("--warm", action="store_true",
                    help="with --resolve: measure a second run with the first one's cache")
    ap.add_argument("--json", type=Path, help="also write the measurement to this file as JSON")
    ap.add_argument("--lean", action="store_true",
                    help="~300-byte entries (filename, sha256, URL) instead of ~510")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="gpulock-huge-"))
    work.mkdir(parents=True, exist_ok=True)
    page = work / (f"huge-{args.files}{'-lean' if args.lean else ''}"
                   f"{'-local' if args.resolve else ''}.json")
    if not page.exists():
        write_page(page, args.files, args.lean, args.resolve)
    size = page.stat().st_size
    srv, url = serve(page)
    # The pages here (~510 MB for 1,000,000 files) are over the default page limit (256 MiB).
    env = dict(os.environ, GPULOCK_MAX_PAGE_SIZE="4G", GPULOCK_HTTP_DEADLINE="600")
    cache = None
    if args.resolve:
        cache = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
        argv = [args.gpulock, "resolve", "huge", "--index-url", url, "--python-version", "3.11",
                "--platform", "manylinux_2_28_x86_64", "--driver", "none", "--cache-dir",
                str(cache), "-o", str(cache / "pylock.toml")]
    else:
        argv = [args.gpulock, "index", "show", "huge", "--no-cache", "--index-url", url]

    def measure() -> tuple[int, float, float, int, str]:
        """(exit status, wall s, CPU s, peak RSS bytes, stderr) of one run of argv."""
        start = time.monotonic()
        with tempfile.TemporaryFile() as err:
            p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=err)
            _, status, usage = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
            took = time.monotonic() - start
            err.seek(0)
            text = err.read().decode(errors="replace")
        return p.returncode, took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, text

    rc, took, cpu, peak, err = measure()
    if args.warm and args.resolve and rc == 0:
        (cache / "pylock.toml").unlink(missing_ok=True)
        rc, took, cpu, peak, err = measure()
    srv.shutdown()
    print(f"files: {args.files}  page: {size} bytes ({size / args.files:.0f} bytes/file)")
    print(f"exit: {rc}  time: {took:.1f} s  CPU: {cpu:.1f} s  peak RSS: {peak} bytes "
          f"({peak / size:.2f} bytes of RSS per page byte)")
    if args.json:
        args.json.write_text(json.dumps({
            "files": args.files, "page_bytes": size, "exit": rc, "wall_s": took, "cpu_s": cpu,
            "peak_rss_bytes": peak, "rss_per_page_byte": peak / size,
            "command": "resolve" if args.resolve else "index show",
            "warm": bool(args.warm and args.resolve)}) + "\n")
    if cache:
        shutil.rmtree(cache, ignore_errors=True)
    if rc != 0:
        print(err, file=sys.stderr)
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
