#!/usr/bin/env python3
"""gpulock's attack suite (issue 17): hostile package indexes on loopback, one test per item.

    attack.py ITEM --gpulock EXE --work DIR

Each ITEM starts its own small HTTP(S) servers on 127.0.0.1 (Python standard library only),
serving wheels built here in memory and pages written to attack gpulock; it then runs the real
gpulock binary and asserts the safe outcome: no poisoned lock, no credential on the wire to the
wrong origin or anywhere on disk, no local file read, no escape byte in the output, the exit
status the README documents. Exit 0 when every check holds; else every failed check is printed.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import shutil
import ssl
import subprocess
import sys
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import hint_log  # noqa: E402  (tests/support/hint_log.py: hints for ctest hints_run)

FAILURES: list[str] = []
SECRET = "s3cr3tT0ken"


def check(cond: bool, what: str) -> None:
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


# ---- wheels ------------------------------------------------------------------------------------

def make_wheel(name: str, version: str, requires=(), meta_name=None, meta_version=None,
               tag="py3-none-any") -> tuple[str, bytes, str]:
    """(filename, bytes, METADATA text) of a minimal wheel."""
    dist = f"{name.replace('-', '_')}-{version}"
    filename = f"{dist}-{tag}.whl"
    meta = f"Metadata-Version: 2.1\nName: {meta_name or name}\nVersion: {meta_version or version}\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(f"{name.replace('-', '_')}/__init__.py", "")
        z.writestr(f"{dist}.dist-info/METADATA", meta)
        z.writestr(f"{dist}.dist-info/WHEEL",
                   f"Wheel-Version: 1.0\nGenerator: attack\nRoot-Is-Purelib: true\nTag: {tag}\n")
        z.writestr(f"{dist}.dist-info/RECORD", "")
    return filename, buf.getvalue(), meta


def sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def page(links: list[str]) -> bytes:
    return ("<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n").encode()


def link(href: str, text: str, metadata_sha: str | None = None, extra: str = "") -> str:
    attrs = f' data-core-metadata="sha256={metadata_sha}"' if metadata_sha else ""
    return f'<a href="{href}"{attrs}{extra}>{text}</a>'


# ---- servers -----------------------------------------------------------------------------------

class Hostile:
    """One loopback server: `routes[path]` is (status, headers, body) or a callable
    (handler) -> (status, headers, body). Every request is logged as (path, headers)."""

    def __init__(self, tls: tuple[str, str] | None = None):
        self.routes: dict = {}
        self.log: list[tuple[str, dict]] = []
        self.ranges = False
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                path = self.path.split("?")[0]
                outer.log.append((path, {k.lower(): v for k, v in self.headers.items()}))
                route = outer.routes.get(path)
                if route is None:
                    status, headers, body = 404, {"Content-Type": "text/plain"}, b"not found"
                elif callable(route):
                    status, headers, body = route(self)
                else:
                    status, headers, body = route
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.scheme = "http"
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def file(self, path: str, body: bytes) -> None:
        self.routes[path] = (200, {"Content-Type": "application/octet-stream"}, body)

    def html(self, path: str, body: bytes) -> None:
        self.routes[path] = (200, {"Content-Type": "text/html"}, body)

    def serve_wheel(self, project: str, wheel: tuple[str, bytes, str], pep658: bool = True,
                    claimed_sha: str | None = None, extra_links=()) -> str:
        """A project page /simple/PROJECT/ listing the wheel (at /files/NAME) with its sha256
        (or `claimed_sha`), and its .metadata file when `pep658`. Returns the wheel's URL."""
        filename, data, meta = wheel
        self.file(f"/files/{filename}", data)
        if pep658:
            self.file(f"/files/{filename}.metadata", meta.encode())
        href = f"/files/{filename}#sha256={claimed_sha or sha(data)}"
        self.html(f"/simple/{project}/",
                  page([link(href, filename, sha(meta) if pep658 else None), *extra_links]))
        return f"{self.url}/files/{filename}"

    def saw(self, needle: str) -> list[str]:
        """Requests whose path or headers contain `needle`."""
        return [p for p, h in self.log if needle in p or any(needle in v for v in h.values())]

    def auth_seen(self) -> list[str]:
        return [f"{p} {h['authorization']}" for p, h in self.log if "authorization" in h]

    def close(self) -> None:
        self.server.shutdown()


