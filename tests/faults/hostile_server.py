#!/usr/bin/env python3
"""A hostile Simple API index on 127.0.0.1 for gpulock's `faults` suite (standard library only).

    hostile_server.py --port-file FILE

It serves one project, `demo` 1.0 (a pure-Python wheel built in memory), as a PEP 691 JSON page
with sha256, PEP 700 size and a PEP 658 .metadata file. URLs are /<mode>/simple/demo/ and
/<mode>/files/<file>; `ok` behaves, every other mode misbehaves in one way (relative links keep the
mode, so a page's files are served under the same mode):

  ok               the page, the wheel (single Range honoured), the .metadata file
  drip             the page's headers, then one byte every 0.4 s (2.5 bytes/s), forever
  hang             reads the request, never answers
  endless          a 200 JSON page without Content-Length that never ends
  gzip-bomb        Content-Encoding: gzip, 64 KiB that inflate to 64 MiB of spaces
  huge-header      the page with a 2 MiB response header line (X-Filler: xxx...)
  many-headers     the page with 64 header lines of 16 KiB each (1 MiB of headers)
  gzip-bomb-big    Content-Encoding: gzip, ~330 KiB that inflate to 320 MiB of zeros (over the
                   default page limit)
  gzip-big-page    the page and 80 MiB of spaces after it, Content-Encoding: gzip: it must work
  gzip-bomb-huge   Content-Encoding: gzip, ~1.1 MiB that inflate to 1104 MiB of zeros (over a
                   1 GiB limit)
  long-body        a Content-Length shorter than the body it sends
  short-body       a Content-Length longer than the body, then the connection closes
  reset            half the page, then a TCP reset
  redirect-loop    302 to itself, forever
  html-as-json     a PEP 503 HTML page (`text/html`) as the answer to the JSON request, which
                   PEP 691 allows: it must work
  retry-after      503 with Retry-After: 1 on each URL's first request, then as ok
  retry-after-long 429 with Retry-After: 3600, always
  no-metadata      the page without the .metadata file, no Range support, a 512 KiB wheel: it
                   is downloaded whole (to <cache>/partial/)
  wrong-hash       as no-metadata, the page's sha256 for the wheel is wrong: the download that
                   reads its METADATA fails with a hash mismatch, exit 4
  oversize-wheel   as no-metadata, the wheel is 8 MiB longer than the page's PEP 700 size
  drip-wheel       as no-metadata, the wheel drips (a download to interrupt)
  lying-cd         no .metadata, Range support, a wheel whose central directory claims 65000
                   well-formed entries in 71 MiB (more than a reader may fetch)
  endless-metadata the .metadata file never ends
The port goes to --port-file (written atomically) once the server listens.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import re
import socket
import struct
import sys
import threading
import time
import zipfile
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
STOP = threading.Event()
WHEEL_NAME = "demo-1.0-py3-none-any.whl"
METADATA = b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\n"


def build_wheel(padding: bytes = b"") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("demo/__init__.py", "")
        if padding:
            z.writestr("demo/padding.bin", padding, compress_type=zipfile.ZIP_STORED)
        z.writestr("demo-1.0.dist-info/METADATA", METADATA)
        z.writestr("demo-1.0.dist-info/WHEEL",
                   "Wheel-Version: 1.0\nGenerator: hostile\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr("demo-1.0.dist-info/RECORD", "")
    return buf.getvalue()


WHEEL = build_wheel()
# The wheel with 512 KiB of incompressible padding: too big for the client's first range probe
# to take whole, so a server without Range support makes it download the wheel to partial/.
BIG_WHEEL = build_wheel(os.urandom(512 << 10))

# A wheel whose central directory lies: its end record claims 65000 entries in a 71 MiB
# directory, and every entry is well formed (1100-byte names), so a reader walks it all. Bytes are
# made per range (lying_bytes), never held whole.
LYING_NAME = 1100
LYING_ENTRY = 46 + LYING_NAME
LYING_ENTRIES = 65000
LYING_CD_OFFSET = 1 << 20
LYING_CD_SIZE = LYING_ENTRIES * LYING_ENTRY
LYING_SIZE = LYING_CD_OFFSET + LYING_CD_SIZE + 22
LYING_TAIL = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, LYING_ENTRIES, LYING_ENTRIES,
                         LYING_CD_SIZE, LYING_CD_OFFSET, 0)


def lying_entry(i: int) -> bytes:
    name = (b"demo/" + b"a" * (LYING_NAME - 15) + b"%010d" % i)
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0x21, 0, 0, 0,
                       len(name), 0, 0, 0, 0, 0, 0) + name


def lying_bytes(start: int, end: int) -> bytes:
    """Bytes [start, end) of the lying wheel."""
    out = bytearray()
    pos = start
    while pos < end:
        if pos < LYING_CD_OFFSET:
            n = min(end, LYING_CD_OFFSET) - pos
            out += bytes(n)
        elif pos < LYING_CD_OFFSET + LYING_CD_SIZE:
            i, off = divmod(pos - LYING_CD_OFFSET, LYING_ENTRY)
            piece = lying_entry(i)[off:]
            n = min(len(piece), end - pos)
            out += piece[:n]
        else:
            off = pos - (LYING_CD_OFFSET + LYING_CD_SIZE)
            n = min(len(LYING_TAIL) - off, end - pos)
            out += LYING_TAIL[off:off + n]
        pos += n
    return bytes(out)

def bomb() -> bytes:
    """64 KiB of gzip that inflate to 64 MiB of spaces (made on first use: it takes a moment)."""
    global BOMB
    if BOMB is None:
        BOMB = gzip.compress(b" " * (64 << 20), compresslevel=9)
    return BOMB


BOMB: bytes | None = None


def big_bomb() -> bytes:
    """~330 KiB of gzip that inflate to 320 MiB of zeros, compressed 1 MiB at a time."""
    global BIG_BOMB
    if BIG_BOMB is None:
        z = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31: a gzip header and trailer
        zeros = bytes(1 << 20)
        BIG_BOMB = b"".join(z.compress(zeros) for _ in range(320)) + z.flush()
    return BIG_BOMB


BIG_BOMB: bytes | None = None


def huge_bomb() -> bytes:
    """~1.1 MiB of gzip that inflate to 1104 MiB of zeros (over a 1 GiB limit): one deflate block
    sequence for 8 MiB of zeros, ended by a full flush so that it stands alone, 138 times."""
    global HUGE_BOMB
    if HUGE_BOMB is None:
        zeros = bytes(8 << 20)
        c = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate: the gzip frame is added here
        block = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
        crc = 0
        for _ in range(138):
            crc = zlib.crc32(zeros, crc)
        end = zlib.compressobj(9, zlib.DEFLATED, -15).flush()  # an empty final block
        HUGE_BOMB = (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + block * 138 + end +
                     struct.pack("<II", crc, (138 * len(zeros)) & 0xFFFFFFFF))
    return HUGE_BOMB


HUGE_BOMB: bytes | None = None


def wheel_for(mode: str) -> bytes:
    return BIG_WHEEL if mode in ("no-metadata", "wrong-hash", "oversize-wheel", "drip-wheel") else WHEEL


def page(mode: str, metadata: bool = True, sha: str | None = None) -> bytes:
    wheel = wheel_for(mode)
    size = {"drip-wheel": len(wheel) + (1 << 20), "lying-cd": LYING_SIZE}.get(mode, len(wheel))
    f = {"filename": WHEEL_NAME, "url": f"../../files/{WHEEL_NAME}",
         "hashes": {"sha256": sha or hashlib.sha256(wheel).hexdigest()}, "size": size}
    if metadata:
        f["core-metadata"] = {"sha256": hashlib.sha256(METADATA).hexdigest()}
    return json.dumps({"meta": {"api-version": "1.1"}, "name": "demo", "files": [f],
                       "versions": ["1.0"]}).encode()


HTML_PAGE = (f'<!DOCTYPE html><html><body><a href="../../files/{WHEEL_NAME}#sha256='
             f'{hashlib.sha256(WHEEL).hexdigest()}">{WHEEL_NAME}</a></body></html>').encode()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr):
        super().__init__(addr, Handler)
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}

    def handle_error(self, request, client_address):
        pass  # a client that hangs up on a bomb or a drip is the point, not an error

    def count(self, key: str) -> int:
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + 1
            return self.counts[key]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "gpulock-hostile/1"
    sys_version = ""

    def log_message(self, fmt, *args):
        pass

    def head(self, status: int, ctype: str, length: int | None = None, extra=None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if length is not None:
            self.send_header("Content-Length", str(length))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()

    def body(self, status: int, data: bytes, ctype: str = "text/plain", extra=None) -> None:
        self.head(status, ctype, len(data), extra)
        self.wfile.write(data)

    def drip(self) -> None:
        while not STOP.is_set():
            self.wfile.write(b" ")
            self.wfile.flush()
            time.sleep(0.4)

    def serve_file(self, data: bytes, ranges: bool) -> None:
        rng = self.headers.get("Range") if ranges else None
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", rng or "")
        if m and (m.group(1) or m.group(2)):
            size = len(data)
            if m.group(1):
                start = int(m.group(1))
                end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
            else:
                start, end = max(0, size - int(m.group(2))), size - 1
            if start >= size or start > end:
                self.body(416, b"", extra={"Content-Range": f"bytes */{size}"})
                return
            self.body(206, data[start:end + 1], "application/octet-stream",
                      {"Content-Range": f"bytes {start}-{end}/{size}", "Accept-Ranges": "bytes"})
            return
        self.body(200, data, "application/octet-stream",
                  {"Accept-Ranges": "bytes" if ranges else "none"})

    def do_GET(self):
        try:
            self.dispatch()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def dispatch(self) -> None:
        parts = self.path.split("?")[0].lstrip("/").split("/", 1)
        mode, rest = parts[0], "/" + (parts[1] if len(parts) > 1 else "")
        n = self.server.count(self.path)
        is_page = rest.startswith("/simple/")
        is_meta = rest.endswith(".metadata")
        whole_only = mode in ("no-metadata", "wrong-hash", "oversize-wheel", "drip-wheel", "lying-cd")
        if mode == "retry-after" and n == 1:
            self.body(503, b"busy\n", extra={"Retry-After": "1"})
            return
        if mode == "retry-after-long":
            self.body(429, b"slow down\n", extra={"Retry-After": "3600"})
            return
        if mode == "redirect-loop":
            self.body(302, b"", extra={"Location": self.path})
            return
        if mode == "hang":
            STOP.wait(600)
            self.close_connection = True
            return
        if is_page:
            if rest != "/simple/demo/":
                self.body(404, b"not found\n")
                return
            self.send_page(mode, whole_only)
            return
        if is_meta:
            if whole_only:
                self.body(404, b"not found\n")
            elif mode == "endless-metadata":
                self.head(200, "application/octet-stream", extra={"Connection": "close"})
                chunk = b"X" * 65536
                while not STOP.is_set():
                    self.wfile.write(chunk)
                self.close_connection = True
            else:
                self.body(200, METADATA, "application/octet-stream")
            return
        if rest != f"/files/{WHEEL_NAME}":
            self.body(404, b"not found\n")
            return
        wheel = wheel_for(mode)
        if mode == "oversize-wheel":
            self.body(200, wheel + b"\0" * (8 << 20), "application/octet-stream",
                      {"Accept-Ranges": "none"})
        elif mode == "drip-wheel":
            self.head(200, "application/octet-stream", len(wheel) + (1 << 20),
                      {"Accept-Ranges": "none"})
            self.wfile.write(wheel)
            self.drip()
            self.close_connection = True
        elif mode == "lying-cd":
            self.serve_lying()
        else:
            self.serve_file(wheel, ranges=not whole_only)

    def serve_lying(self) -> None:
        """Single ranges of the lying wheel."""
        size = LYING_SIZE
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range") or "")
        if not m or not (m.group(1) or m.group(2)):
            self.body(416, b"", extra={"Content-Range": f"bytes */{size}"})
            return
        if m.group(1):
            start = int(m.group(1))
            end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
        else:
            start, end = max(0, size - int(m.group(2))), size - 1
        self.head(206, "application/octet-stream", end - start + 1,
                  {"Content-Range": f"bytes {start}-{end}/{size}", "Accept-Ranges": "bytes"})
        pos = start
        while pos <= end:
            n = min(end + 1 - pos, 1 << 20)
            self.wfile.write(lying_bytes(pos, pos + n))
            pos += n

    def send_page(self, mode: str, whole_only: bool) -> None:
        data = page(mode, metadata=not whole_only,
                    sha=hashlib.sha256(b"not the wheel").hexdigest() if mode == "wrong-hash" else None)
        if mode == "drip":
            self.head(200, JSON_TYPE, len(data) + 1000)
            self.drip()
            self.close_connection = True
        elif mode == "endless":
            self.head(200, JSON_TYPE, extra={"Connection": "close"})
            self.wfile.write(b'{"meta": {"api-version": "1.1"}, "name": "demo", "files": [')
            chunk = b" " * 65536
            while not STOP.is_set():
                self.wfile.write(chunk)
            self.close_connection = True
        elif mode == "gzip-bomb":
            self.body(200, bomb(), JSON_TYPE, {"Content-Encoding": "gzip"})
        elif mode == "huge-header":
            self.body(200, data, JSON_TYPE, {"X-Filler": "x" * (2 << 20)})
        elif mode == "many-headers":
            self.body(200, data, JSON_TYPE, {f"X-Filler-{i}": "x" * (16 << 10) for i in range(64)})
        elif mode == "gzip-bomb-big":
            self.body(200, big_bomb(), JSON_TYPE, {"Content-Encoding": "gzip"})
        elif mode == "gzip-bomb-huge":
            self.body(200, huge_bomb(), JSON_TYPE, {"Content-Encoding": "gzip"})
        elif mode == "long-body":
            self.head(200, JSON_TYPE, len(data) // 2)
            self.wfile.write(data + b" " * 4096)
            self.close_connection = True
        elif mode == "short-body":
            self.head(200, JSON_TYPE, len(data) * 2)
            self.wfile.write(data)
            self.wfile.flush()
            self.close_connection = True
        elif mode == "reset":
            self.head(200, JSON_TYPE, len(data))
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
        elif mode == "html-as-json":
            self.body(200, HTML_PAGE, "text/html")
        elif mode == "gzip-big-page":
            # The page, then 80 MiB of spaces (still valid JSON), gzip: over the 64 MiB of a
            # decoded body the client holds while it arrives, under the page limit.
            z = zlib.compressobj(1, zlib.DEFLATED, 31)
            spaces = b" " * (1 << 20)
            coded = z.compress(data) + b"".join(z.compress(spaces) for _ in range(80)) + z.flush()
            self.body(200, coded, JSON_TYPE, {"Content-Encoding": "gzip"})
        else:
            self.body(200, data, JSON_TYPE)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port-file", required=True)
    args = ap.parse_args()
    srv = Server(("127.0.0.1", 0))
    tmp = f"{args.port_file}.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(f"{srv.server_address[1]}\n")
    os.replace(tmp, args.port_file)
    try:
        srv.serve_forever(poll_interval=0.2)
    finally:
        STOP.set()
    return 0


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGTERM, lambda *_: (STOP.set(), os._exit(0)))
    sys.exit(main())
