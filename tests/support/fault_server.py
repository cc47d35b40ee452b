#!/usr/bin/env python3
"""A small misbehaving HTTP server for gpulock's index tests (Python standard library only).

    fault_server.py --root INDEX_ROOT --state STATE_DIR [--port 0]

It binds 127.0.0.1 (port 0 = any free port), writes the port to STATE_DIR/fault.port and logs one
line per request to STATE_DIR/fault.log (time, method, path, status, the client's port: one per
connection, so reuse shows, and the User-Agent). A request in absolute form (`GET http://h/P`, as
an HTTP proxy receives it) is served as /P: tests point http_proxy here. URLs are
/<mode>/<path in the index tree>; `ok` serves the tree like nginx does (content negotiation,
single Range), every other mode misbehaves in one way:

  /ok/P                      the file or page P (index.json or index.html by Accept)
  /500-then-200/P            500 on the first request of this URL, then as /ok/ (per-URL counter);
  /<code>x<N>-then-200/P     <code> on the first N requests (e.g. /503x2-then-200/, /429x1-then-200/)
  /status/<code>/P           always <code> (401 carries WWW-Authenticate; 403 on a non-/whl/ path
                             is an authentication error for a client, unlike download.pytorch.org)
  /hang/P                    reads the request, never answers
  /stall/P                   sends the headers and 64 bytes of the body, then nothing
  /truncated/P               Content-Length of the whole body, sends half, closes the connection
  /wrong-hash/P              pages whose file sha256 (#sha256= / "hashes") do not match the files
  /wrong-metadata-hash/P     pages whose core-metadata sha256 does not match the .metadata files
  /invalid-json/P            200 with Content-Type application/vnd.pypi.simple.v1+json and broken JSON
  /bad-api-version/P         the page with api-version / repository-version 2.0 (major too new)
  /redirect/P                301 to /ok/P
  /redirect-loop/P           302 to /redirect-loop2/P, which 302s back (a loop)
  /auth/P                    401 unless Basic credentials fixture:s3cret are sent
  /no-range/P                as /ok/ but ignores Range (always 200 with the whole file)
  /max-age<N>/P              as /ok/, every answer (404 included) with Cache-Control: max-age=N
  /barrier<N>/P              holds each request until N of them wait at once (then serves them
                             as /ok/, and every later one at once); 504 after 10 s without N:
                             proof that a client keeps N transfers in flight
  /_counts                   JSON {url: requests seen}; /_reset clears the counters
Relative links in a page resolve under the same mode, so /wrong-hash/simple/x/ links to
/wrong-hash/packages/... which serves the real (mismatching) file.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
STOP = threading.Event()


def negotiate(accept: str | None) -> str:
    """'json' or 'html' (PEP 691 server-driven negotiation, q-values honoured)."""
    best_json = best_html = 0.0
    for part in (accept or "").split(","):
        fields = [x.strip() for x in part.split(";")]
        mtype = fields[0].lower()
        q = 1.0
        for p in fields[1:]:
            if p.lower().startswith("q="):
                try:
                    q = float(p[2:])
                except ValueError:
                    q = 0.0
        if mtype in ("application/vnd.pypi.simple.v1+json", "application/vnd.pypi.simple.latest+json"):
            best_json = max(best_json, q)
        elif mtype in ("text/html", "application/vnd.pypi.simple.v1+html",
                       "application/vnd.pypi.simple.latest+html", "*/*"):
            best_html = max(best_html, q)
    return "json" if best_json > 0 and best_json >= best_html else "html"


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    request_queue_size = 128   # many connections at once (barrier<N>)

    def __init__(self, addr, root: Path, log_path: Path):
        super().__init__(addr, Handler)
        self.barrier = threading.Condition()
        self.barrier_waiting: dict[int, int] = {}
        self.barrier_open: set[int] = set()
        self.root = root.resolve()
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()
        self.log = open(log_path, "a", buffering=1)

    def count(self, key: str) -> int:
        with self.lock:
            n = self.counts.get(key, 0) + 1
            self.counts[key] = n
            return n


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "gpulock-fault/1"
    sys_version = ""

    def log_message(self, fmt, *args):   # one line per request, in fault.log
        pass

    def log_request(self, code="-", size="-"):
        headers = getattr(self, "headers", None)
        agent = (headers.get("User-Agent") or "-") if headers else "-"
        self.server.log.write(f"{time.time():.3f}\t{self.command}\t{self.path}\t{code}\t"
                              f"{self.client_address[1]}\t{agent}\n")

    # -- helpers ------------------------------------------------------------------------------
    def send_body(self, status: int, body: bytes, ctype: str = "text/plain", headers=None,
                  length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def resolve(self, rel: str):
        """(bytes, content type) of the tree path, or None."""
        rel = unquote(rel)
        path = (self.server.root / rel.lstrip("/")).resolve()
        if path != self.server.root and self.server.root not in path.parents:
            return None
        if path.is_dir():
            which = negotiate(self.headers.get("Accept"))
            j, h = path / "index.json", path / "index.html"
            if which == "json" and j.is_file():
                return j.read_bytes(), JSON_TYPE
            if h.is_file():
                return h.read_bytes(), "text/html"
            return None
        if path.is_file():
            ctype = JSON_TYPE if path.suffix == ".json" else "text/html" if path.suffix == ".html" \
                else "application/octet-stream"
            return path.read_bytes(), ctype
        return None

    def serve(self, rel: str, ranges: bool = True, transform=None, extra=None) -> None:
        extra = extra or {}
        if rel.endswith("/") is False and (self.server.root / unquote(rel).lstrip("/")).is_dir():
            self.send_body(301, b"", headers={"Location": self.path + "/", **extra})
            return
        got = self.resolve(rel)
        if got is None:
            status = 403 if rel.lstrip("/").startswith("whl/") else 404
            self.send_body(status, f"{status} not found: {rel}\n".encode(), headers=extra)
            return
        body, ctype = got
        if transform is not None and ctype != "application/octet-stream":
            body = transform(body)
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        headers = {"ETag": etag, "Accept-Ranges": "bytes" if ranges else "none", "Vary": "Accept",
                   **extra}
        if self.headers.get("If-None-Match") == etag:
            self.send_response(304)
            self.send_header("ETag", etag)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        rng = self.headers.get("Range") if ranges else None
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", rng or "")
        if m and (m.group(1) or m.group(2)):
            size = len(body)
            if m.group(1):
                start = int(m.group(1))
                end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
            else:
                start = max(0, size - int(m.group(2)))
                end = size - 1
            if start >= size or start > end:
                self.send_body(416, b"", headers={"Content-Range": f"bytes */{size}"})
                return
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
            self.send_body(206, body[start:end + 1], ctype, headers)
            return
        self.send_body(200, body, ctype, headers)

    def wait_barrier(self, n: int) -> bool:
        """True once n requests of /barrier<n>/ have waited here at the same time."""
        srv = self.server
        with srv.barrier:
            if n in srv.barrier_open:
                return True
            srv.barrier_waiting[n] = srv.barrier_waiting.get(n, 0) + 1
            if srv.barrier_waiting[n] >= n:
                srv.barrier_open.add(n)
                srv.barrier.notify_all()
                return True
            if srv.barrier.wait_for(lambda: n in srv.barrier_open, timeout=10):
                return True
            srv.barrier_waiting[n] -= 1
            return False

    # -- dispatch -------------------------------------------------------------------------------
    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        path = urlsplit(self.path).path
        parts = path.lstrip("/").split("/", 1)
        mode, rest = parts[0], "/" + (parts[1] if len(parts) > 1 else "")
        try:
            self.dispatch(mode, rest, path)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def dispatch(self, mode: str, rest: str, path: str) -> None:
        if mode == "_counts":
            with self.server.lock:
                body = json.dumps(self.server.counts, sort_keys=True).encode()
            self.send_body(200, body, "application/json")
            return
        if mode == "_reset":
            with self.server.lock:
                self.server.counts.clear()
            self.send_body(200, b"reset\n")
            return
        n = self.server.count(self.path)   # per URL, query included: ?t=<unique> starts at 0
        if mode == "ok":
            self.serve(rest)
            return
        m = re.fullmatch(r"max-age(\d+)", mode)
        if m:
            self.serve(rest, extra={"Cache-Control": f"max-age={m.group(1)}"})
            return
        m = re.fullmatch(r"barrier(\d+)", mode)
        if m:
            if self.wait_barrier(int(m.group(1))):
                self.serve(rest)
            else:
                self.send_body(504, f"barrier: fewer than {m.group(1)} requests in flight at once\n"
                               .encode())
            return
        m = re.fullmatch(r"(\d{3})(?:x(\d+))?-then-200", mode)
        if m:
            code, times = int(m.group(1)), int(m.group(2) or 1)
            if n <= times:
                hdr = {"Retry-After": "0"} if code in (429, 503) else {}
                self.send_body(code, f"{code} (failure {n} of {times})\n".encode(), headers=hdr)
            else:
                self.serve(rest)
            return
        if mode == "status":
            seg = rest.lstrip("/").split("/", 1)
            code = int(seg[0]) if seg[0].isdigit() else 500
            hdr = {"WWW-Authenticate": 'Basic realm="fixture"'} if code == 401 else {}
            self.send_body(code, f"{code} fixture status\n".encode(), headers=hdr)
            return
        if mode == "hang":
            STOP.wait(600)
            self.close_connection = True
            return
        if mode in ("stall", "truncated"):
            got = self.resolve(rest)
            body = got[0] if got else b"x" * 4096
            self.send_response(200)
            self.send_header("Content-Type", got[1] if got else "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if mode == "stall":
                self.wfile.write(body[:64])
                self.wfile.flush()
                STOP.wait(600)
            else:
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
            self.close_connection = True
            return
        if mode == "wrong-hash":
            def wrong(b: bytes) -> bytes:
                b = re.sub(rb"#sha256=([0-9a-f]{64})", lambda m: b"#sha256=" + hashlib.sha256(m.group(1)).hexdigest().encode(), b)
                return re.sub(rb'("hashes":\{"sha256":")([0-9a-f]{64})', lambda m: m.group(1) + hashlib.sha256(m.group(2)).hexdigest().encode(), b)
            self.serve(rest, transform=wrong)
            return
        if mode == "wrong-metadata-hash":
            def wrongm(b: bytes) -> bytes:
                b = re.sub(rb'(data-(?:core|dist-info)-metadata="sha256=)([0-9a-f]{64})', lambda m: m.group(1) + hashlib.sha256(m.group(2)).hexdigest().encode(), b)
                return re.sub(rb'("(?:core|dist-info)-metadata":\{"sha256":")([0-9a-f]{64})', lambda m: m.group(1) + hashlib.sha256(m.group(2)).hexdigest().encode(), b)
            self.serve(rest, transform=wrongm)
            return
        if mode == "invalid-json":
            body = b'{"meta": {"api-version": "1.1"}, "name": "torch", "files": [{"filename": "torch-2.5.1-cp311'
            self.send_body(200, body, "application/vnd.pypi.simple.v1+json")
            return
        if mode == "bad-api-version":
            def bump(b: bytes) -> bytes:
                b = b.replace(b'"api-version":"1.1"', b'"api-version":"2.0"')
                return b.replace(b'content="1.1"', b'content="2.0"')
            self.serve(rest, transform=bump)
            return
        if mode == "redirect":
            self.send_body(301, b"", headers={"Location": "/ok" + rest})
            return
        if mode in ("redirect-loop", "redirect-loop2"):
            other = "redirect-loop2" if mode == "redirect-loop" else "redirect-loop"
            self.send_body(302, b"", headers={"Location": f"/{other}{rest}"})
            return
        if mode == "auth":
            want = "Basic " + base64.b64encode(b"fixture:s3cret").decode()
            if self.headers.get("Authorization") != want:
                self.send_body(401, b"401 credentials required\n",
                               headers={"WWW-Authenticate": 'Basic realm="fixture"'})
                return
            self.serve(rest)
            return
        if mode == "no-range":
            self.serve(rest, ranges=False)
            return
        self.send_body(404, f"unknown fault mode {mode!r}\n".encode())


def main() -> int:
    ap = argparse.ArgumentParser(description="gpulock fixture fault server")
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--state", type=Path, required=True)
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    srv = Server(("127.0.0.1", args.port), args.root, args.state / "fault.log")
    port = srv.server_address[1]
    tmp = args.state / f".fault.port.{os.getpid()}"
    tmp.write_text(f"{port}\n")
    os.replace(tmp, args.state / "fault.port")
    try:
        srv.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        STOP.set()
    return 0


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGTERM, lambda *_: (STOP.set(), os._exit(0)))
    sys.exit(main())