def self_signed_cert(work: Path) -> tuple[str, str]:
    cert, key = work / "cert.pem", work / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                    "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return str(cert), str(key)


# ---- gpulock -----------------------------------------------------------------------------------

class Gpulock:
    def __init__(self, exe: str, work: Path):
        self.exe, self.work = exe, work
        self.root = work / "empty-root"
        (self.root / "bin").mkdir(parents=True, exist_ok=True)
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work),
                    "NO_COLOR": "1", "GPULOCK_TEST_ROOT": str(self.root),
                    "GPULOCK_PROBE_TIMEOUT_MS": "2000", "GPULOCK_HTTP_RETRIES": "0",
                    "NETRC": str(work / "no-netrc")}

    def run(self, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        e = dict(self.env)
        e.update(env or {})
        p = subprocess.run([self.exe, *args], env=e, cwd=self.work, capture_output=True,
                           timeout=120)
        p.out = p.stdout.decode(errors="replace")
        p.err = p.stderr.decode(errors="replace")
        hint_log.keep([self.exe, *args], e, self.work, p.returncode, p.out, p.err)
        print(f"$ gpulock {' '.join(args)}\n  -> {p.returncode}\n" +
              "".join(f"  | {line}\n" for line in (p.out + p.err).splitlines()[:40]))
        return p

    def resolve(self, cache: Path, *args: str, out: str = "-", env=None):
        driver = [] if "--driver" in args else ["--driver", "none"]
        return self.run("resolve", *args, "--python-version", "3.11", "--platform",
                        "manylinux_2_28_x86_64", *driver, "--cache-dir", str(cache),
                        "-o", out, env=env)


def tree_contains(root: Path, needle: bytes) -> list[str]:
    """Files under `root` whose name or content contains `needle`."""
    hits = []
    if not root.exists():
        return hits
    for p in root.rglob("*"):
        if needle.decode() in p.name:
            hits.append(str(p))
        elif p.is_file() and needle in p.read_bytes():
            hits.append(str(p))
    return hits


# ---- the attacks -------------------------------------------------------------------------------

def attack_metadata(g: Gpulock, work: Path) -> None:
    """Item 1: METADATA is used only for the wheel it came from."""
    honest, hostile = Hostile(), Hostile()
    alpha = make_wheel("alpha", "1.0")
    honest.serve_wheel("alpha", alpha)
    honest.serve_wheel("evil", make_wheel("evil", "1.0"))
    # The hostile index claims the honest alpha wheel's sha256 for its own alpha, whose
    # METADATA pulls in `evil`: a cache keyed by the claimed hash would hand it to the honest one.
    poisoned = make_wheel("alpha", "1.0", requires=["evil"])
    hostile.serve_wheel("alpha", poisoned, claimed_sha=sha(alpha[1]))
    hostile.serve_wheel("evil", make_wheel("evil", "1.0"))
    cache = work / "cache"
    g.resolve(cache, "alpha", "--index-url", f"{hostile.url}/simple/")
    r = g.resolve(cache, "alpha", "--index-url", f"{honest.url}/simple/")
    check(r.returncode == 0, "the honest resolve of alpha succeeds after a hostile index's run")
    check('name = "evil"' not in r.out,
          "another index's METADATA with the same claimed sha256 never reaches alpha's lock")

    # A .metadata file naming another project (or version) than its wheel: unusable, named.
    liar = Hostile()
    liar.serve_wheel("beta", make_wheel("beta", "1.0", meta_name="alpha", requires=["evil"]))
    liar.serve_wheel("evil", make_wheel("evil", "1.0"))
    r = g.resolve(work / "cache2", "beta", "--index-url", f"{liar.url}/simple/")
    check(r.returncode != 0 and 'name = "evil"' not in r.out,
          "METADATA naming another project than the wheel file is refused")
    check("beta-1.0-py3-none-any.whl" in r.err, "the refusal names the wheel")

    # A .metadata file that does not have the hash the page gives for it.
    forged = Hostile()
    gamma = make_wheel("gamma", "1.0")
    forged.serve_wheel("gamma", gamma)
    forged.file(f"/files/{gamma[0]}.metadata", b"Metadata-Version: 2.1\nName: gamma\n"
                b"Version: 1.0\nRequires-Dist: evil\n")
    forged.serve_wheel("evil", make_wheel("evil", "1.0"))
    r = g.resolve(work / "cache3", "gamma", "--index-url", f"{forged.url}/simple/")
    check('name = "evil"' not in r.out, "a .metadata file failing its page hash is not used")

    # A full download (no .metadata, no range support) whose sha256 differs from the page.
    swapped = Hostile()
    delta_real = make_wheel("delta", "1.0")
    delta_fake = make_wheel("delta", "1.0", requires=["evil"])
    swapped.serve_wheel("delta", delta_fake, pep658=False, claimed_sha=sha(delta_real[1]))
    swapped.serve_wheel("evil", make_wheel("evil", "1.0"))
    r = g.resolve(work / "cache4", "delta", "--index-url", f"{swapped.url}/simple/")
    check('name = "evil"' not in r.out, "a downloaded wheel is hash-checked before its METADATA is used")

    # The local-label exception: flash-attn's METADATA says 2.8.3 for a 2.8.3+cu12... file name.
    labels = Hostile()
    flash = make_wheel("flashy", "2.8.3+cu12torch2.8", meta_version="2.8.3")
    labels.serve_wheel("flashy", flash)
    r = g.resolve(work / "cache5", "flashy", "--index-url", f"{labels.url}/simple/")
    check(r.returncode == 0 and 'version = "2.8.3+cu12torch2.8"' in r.out,
          "METADATA's public version with a local label only in the file name is accepted, "
          "and the lock records the file name's version")


def attack_credentials(g: Gpulock, work: Path) -> None:
    """Item 3: credentials only from the user, only to their origin, never written."""
    index, files, other = Hostile(), Hostile(), Hostile()
    # The user's index (with a token) lists a wheel on another origin (another port), a wheel on
    # its own origin that redirects to the other origin, and a wheel whose href carries
    # credentials of its own for a third server, which also serves as a second index.
    a = make_wheel("alpha", "1.0", requires=["beta", "gamma"])
    b = make_wheel("beta", "1.0")
    c = make_wheel("gamma", "1.0", requires=["delta"])
    d = make_wheel("delta", "1.0")
    files.file(f"/files/{a[0]}", a[1])
    files.file(f"/files/{a[0]}.metadata", a[2].encode())
    index.html("/simple/alpha/", page([link(f"{files.url}/files/{a[0]}#sha256={sha(a[1])}", a[0], sha(a[2]))]))
    index.routes[f"/files/{b[0]}"] = (302, {"Location": f"{files.url}/files/{b[0]}"}, b"")
    index.routes[f"/files/{b[0]}.metadata"] = (302, {"Location": f"{files.url}/files/{b[0]}.metadata"}, b"")
    files.file(f"/files/{b[0]}", b[1])
    files.file(f"/files/{b[0]}.metadata", b[2].encode())
    index.html("/simple/beta/", page([link(f"/files/{b[0]}#sha256={sha(b[1])}", b[0], sha(b[2]))]))
    other_auth = other.url.replace("://", "://intruder:stolen@")
    other.file(f"/files/{c[0]}", c[1])
    other.file(f"/files/{c[0]}.metadata", c[2].encode())
    index.html("/simple/gamma/", page([link(f"{other_auth}/files/{c[0]}#sha256={sha(c[1])}", c[0], sha(c[2]))]))
    other.serve_wheel("delta", d)
    cache = work / "cache"
    report = work / "report.json"
    user_index = f"http://__token__:{SECRET}@127.0.0.1:{index.port}/simple/"
    args = ["--index-url", user_index, "--extra-index-url", f"{other.url}/simple/"]
    r = g.resolve(cache, "alpha", *args, "--explain", "--report", str(report), out="pylock.toml")
    check(r.returncode == 0, "the resolve succeeds")
    sent = [base64.b64decode(h["authorization"].split()[-1]).decode() for _, h in index.log
            if "authorization" in h]
    check(any(SECRET in s for s in sent), "the user's token is sent to its own index (sanity)")
    check(not files.auth_seen(), f"no credentials reach another origin, directly or after a "
          f"redirect (seen: {files.auth_seen()})")
    check(not other.auth_seen(), f"a page's href credentials are never sent anywhere "
          f"(seen: {other.auth_seen()})")
    check(SECRET not in r.out + r.err, "the token is not in the output or --explain")
    check("stolen" not in r.out + r.err, "a page's href password is not in the output")
    on_disk = tree_contains(work, SECRET.encode()) + tree_contains(work, b"stolen")
    check(not on_disk, f"no credential in the lock, the report or the cache (found in {on_disk})")
    r = g.run("check", "--inputs", "alpha", "--lock", "pylock.toml", *args, "--cache-dir", str(cache))
    check(r.returncode == 0 and "not the ones the lock was resolved from" not in r.out + r.err,
          "check --inputs with the same credentials reports no drift")
    # A direct-URL requirement's password is not written to [tool.gpulock.inputs].
    r = g.resolve(cache, f"alpha @ http://u:{SECRET}@127.0.0.1:{files.port}/files/{a[0]}",
                  "beta", *args, out="pylock2.toml")
    text = (work / "pylock2.toml").read_text() if (work / "pylock2.toml").exists() else ""
    check(SECRET not in text + r.out + r.err, "a requirement URL's password is never written")


def attack_local_files(g: Gpulock, work: Path) -> None:
    """Item 4: remote pages cannot reach local files; no https->http; escaped control bytes."""
    local = make_wheel("alpha", "1.0", requires=["localsecret"])
    secret_path = work / "private" / local[0]
    secret_path.parent.mkdir(exist_ok=True)
    secret_path.write_bytes(local[1])
    remote = Hostile()
    remote.html("/simple/alpha/", page([link(f"file://{secret_path}", local[0])]))
    r = g.resolve(work / "cache", "alpha", "--index-url", f"{remote.url}/simple/")
    check(r.returncode == 4, f"a file:// href on a remote page is refused with exit 4 (got {r.returncode})")
    check(f"{remote.url}/simple/alpha/" in r.err, "the error names the page")
    check("localsecret" not in r.out + r.err, "the local wheel was not read")

    # https -> http redirect.
    cert, key = self_signed_cert(work)
    plain = Hostile()
    plain.serve_wheel("beta", make_wheel("beta", "1.0"))
    tls = Hostile(tls=(cert, key))
    tls.routes["/simple/beta/"] = (302, {"Location": f"{plain.url}/simple/beta/"}, b"")
    env = {"SSL_CERT_FILE": cert}
    r = g.resolve(work / "cache2", "beta", "--index-url", f"{tls.url}/simple/", env=env)
    check(r.returncode == 4, f"an https->http redirect exits 4 (got {r.returncode})")
    check(f"{tls.url}/simple/beta/" in r.err and f"{plain.url}/simple/beta/" in r.err,
          "the error names both URLs")
    check(not plain.saw("/simple/beta/"), "nothing was fetched over http")
    r = g.resolve(work / "cache3", "beta", "--index-url", f"{tls.url}/simple/",
                  "--allow-insecure-host", "127.0.0.1", env=env)
    check(r.returncode == 0, "--allow-insecure-host HOST allows it")

    # Control characters from index text: a yanked reason, an error body, a file name.
    esc = Hostile()
    gw = make_wheel("gamma", "1.0")
    esc.serve_wheel("gamma", gw, extra_links=[])
    esc.html("/simple/gamma/", page([link(f"/files/{gw[0]}#sha256={sha(gw[1])}", gw[0], sha(gw[2]),
                                          ' data-yanked="evil\x1b]0;pwned\x07\x1b[2J reason"'),
                                     link("/files/gamma-\x1b[2J.tar.gz", "gamma-\x1b[2J.tar.gz")]))
    esc.routes["/simple/broken/"] = (500, {"Content-Type": "text/plain"}, b"\x1b[31mboom\x1b[0m")
    r = g.resolve(work / "cache4", "gamma==1.0", "--index-url", f"{esc.url}/simple/", "--explain",
                  "--report", str(work / "r.json"))
    raw = r.stdout + r.stderr + ((work / "r.json").read_bytes() if (work / "r.json").exists() else b"")
    check(b"\x1b" not in raw and b"\x07" not in raw,
          "no escape byte from a yanked reason or a file name in output or --json")
    for fmt in ([], ["--json"]):
        r = g.run("index", "show", "gamma", "--index-url", f"{esc.url}/simple/", "--cache-dir",
                  str(work / "cache4"), *fmt)
        check(r.returncode == 0 and b"\x1b" not in r.stdout + r.stderr and b"\x07" not in r.stdout + r.stderr,
              f"no escape byte in `gpulock index show {' '.join(fmt)}` (yanked reason, file name)")
    r = g.resolve(work / "cache5", "broken", "--index-url", f"{esc.url}/simple/")
    check(b"\x1b" not in r.stdout + r.stderr, "no escape byte from an error body")
    r = g.resolve(work / "cache6", "gamma==1.0", "--index-url", f"{esc.url}/simple/",
                  out=str(work / "pylock.toml"))
    r = g.run("check", "--lock", str(work / "pylock.toml"), "--index", "--format", "github",
              "--cache-dir", str(work / "cache6"))
    check(b"\x1b" not in r.stdout + r.stderr and b"\x07" not in r.stdout + r.stderr,
          "no escape byte in GitHub annotations")


def attack_hash_exit(g: Gpulock, work: Path) -> None:
    """Item 6: a hash mismatch exits 4, at resolve (download vs page) and install (vs lock)."""
    srv = Hostile()
    real = make_wheel("alpha", "1.0")
    other = make_wheel("alpha", "1.0", requires=["six"])
    srv.serve_wheel("alpha", other, pep658=False, claimed_sha=sha(real[1]))
    r = g.resolve(work / "cache", "alpha", "--index-url", f"{srv.url}/simple/")
    check(r.returncode == 4, f"a downloaded wheel not matching the page's sha256 exits 4 (got {r.returncode})")
    check("hash mismatch" in r.err, "the error says hash mismatch")
    # Install: the lock has the real wheel's hash; the server now serves another file.
    srv2 = Hostile()
    srv2.serve_wheel("beta", make_wheel("beta", "1.0"))
    r = g.resolve(work / "cache2", "beta", "--index-url", f"{srv2.url}/simple/", out="pylock.toml")
    check(r.returncode == 0, "the lock is written")
    srv2.file("/files/beta-1.0-py3-none-any.whl", make_wheel("beta", "1.0", requires=["six"])[1])
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)],
                   check=True)
    r = g.run("install", "--lock", "pylock.toml", "--python", str(venv / "bin" / "python"), "--no-probe")
    check(r.returncode == 4, f"install of a file not matching the lock's hash exits 4 (got {r.returncode})")


def attack_dependency_confusion(g: Gpulock, work: Path) -> None:
    """Item 2: a name the torch source serves comes only from there, for any name."""
    for backend, label, extra in (("cpu", "cpu", ["--driver", "none"]),
                                  ("cu124", "cu124", ["--driver", "550.54.14"]),
                                  ("nightly", "cpu", ["--driver", "none", "--nightly", "latest"])):
        torch_srv, hostile = Hostile(), Hostile()
        prefix = "/whl/nightly/cpu" if backend == "nightly" else f"/whl/{backend}"
        version = "2.6.0.dev20250101" if backend == "nightly" else "2.5.0"
        # Names gpulock has never heard of, served by the torch source: only from there.
        torch_w = make_wheel("torch", f"{version}+{label}", requires=["torchtriton", "zq-never-heard"])
        for name, w in (("torch", torch_w), ("torchtriton", make_wheel("torchtriton", "1.0")),
                        ("zq-never-heard", make_wheel("zq-never-heard", "1.0", requires=["plainpkg"]))):
            filename, data, meta = w
            torch_srv.file(f"/files/{filename}", data)
            torch_srv.file(f"/files/{filename}.metadata", meta.encode())
            torch_srv.html(f"{prefix}/{name}/", page([link(f"/files/{filename}#sha256={sha(data)}",
                                                           filename, sha(meta))]))
        for name in ("torchtriton", "zq-never-heard"):
            hostile.serve_wheel(name, make_wheel(name, "99.0", requires=["evil"]))
        hostile.serve_wheel("evil", make_wheel("evil", "1.0"))
        hostile.serve_wheel("plainpkg", make_wheel("plainpkg", "2.0"))
        # cu124 has a root listing (as download.pytorch.org does): the names it serves are
        # learned from it, so plainpkg is never asked of it. The others are asked per name.
        listed = backend == "cu124"
        if listed:
            torch_srv.html(f"{prefix}/", page([f'<a href="{n}/">{n}</a>'
                                               for n in ("torch", "TorchTriton", "zq_never_heard")]))
        backend_flag = [] if backend == "nightly" else ["--torch-backend", backend]
        r = g.resolve(work / f"cache-{backend}", "torch", *backend_flag, *extra,
                      "--torch-index-base", f"{torch_srv.url}/whl", "--index-url", f"{hostile.url}/simple/")
        check(r.returncode == 0, f"[{backend}] the resolve succeeds")
        check('name = "evil"' not in r.out and "99.0" not in r.out,
              f"[{backend}] no name the torch source serves comes from --index-url")
        check('name = "plainpkg"' in r.out, f"[{backend}] a name the torch source lacks comes from "
              "the next index")
        asked = [p for p, _ in torch_srv.log if p.rstrip("/").endswith("/plainpkg")]
        if listed:
            check(not asked, f"[{backend}] with a root listing, the torch source is not asked for a "
                  f"name it does not list (asked: {asked})")
        else:
            check(bool(asked), f"[{backend}] without a root listing, the torch source is asked per name")


def attack_direct_reference(g: Gpulock, work: Path) -> None:
    """Item 5: `name @ URL` comes from that URL only, its hash recorded, as a PEP 751 archive."""
    trusted, hostile = Hostile(), Hostile()
    filename, data, _ = make_wheel("alpha", "1.0", requires=["beta"])
    trusted.file(f"/files/{filename}", data)
    # The index offers a newer alpha that pulls in `evil`: a direct reference never looks there.
    hostile.serve_wheel("alpha", make_wheel("alpha", "9.0", requires=["evil"]))
    hostile.serve_wheel("evil", make_wheel("evil", "1.0"))
    hostile.serve_wheel("beta", make_wheel("beta", "2.0"))
    index = ["--index-url", f"{hostile.url}/simple/"]
    url = f"{trusted.url}/files/{filename}"

    def archive_of(lock: str) -> str:
        at = lock.find('name = "alpha"')
        return lock[at:lock.find("[[packages]]", at + 1) if "[[packages]]" in lock[at + 1:] else len(lock)]

    for label, ref in (("with #sha256", f"{url}#sha256={sha(data)}"), ("without a hash", url)):
        r = g.resolve(work / f"cache-{label[:4]}", f"alpha @ {ref}", *index)
        alpha = archive_of(r.out)
        check(r.returncode == 0, f"[{label}] the resolve succeeds")
        check('version = "1.0"' in alpha and "9.0" not in r.out and 'name = "evil"' not in r.out,
              f"[{label}] alpha is the referenced wheel, never the index's")
        check(f'archive = {{ url = "{url}"' in alpha or f'url = "{url}"' in alpha,
              f"[{label}] the lock holds it as a PEP 751 archive with its URL")
        check(sha(data) in alpha, f"[{label}] its sha256 is recorded")
        check("index = " not in alpha, f"[{label}] it names no index")
        check('name = "beta"' in r.out, f"[{label}] its dependencies come from the index")

    # A local wheel.
    local = work / filename
    local.write_bytes(data)
    r = g.resolve(work / "cache-file", f"alpha @ {local.as_uri()}", *index)
    check(r.returncode == 0 and sha(data) in archive_of(r.out) and local.as_uri() in r.out,
          "a file:// wheel is locked with its hash")

    # A conflict with another requirement is explained.
    r = g.resolve(work / "cache-conflict", f"alpha @ {url}", "alpha>=2", *index)
    check(r.returncode == 1 and "alpha" in r.err and "no solution" in r.err,
          f"a conflicting requirement is an explained conflict (exit 1; got {r.returncode})")

    # Two different URLs for one name cannot both be honoured.
    r = g.resolve(work / "cache-two", f"alpha @ {url}", f"alpha @ {local.as_uri()}", *index)
    check(r.returncode == 2 and "alpha has two direct references" in r.err,
          f"two direct references for one name are a usage error (exit 2; got {r.returncode})")

    # Credentials in the URL are used to fetch it and never written.
    r = g.resolve(work / "cache-cred", f"alpha @ http://user:{SECRET}@127.0.0.1:{trusted.port}/files/{filename}",
                  *index, out=str(work / "cred.toml"))
    check(r.returncode == 0, "a URL with credentials resolves")
    lock = (work / "cred.toml").read_text() if (work / "cred.toml").exists() else ""
    check(SECRET not in lock and SECRET not in r.out + r.err, "the secret is in neither the lock nor the output")
    check(f"http://127.0.0.1:{trusted.port}/files/{filename}" in lock, "the lock has the URL without credentials")
    check(not tree_contains(work / "cache-cred", SECRET.encode()), "the secret is not in the cache")


def attack_requires_flood(g: Gpulock, work: Path) -> None:
    """Issue 40: one METADATA with 200,000 Requires-Dist fields (distinct names) is refused as
    invalid (the count named); no page is fetched for its requirements, speculatively or not."""
    flood = [f"dep-{i}" for i in range(200_000)]
    for case, versions in (("alone", ["2.0"]), ("older", ["2.0", "1.0"])):
        server = Hostile()
        wheels = [make_wheel("flood", v, requires=flood if v == "2.0" else ()) for v in versions]
        for w in wheels:
            server.file(f"/files/{w[0]}", w[1])
            server.file(f"/files/{w[0]}.metadata", w[2].encode())
        server.html("/simple/flood/", page([link(f"/files/{w[0]}#sha256={sha(w[1])}", w[0],
                                                 sha(w[2])) for w in wheels]))
        start = time.monotonic()
        # A deadline under the subprocess's timeout: a gpulock that fetches every page ends too.
        r = g.resolve(work / f"cache-{case}", "flood", "--index-url", f"{server.url}/simple/",
                      env={"GPULOCK_HTTP_DEADLINE": "40"})
        took = time.monotonic() - start
        requests = len(server.log)
        print(f"  {case}: {took:.1f} s, {requests} requests")
        check(took < 20, f"{case}: the resolve ends within 20 s ({took:.1f} s)")
        check(requests < 50, f"{case}: few requests ({requests})")
        check(not server.saw("/simple/dep-"), f"{case}: no page of a flooded requirement is fetched")
        if case == "alone":
            check(r.returncode in (1, 3), f"{case}: exit 1 or 3 ({r.returncode})")
            check("200000 Requires-Dist fields" in r.err and "over the limit of 10000" in r.err,
                  f"{case}: the message names the count and the limit")
            check("flood-2.0-py3-none-any.whl" in r.err, f"{case}: the message names the file")
        else:
            check(r.returncode == 0 and 'version = "1.0"' in r.out,
                  f"{case}: the older release without the flood is locked")
        server.close()


ATTACKS = {
    "direct-reference": attack_direct_reference,
    "dependency-confusion": attack_dependency_confusion,
    "metadata": attack_metadata,
    "credentials": attack_credentials,
    "local-files": attack_local_files,
    "hash-exit": attack_hash_exit,
    "requires-flood": attack_requires_flood,
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("item", choices=sorted(ATTACKS))
    ap.add_argument("--gpulock", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    work = Path(a.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    ATTACKS[a.item](Gpulock(a.gpulock, work), work)
    if FAILURES:
        print(f"\n{len(FAILURES)} check(s) failed:\n" + "\n".join(f"  - {f}" for f in FAILURES))
        return 1
    print("\nall checks hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
