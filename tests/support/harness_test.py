#!/usr/bin/env python3
"""Checks of the fixture index and the test servers (ctest label `fixtures`).

    harness_test.py CHECK --env servers.env          (negotiation tls status range faults
                                                      find_links pip private)
    harness_test.py generator --index DIR --data fixtures/data   (needs `packaging`)

Each check exits non-zero with a message on the first failure. HTTP checks use the real curl
binary and, for pip, the `python3` first on PATH (which has pip), offline against loopback.
"""

from __future__ import annotations

import argparse
import hashlib
import html.parser
import io
import json
import os
import re
import shutil
import ssl
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent.parent
PIP_ACCEPT = ("application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, "
              "text/html; q=0.01")
UV_ACCEPT = ("application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
             "text/html;q=0.01")
CHECKS = 0


class Failure(Exception):
    pass


def check(cond, msg: str) -> None:
    global CHECKS
    CHECKS += 1
    if not cond:
        raise Failure(msg)


def read_env(path: Path) -> dict[str, str]:
    if not path.is_file():
        raise Failure(f"{path} is missing: the `servers` fixture did not run (servers_start)")
    env = {}
    for line in path.read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            env[k] = v
    return env


class Resp:
    def __init__(self, rc, status, version, headers, body):
        self.rc, self.status, self.version, self.headers, self.body = rc, status, version, headers, body

    def h(self, name: str) -> str:
        return self.headers.get(name.lower(), "")


def curl(url: str, *args: str, env: dict | None = None) -> Resp:
    with tempfile.TemporaryDirectory() as d:
        hdr, body = Path(d) / "h", Path(d) / "b"
        p = subprocess.run(["curl", "-s", "-D", str(hdr), "-o", str(body), "-w", "%{http_code} %{http_version}",
                            *args, url], capture_output=True, text=True, env=env)
        status, _, version = p.stdout.partition(" ")
        headers: dict[str, str] = {}
        if hdr.exists():
            # keep the last response's headers (after redirects)
            blocks = hdr.read_text(errors="replace").strip().split("\r\n\r\n")
            for line in blocks[-1].splitlines()[1:]:
                if ":" in line:
                    k, v = line.split(":", 1)
                    k = k.strip().lower()
                    headers[k] = (headers[k] + ", " + v.strip()) if k in headers else v.strip()
        return Resp(p.returncode, int(status or 0), version, headers,
                    body.read_bytes() if body.exists() else b"")


def manifest_of(env) -> dict:
    return json.loads(Path(env["MANIFEST"]).read_text())


def access_lines(env) -> list[list[str]]:
    return [l.split("\t") for l in Path(env["ACCESS_LOG"]).read_text().splitlines()]


# ---------------------------------------------------------------------------------------------

def t_negotiation(env) -> None:
    base = env["PYPI_URL"]
    r = curl(base + "torch/")
    check(r.status == 200 and r.h("content-type").startswith("text/html"), f"default Accept -> {r.status} {r.h('content-type')}")
    check(b'<meta name="pypi:repository-version" content="1.1">' in r.body, "HTML page lacks repository-version meta")
    for accept in (PIP_ACCEPT, UV_ACCEPT, "application/vnd.pypi.simple.v1+json",
                   "application/vnd.pypi.simple.latest+json"):
        r = curl(base + "torch/", "-H", f"Accept: {accept}")
        check(r.h("content-type") == "application/vnd.pypi.simple.v1+json", f"Accept {accept!r} -> {r.h('content-type')}")
        doc = json.loads(r.body)
        check(doc["name"] == "torch" and doc["meta"]["api-version"] == "1.1" and "2.13.0" in doc["versions"],
              "JSON project page content")
    for accept in ("text/html", "application/vnd.pypi.simple.v1+json;q=0, text/html",
                   "text/html, application/vnd.pypi.simple.v1+json;q=0.5", "*/*",
                   "application/vnd.pypi.simple.v1+html"):
        r = curl(base + "torch/", "-H", f"Accept: {accept}")
        check(r.h("content-type").startswith("text/html"), f"Accept {accept!r} -> {r.h('content-type')}")
    r = curl(base, "-H", f"Accept: {PIP_ACCEPT}")
    names = {p["name"] for p in json.loads(r.body)["projects"]}
    check({"torch", "nvidia-cudnn-cu12", "pytorch-triton", "jinja2"} <= {n.lower() for n in names}, "JSON root listing")
    check(b'href="torch/"' in curl(base).body, "HTML root listing")
    # Same resource, both representations: the same files.
    j = json.loads(curl(base + "filelock/", "-H", f"Accept: {PIP_ACCEPT}").body)
    h = curl(base + "filelock/").body.decode()
    check(sorted(f["filename"] for f in j["files"]) == sorted(re.findall(r">([^<]+\.whl)</a>", h)),
          "JSON and HTML list different files")
    # Headers: Vary, Cache-Control, ETag, Last-Modified, gzip, conditional requests.
    r = curl(base + "filelock/", "--compressed", "-H", f"Accept: {PIP_ACCEPT}")
    check(r.h("content-encoding") == "gzip", f"page not gzipped: {r.headers}")
    check("Accept" in r.h("vary"), f"Vary lacks Accept: {r.h('vary')}")
    check(r.h("cache-control") == f"max-age={env['PAGE_MAX_AGE']}", f"page Cache-Control {r.h('cache-control')}")
    r = curl(base + "filelock/")
    etag, lm = r.h("etag"), r.h("last-modified")
    check(etag and lm, "page without ETag/Last-Modified")
    check(curl(base + "filelock/", "-H", f"If-None-Match: {etag}").status == 304, "If-None-Match did not give 304")
    check(curl(base + "filelock/", "-H", f"If-Modified-Since: {lm}").status == 304, "If-Modified-Since did not give 304")
    whl = env["HTTP_URL"] + "/packages/filelock/filelock-3.13.1-py3-none-any.whl"
    r = curl(whl, "--compressed")
    check(r.status == 200 and "immutable" in r.h("cache-control") and not r.h("content-encoding"),
          f"file headers {r.headers}")
    check(curl(whl + ".metadata").body.startswith(b"Metadata-Version: 2.1\nName: filelock\nVersion: 3.13.1\n"),
          ".metadata file content")
    # The PyTorch-like tree ignores Accept: HTML only.
    r = curl(env["TORCH_INDEX_BASE"] + "/cu124/torch/", "-H", f"Accept: {PIP_ACCEPT}")
    check(r.status == 200 and r.h("content-type").startswith("text/html"), "whl page is not HTML")
    check(r.body.rstrip().endswith(b"-->") and b"<!--TIMESTAMP " in r.body, "whl page lacks TIMESTAMP comment")
    check(b'href="/whl/cu124/torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl#sha256=' in r.body,
          "whl page link is not root-relative with %2B and #sha256")
    check(b"data-requires-python" not in r.body, "whl torch page has data-requires-python")
    r = curl(env["TORCH_INDEX_BASE"] + "/nightly/cu126/torch/")
    check(r.status == 200 and b"#sha256=" not in r.body and b"data-core-metadata=" in r.body,
          "nightly page: hashes must be absent, metadata present")
    r = curl(env["TORCH_INDEX_BASE"] + "/cu124/networkx/")
    check(b'data-requires-python="&gt;=3.10"' in r.body, "networkx hack on whl pages")
    r = curl(env["TORCH_INDEX_BASE"] + "/cu124/")
    check(b'<a href="torch/">torch</a><br/>' in r.body, "variant root listing")


def t_tls(env) -> None:
    url = env["HTTPS_PYPI_URL"] + "torch/"
    clean = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE")}
    r = curl(url, "--cacert", env["CA_FILE"], "--http2", env=clean)
    check(r.rc == 0 and r.status == 200 and r.version == "2", f"TLS with CA: rc={r.rc} {r.status} HTTP/{r.version}")
    r = curl(url.replace("127.0.0.1", "localhost"), "--cacert", env["CA_FILE"], env=clean)
    check(r.rc == 0 and r.status == 200, f"TLS with CA via localhost: rc={r.rc}")
    r = curl(url, env=clean)
    check(r.rc == 60 and r.status == 0, f"TLS without the CA must fail verification (curl rc 60), got rc={r.rc}")
    r = curl(url, "-H", f"Accept: {PIP_ACCEPT}", "--cacert", env["CA_FILE"], env=clean)
    check(r.h("content-type") == "application/vnd.pypi.simple.v1+json", "negotiation over TLS")
    # OpenSSL's default verify paths honour SSL_CERT_FILE: a client that trusts "the system"
    # trusts the fixture CA only when SSL_CERT_FILE names it.
    code = ("import ssl,sys,urllib.request\n"
            "try:\n urllib.request.urlopen(sys.argv[1], context=ssl.create_default_context()).read(); print('ok')\n"
            "except Exception as e: print(type(e).__name__, e)\n")
    with_ca = subprocess.run([sys.executable, "-c", code, url], capture_output=True, text=True,
                             env=dict(clean, SSL_CERT_FILE=env["CA_FILE"]))
    check(with_ca.stdout.strip() == "ok", f"SSL_CERT_FILE=CA: {with_ca.stdout}{with_ca.stderr}")
    without = subprocess.run([sys.executable, "-c", code, url], capture_output=True, text=True, env=clean)
    check("CERTIFICATE_VERIFY_FAILED" in without.stdout, f"without SSL_CERT_FILE: {without.stdout}")
    r = curl(env["HTTPS_URL"] + "/whl/cu124/nope/", "--cacert", env["CA_FILE"], env=clean)
    check(r.status == 403, "403 over TLS too")


def t_status(env) -> None:
    for accept in (None, PIP_ACCEPT):
        extra = ["-H", f"Accept: {accept}"] if accept else []
        r = curl(env["PYPI_URL"] + "no-such-project/", *extra)
        check(r.status == 404, f"missing /simple/ project ({accept}) -> {r.status}")
    for path in ("/whl/cu124/no-such-project/", "/whl/cu124/no-such-project", "/whl/nightly/cu126/nope/",
                 "/whl/cu124/torch-0.0.0%2Bcu124-cp311-cp311-linux_x86_64.whl", "/whl/cu999/torch/"):
        r = curl(env["HTTP_URL"] + path)
        check(r.status == 403, f"missing {path} -> {r.status} (download.pytorch.org answers 403)")
    check(curl(env["HTTP_URL"] + "/whl/cu124/torch").status == 200, "/whl/cu124/torch without slash")
    r = curl(env["HTTP_URL"] + "/simple/torch")
    check(r.status == 301 and r.h("location") == "/simple/torch/", f"/simple/torch -> {r.status} {r.h('location')}")
    check(curl(env["HTTP_URL"] + "/packages/torch/nope.whl").status == 404, "missing PyPI file -> 404")
    f = env["FAULT_URL"]
    r = curl(f + "/status/401/simple/torch/")
    check(r.status == 401 and r.h("www-authenticate").startswith("Basic"), "401 with WWW-Authenticate")
    check(curl(f + "/status/403/simple/torch/").status == 403, "403 on a non-pytorch path")
    check(curl(f + "/ok/whl/cu124/nope/").status == 403 and curl(f + "/ok/simple/nope/").status == 404,
          "fault server's /ok/ mimics 403/404")


def fetch_range(url: str, start: int | None, end: int | None) -> tuple[int, bytes, str]:
    req = urllib.request.Request(url, headers={"Accept-Encoding": "identity"})
    if start is None:
        req.add_header("Range", f"bytes=-{end}")
    else:
        req.add_header("Range", f"bytes={start}-{end}")
    with urllib.request.urlopen(req) as r:
        return r.status, r.read(), r.headers.get("Content-Range", "")


def metadata_by_ranges(url: str, size: int) -> tuple[bytes, int, int]:
    """A minimal range-read client: EOCD -> central directory -> METADATA entry."""
    st, tail, cr = fetch_range(url, None, 22)
    check(st == 206 and tail[:4] == b"PK\x05\x06" and cr == f"bytes {size - 22}-{size - 1}/{size}",
          f"EOCD range: {st} {cr}")
    n_entries, cd_size, cd_off = struct.unpack("<10xHII2x", tail[:22][0:22])[0:3]
    st, cd, _ = fetch_range(url, cd_off, cd_off + cd_size - 1)
    pos, found = 0, None
    while pos < len(cd):
        (sig, _, _, _, method, _, _, _, csize, usize, nlen, xlen, clen, _, _, _, lho) = struct.unpack(
            "<IHHHHHHIIIHHHHHII", cd[pos:pos + 46])
        check(sig == 0x02014B50, "central directory signature")
        name = cd[pos + 46:pos + 46 + nlen].decode()
        if name.endswith(".dist-info/METADATA"):
            found = (method, csize, usize, lho)
        pos += 46 + nlen + xlen + clen
    check(found is not None, "METADATA in the central directory")
    method, csize, usize, lho = found
    st, lh, _ = fetch_range(url, lho, lho + 29)
    nlen, xlen = struct.unpack("<HH", lh[26:30])
    data_off = lho + 30 + nlen + xlen
    st, comp, _ = fetch_range(url, data_off, data_off + csize - 1)
    import zlib
    raw = zlib.decompress(comp, -15) if method == 8 else comp
    check(len(raw) == usize, "METADATA size")
    return raw, 4, csize + 30 + nlen + xlen + cd_size + 22


def t_range(env) -> None:
    m = manifest_of(env)
    files = m["indexes"]["whl/cu124"]["projects"]["torch"]
    no_meta = [f for f in files if f["metadata_sha256"] is None]
    check(no_meta, "whl/cu124 has torch files without .metadata")
    f = no_meta[0]
    url = env["HTTP_URL"] + f["url"]
    r = curl(url, "-r", "0-99")
    check(r.status == 206 and len(r.body) == 100 and r.h("content-range") == f"bytes 0-99/{f['size']}",
          f"Range 0-99: {r.status} {r.h('content-range')}")
    local = (Path(env["INDEX_ROOT"]) / urllib.request.url2pathname(f["url"].lstrip("/"))).read_bytes()
    check(r.body == local[:100], "range bytes differ from the file")
    r = curl(url, "-I")
    check(int(r.h("content-length")) == f["size"] == len(local) and r.h("accept-ranges") == "bytes",
          "HEAD size / Accept-Ranges")
    check(curl(url, "-r", f"{f['size'] + 10}-").status == 416, "unsatisfiable range -> 416")
    raw, requests, fetched = metadata_by_ranges(url, f["size"])
    check(raw.startswith(f"Metadata-Version: 2.1\nName: torch\nVersion: {f['version']}\n".encode()),
          "METADATA read through ranges")
    check(fetched * 10 < f["size"], f"range reads fetched {fetched} of {f['size']} bytes")
    # With .metadata: the range-read METADATA equals the served .metadata (PEP 658 identity).
    g = next(x for x in m["indexes"]["pypi"]["projects"]["filelock"] if x["metadata_sha256"])
    url = env["HTTP_URL"] + g["url"]
    raw, _, _ = metadata_by_ranges(url, g["size"])
    check(raw == curl(url + ".metadata").body, ".metadata differs from the wheel's METADATA")
    check(curl(env["FAULT_URL"] + "/no-range" + g["url"], "-r", "0-9").status == 200, "no-range fault ignores Range")
    check(curl(env["FAULT_URL"] + "/ok" + g["url"], "-r", "0-9").status == 206, "fault /ok/ honours Range")


def t_faults(env) -> None:
    f = env["FAULT_URL"]
    u = uuid.uuid4().hex
    statuses = [curl(f"{f}/500-then-200/simple/torch/?t={u}").status for _ in range(3)]
    check(statuses == [500, 200, 200], f"500-then-200: {statuses}")
    statuses = [curl(f"{f}/503x2-then-200/simple/torch/?t={u}").status for _ in range(3)]
    check(statuses == [503, 503, 200], f"503x2-then-200: {statuses}")
    r = curl(f"{f}/429x1-then-200/simple/torch/?t={u}")
    check(r.status == 429 and r.h("retry-after") == "0", "429 with Retry-After")
    t0 = time.monotonic()
    r = curl(f"{f}/hang/simple/torch/", "-m", "1")
    check(r.rc == 28 and r.status == 0 and not r.body, f"hang: rc={r.rc}")
    r = curl(f"{f}/stall/simple/torch/", "-m", "1")
    check(r.rc == 28 and r.status == 200 and len(r.body) == 64, f"stall: rc={r.rc} {len(r.body)} bytes")
    check(time.monotonic() - t0 < 30, "hang/stall did not time out")
    full = curl(f"{f}/ok/simple/torch/").body
    r = curl(f"{f}/truncated/simple/torch/")
    check(r.rc == 18 and len(r.body) == len(full) // 2, f"truncated: rc={r.rc} {len(r.body)}/{len(full)}")
    page = curl(f"{f}/wrong-hash/simple/filelock/").body.decode()
    href, frag = re.search(r'href="([^"#]+)#sha256=([0-9a-f]{64})"', page).groups()
    data = curl(urllib.parse.urljoin(f"{f}/wrong-hash/simple/filelock/", href)).body
    check(data[:2] == b"PK" and hashlib.sha256(data).hexdigest() != frag, "wrong-hash page hash must mismatch its file")
    doc = json.loads(curl(f"{f}/wrong-hash/simple/filelock/", "-H", f"Accept: {PIP_ACCEPT}").body)
    data = curl(urllib.parse.urljoin(f"{f}/wrong-hash/simple/filelock/", doc["files"][0]["url"])).body
    check(hashlib.sha256(data).hexdigest() != doc["files"][0]["hashes"]["sha256"], "wrong-hash JSON")
    page = curl(f"{f}/wrong-metadata-hash/simple/filelock/").body.decode()
    href, mh = re.search(r'href="([^"#]+)#sha256=[0-9a-f]{64}"[^>]*data-core-metadata="sha256=([0-9a-f]{64})"', page).groups()
    md = curl(urllib.parse.urljoin(f"{f}/wrong-metadata-hash/simple/filelock/", href) + ".metadata").body
    check(md.startswith(b"Metadata-Version") and hashlib.sha256(md).hexdigest() != mh, "wrong-metadata-hash")
    r = curl(f"{f}/invalid-json/simple/torch/", "-H", f"Accept: {PIP_ACCEPT}")
    check(r.status == 200 and r.h("content-type") == "application/vnd.pypi.simple.v1+json", "invalid-json type")
    try:
        json.loads(r.body)
        check(False, "invalid-json parsed")
    except json.JSONDecodeError:
        pass
    r = curl(f"{f}/bad-api-version/simple/torch/", "-H", f"Accept: {PIP_ACCEPT}")
    check(json.loads(r.body)["meta"]["api-version"] == "2.0", "bad-api-version JSON")
    check(b'content="2.0"' in curl(f"{f}/bad-api-version/simple/torch/").body, "bad-api-version HTML")
    r = curl(f"{f}/redirect-loop/simple/torch/", "-L", "--max-redirs", "10")
    check(r.rc == 47, f"redirect loop: curl rc {r.rc}")
    r = curl(f"{f}/redirect/simple/torch/", "-L")
    check(r.status == 200 and r.body == full, "redirect to /ok/")
    check(curl(f"{f}/auth/simple/torch/").status == 401, "auth without credentials")
    check(curl(f"{f}/auth/simple/torch/", "-u", "fixture:s3cret").status == 200, "auth with credentials")
    check(curl(f"{f}/no-such-mode/x").status == 404, "unknown mode -> 404")
    counts = json.loads(curl(f"{f}/_counts").body)
    check(counts.get(f"/500-then-200/simple/torch/?t={u}") == 3, f"per-URL counter: {counts}")
    log = Path(env["FAULT_LOG"]).read_text()
    check(f"/500-then-200/simple/torch/?t={u}\t500" in log, "fault.log lines")


def pip(*args: str, cwd=None) -> subprocess.CompletedProcess:
    py = shutil.which("python3")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_CONFIG_FILE=os.devnull, PIP_NO_INPUT="1",
               PYTHONDONTWRITEBYTECODE="1")
    cache = tempfile.mkdtemp(prefix="gpulock-pip-cache-")
    try:
        return subprocess.run([py, "-m", "pip", *args, "--cache-dir", cache], capture_output=True,
                              text=True, env=env, cwd=cwd, timeout=240)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def pip_report(*args: str) -> dict:
    with tempfile.TemporaryDirectory() as d:
        rep = Path(d) / "report.json"
        p = pip("install", "--dry-run", "--ignore-installed", "--quiet", "--report", str(rep), *args)
        check(p.returncode == 0, f"pip install --dry-run {' '.join(args)} failed:\n{p.stdout}\n{p.stderr}")
        doc = json.loads(rep.read_text())
    return {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in doc["install"]}


def t_find_links(env) -> None:
    r = curl(env["FIND_LINKS_URL"])
    check(r.status == 200 and b"filelock-3.19.1-py3-none-any.whl" in r.body, "find-links listing")
    with tempfile.TemporaryDirectory() as d:
        p = pip("download", "--no-deps", "--no-index", "--find-links", env["FIND_LINKS_URL"],
                "--dest", d, "filelock==3.19.1")
        check(p.returncode == 0, f"pip download from find-links:\n{p.stderr}")
        p = pip("download", "--no-deps", "--index-url", env["FILE_INDEX_URL"], "--dest", d, "mpmath==1.3.0")
        check(p.returncode == 0, f"pip download from the file:// index:\n{p.stderr}")
        got = sorted(os.listdir(d))
        check(got == ["filelock-3.19.1-py3-none-any.whl", "mpmath-1.3.0-py3-none-any.whl"], f"downloaded {got}")


def t_pip(env) -> None:
    m = manifest_of(env)
    pypi = env["PYPI_URL"]
    with tempfile.TemporaryDirectory() as d:
        p = pip("download", "--no-deps", "--index-url", pypi, "--dest", d, "sympy==1.13.3")
        check(p.returncode == 0, f"pip download:\n{p.stderr}")
        f = next(x for x in m["indexes"]["pypi"]["projects"]["sympy"] if x["version"] == "1.13.3")
        data = (Path(d) / f["filename"]).read_bytes()
        check(hashlib.sha256(data).hexdigest() == f["sha256"], "downloaded file hash != manifest")
    got = pip_report("--index-url", pypi, "--only-binary", ":all:", "jinja2")
    check(got == {"jinja2": "3.1.6", "markupsafe": "3.0.2"}, f"jinja2 resolution: {got}")
    got = pip_report("--index-url", pypi, "--no-deps", "filelock")
    check(got == {"filelock": "3.19.1"}, f"yanked 3.20.0 must be skipped: {got}")
    got = pip_report("--index-url", pypi, "--no-deps", "filelock==3.20.0")
    check(got == {"filelock": "3.20.0"}, f"yanked 3.20.0 pinned with ==: {got}")
    with tempfile.TemporaryDirectory() as t:
        got = pip_report("--index-url", pypi, "--no-deps", "--only-binary", ":all:", "--target", t,
                         "--python-version", "3.10", "--platform", "manylinux_2_17_x86_64", "numpy")
    check(got == {"numpy": "2.2.6"}, f"Requires-Python >=3.11 of numpy 2.3.3 for 3.10: {got}")
    # A PyTorch variant index + the PyPI-like one: every pin of the torch build resolves.
    got = pip_report("--index-url", env["TORCH_INDEX_BASE"] + "/cu124", "--extra-index-url", pypi,
                     "--only-binary", ":all:", "torch==2.5.1+cu124")
    check(got.get("torch") == "2.5.1+cu124" and got.get("nvidia-cudnn-cu12") == "9.1.0.70"
          and got.get("triton") == "3.1.0" and got.get("nvidia-nvjitlink-cu12") == "12.4.127"
          and got.get("markupsafe") == "3.0.2" and got.get("sympy") == "1.13.1", f"torch 2.5.1+cu124: {got}")
    # PyPI torch 2.13.0: cuda-toolkit extras with ==X.* and range pins.
    got = pip_report("--index-url", pypi, "--only-binary", ":all:", "torch==2.13.0")
    check(got.get("cuda-toolkit") == "13.0.3" and got.get("nvidia-cublas") == "13.1.1.3"
          and got.get("nvidia-nvjitlink") == "13.3.33" and got.get("nvidia-cudnn-cu13") == "9.20.0.48"
          and got.get("setuptools") == "82.0.0", f"torch 2.13.0: {got}")
    # Nightly: pytorch-triton from the nightly index.
    got = pip_report("--index-url", env["TORCH_INDEX_BASE"] + "/nightly/cu130", "--extra-index-url", pypi,
                     "--pre", "--only-binary", ":all:", "torch==2.15.0.dev20260817+cu130", "torchvision")
    check(got.get("pytorch-triton") == "3.8.0+git5e6f7a8b" and got.get("torchvision") == "0.30.0.dev20260817+cu130",
          f"nightly: {got}")
    # Installable: pip installs the fixture wheels (no deps) and they import.
    with tempfile.TemporaryDirectory() as t:
        urls = [env["HTTP_URL"] + x["url"] for x in m["indexes"]["whl/cu124"]["projects"]["torch"]
                if x["version"] == "2.5.1+cu124" and "cp311" in x["filename"]]
        urls.append(env["HTTP_URL"] + next(x["url"] for x in m["indexes"]["pypi"]["projects"]["nvidia-cudnn-cu12"]
                                           if x["version"] == "9.1.0.70" and "x86_64" in x["filename"]))
        p = pip("install", "--no-deps", "--target", t, *urls)
        check(p.returncode == 0, f"pip install --no-deps:\n{p.stderr}")
        out = subprocess.run([shutil.which("python3"), "-c", "import torch, torch.version, nvidia.cudnn;"
                              "print(torch.__version__, torch.version.cuda)"],
                             capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=t))
        check(out.stdout.strip() == "2.5.1+cu124 12.4", f"import: {out.stdout}{out.stderr}")
        check((Path(t) / "torch-2.5.1+cu124.dist-info" / "RECORD").is_file(), "dist-info installed")
    reqs = [l for l in access_lines(env) if l[3].startswith("/simple/") and "json" in l[7] and l[4] == "200"]
    check(reqs, "pip did not negotiate JSON pages")


def t_private(env) -> None:
    state = Path(tempfile.mkdtemp(prefix="gpulock-private-"))
    servers = [sys.executable, str(HERE / "servers.py")]
    try:
        p = subprocess.run(servers + ["start", "-q", "--root", env["INDEX_ROOT"], "--state", str(state),
                                      "--copy", "--page-max-age", "2", "--no-tls", "--no-fault"],
                           capture_output=True, text=True)
        check(p.returncode == 0, f"private start: {p.stderr}")
        penv = read_env(state / "servers.env")
        check(penv["HTTP_URL"] != env["HTTP_URL"] and Path(penv["INDEX_ROOT"]) == state / "index", "private env")
        base = penv["PYPI_URL"]
        r = curl(base + "fsspec/")
        check(r.h("cache-control") == "max-age=2", f"--page-max-age: {r.h('cache-control')}")
        etag_filelock = curl(base + "filelock/").h("etag")
        nightly = next(x for x in json.loads((Path(env["MANIFEST"])).read_text())["releases"]
                       if x["name"] == "torch" and x.get("nightly") == "20260818" and x["version"].endswith("+cu126"))
        newer = dict(nightly, version=nightly["version"].replace("20260818", "20260819"), nightly="20260819",
                     wheels=["cp311-cp311-manylinux_2_28_x86_64"], upload_time="2026-08-19T07:30:00Z", family="torch")
        newer.pop("yanked", None)
        overlay = {"remove": [{"name": "fsspec", "version": "2024.6.1", "index": "pypi"}],
                   "rehash": [{"name": "fsspec", "version": "2025.3.0"}],
                   "yank": [{"name": "fsspec", "version": "2025.9.0", "reason": "drift"}],
                   "releases": [newer]}
        ov = state / "overlay.json"
        ov.write_text(json.dumps(overlay))
        before = json.loads(curl(base + "fsspec/", "-H", f"Accept: {PIP_ACCEPT}").body)
        p = subprocess.run(servers + ["regenerate", "--state", str(state), "--overlay", str(ov)],
                           capture_output=True, text=True)
        check(p.returncode == 0, f"regenerate: {p.stdout}{p.stderr}")
        after = json.loads(curl(base + "fsspec/", "-H", f"Accept: {PIP_ACCEPT}").body)
        names_b = {f["filename"]: f for f in before["files"]}
        names_a = {f["filename"]: f for f in after["files"]}
        check("fsspec-2024.6.1-py3-none-any.whl" in names_b and "fsspec-2024.6.1-py3-none-any.whl" not in names_a,
              "removed file still listed")
        old, new = names_b["fsspec-2025.3.0-py3-none-any.whl"], names_a["fsspec-2025.3.0-py3-none-any.whl"]
        check(old["hashes"] != new["hashes"], "rehash kept the hash")
        data = curl(penv["HTTP_URL"] + "/packages/fsspec/fsspec-2025.3.0-py3-none-any.whl").body
        check(hashlib.sha256(data).hexdigest() == new["hashes"]["sha256"], "rehashed file != page")
        check(names_a["fsspec-2025.9.0-py3-none-any.whl"]["yanked"] == "drift", "yank")
        check(curl(penv["HTTP_URL"] + "/packages/fsspec/fsspec-2024.6.1-py3-none-any.whl").status == 404,
              "removed file still served")
        page = curl(penv["TORCH_INDEX_BASE"] + "/nightly/cu126/torch/").body
        check(b"torch-2.15.0.dev20260819%2Bcu126-cp311-cp311-manylinux_2_28_x86_64.whl" in page, "new nightly")
        check(curl(base + "filelock/").h("etag") == etag_filelock, "an unchanged page changed its ETag")
        # The shared tree is untouched.
        check(b"fsspec-2024.6.1" in curl(env["PYPI_URL"] + "fsspec/").body, "shared tree modified")
        lines = Path(penv["ACCESS_LOG"]).read_text().splitlines()
        check(len(lines) >= 8, "private access log")
        pid = int(penv["NGINX_PID"])
    finally:
        subprocess.run(servers + ["stop", "--state", str(state)], capture_output=True)
    check(not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0],
          "nginx still running after stop")
    shutil.rmtree(state, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# generator: the tree itself (no server)

class Anchors(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[tuple[dict, str]] = []
        self._cur = None

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._cur = (dict(attrs), "")

    def handle_data(self, data):
        if self._cur is not None:
            self._cur = (self._cur[0], self._cur[1] + data)

    def handle_endtag(self, tag):
        if tag == "a" and self._cur is not None:
            self.links.append(self._cur)
            self._cur = None


def t_generator(args) -> None:
    try:
        from packaging.requirements import Requirement
        from packaging.utils import canonicalize_name, parse_wheel_filename
        from packaging.version import Version
    except ImportError:
        raise Failure("the generator check needs `packaging` (run it with /usr/bin/python3; "
                      "Debian package python3-packaging)")
    root = Path(args.index)
    m = json.loads((root / "manifest.json").read_text())
    import urllib.parse as up
    seen_files = set()
    for index, entry in m["indexes"].items():
        pytorch = entry["kind"] == "pytorch"
        for project, files in entry["projects"].items():
            # pages
            if pytorch:
                page = (root / index / project / "index.html").read_text()
                check(re.search(r"<!--TIMESTAMP \d+-->\n$", page), f"{index}/{project}: TIMESTAMP")
            else:
                page = (root / "simple" / project / "index.html").read_text()
                doc = json.loads((root / "simple" / project / "index.json").read_text())
                check(doc["name"] == project and doc["meta"]["api-version"] == "1.1", f"{project} JSON meta")
                jfiles = {f["filename"]: f for f in doc["files"]}
            p = Anchors()
            p.feed(page)
            links = {text: a for a, text in p.links}
            check(len(links) == len(files), f"{index}/{project}: {len(links)} links for {len(files)} files")
            for f in files:
                a = links[f["filename"]]
                href, _, frag = a["href"].partition("#")
                if pytorch:
                    check(href == f["url"] and href.startswith(("/whl/", "/packages/")), f"{index}: href {href}")
                    check(("+" not in href) and (("%2B" in href) == ("+" in f["filename"])), f"{href}: + not encoded")
                    check((frag == "") == index.startswith("whl/nightly"), f"{index} {f['filename']}: fragment {frag}")
                    check(("data-upload-time" in a) == (f["upload_time"] is not None), "data-upload-time")
                    rp = a.get("data-requires-python")
                    check(rp is None or project == "networkx", f"{index} {project}: data-requires-python")
                else:
                    check(up.urljoin(f"/simple/{project}/", href) == f["url"], f"pypi href {href}")
                    j = jfiles[f["filename"]]
                    check(j["hashes"]["sha256"] == f["sha256"] and j["size"] == f["size"], "JSON hash/size")
                    check(j["core-metadata"] == ({"sha256": f["metadata_sha256"]} if f["metadata_sha256"] else False)
                          and j["dist-info-metadata"] == j["core-metadata"], "JSON core-metadata")
                    check(a.get("data-requires-python") == f["requires_python"], "data-requires-python")
                    check((a.get("data-yanked") is not None) == (f["yanked"] is not False), "data-yanked")
                    check(j["yanked"] == f["yanked"], "JSON yanked")
                    check(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", j["upload-time"]), "upload-time")
                if frag:
                    check(frag == f"sha256={f['sha256']}", f"{f['filename']}: fragment hash")
                md = f["metadata_sha256"]
                check(a.get("data-core-metadata") == (f"sha256={md}" if md else None)
                      and a.get("data-dist-info-metadata") == a.get("data-core-metadata"), "data-core-metadata")
                # the file
                path = root / up.unquote(f["url"].lstrip("/"))
                data = path.read_bytes()
                check(hashlib.sha256(data).hexdigest() == f["sha256"] and len(data) == f["size"], f"{path}: hash/size")
                if md:
                    check(hashlib.sha256((path.parent / (path.name + ".metadata")).read_bytes()).hexdigest() == md,
                          f"{path}.metadata hash")
                if path in seen_files or not f["filename"].endswith(".whl"):
                    continue
                seen_files.add(path)
                name, version, build, tags = parse_wheel_filename(f["filename"])
                with zipfile.ZipFile(io.BytesIO(data)) as z:
                    check(z.testzip() is None, f"{path}: CRC")
                    dist = f["filename"].split("-")[0] + "-" + f["filename"].split("-")[1] + ".dist-info"
                    meta = z.read(f"{dist}/METADATA")
                    if md:
                        check(meta == (path.parent / (path.name + ".metadata")).read_bytes(), ".metadata != METADATA")
                    hdr = meta.decode().split("\n\n")[0].splitlines()
                    check(canonicalize_name(hdr[1][6:]) == name and Version(hdr[2][9:]) == version,
                          f"{path}: METADATA Name/Version")
                    wheel = z.read(f"{dist}/WHEEL").decode()
                    check(sorted(l[5:] for l in wheel.splitlines() if l.startswith("Tag: ")) == sorted(str(t) for t in tags),
                          f"{path}: WHEEL tags")
                    for line in z.read(f"{dist}/RECORD").decode().splitlines():
                        p_, h_, s_ = line.rsplit(",", 2)
                        if h_:
                            d_ = z.read(p_)
                            import base64
                            want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(d_).digest()).rstrip(b"=").decode()
                            check(h_ == want and int(s_) == len(d_), f"{path}: RECORD {p_}")
                    check(len(z.read(f"{dist}/RECORD").decode().splitlines()) == len(z.namelist()), "RECORD lists every member")
    check(len(seen_files) > 2000, f"only {len(seen_files)} wheels")

    # Facts the other tests rely on.
    pypi = m["indexes"]["pypi"]["projects"]
    yanked = [f["filename"] for fs in pypi.values() for f in fs if f["yanked"] is not False]
    check(yanked == ["filelock-3.20.0-py3-none-any.whl"], f"yanked files: {yanked}")
    no_meta = sorted({p for p, fs in pypi.items() for f in fs if f["metadata_sha256"] is None and f["tag"]})
    check(no_meta == ["networkx", "pillow"], f"PyPI projects without .metadata: {no_meta}")
    attack = [f["version"] for f in pypi["pytorch-triton"]]
    nightly_triton = [f["version"] for f in m["indexes"]["whl/nightly/cu126"]["projects"]["pytorch-triton"]]
    check(set(attack) == {"4.0.0"} and all(Version("4.0.0") > Version(v) for v in nightly_triton), "attack package")
    for variant in ("cu126", "cu130", "cpu"):
        proj = m["indexes"][f"whl/nightly/{variant}"]["projects"]
        dates = {k: sorted({f["nightly"] for f in proj[k]}) for k in ("torch", "torchvision", "torchaudio")}
        check(dates["torch"] == dates["torchvision"] == ["20260814", "20260815", "20260817", "20260818"]
              and dates["torchaudio"] == ["20260814", "20260815", "20260817"], f"nightly dates {variant}: {dates}")
    check("torchaudio" not in {p for p in pypi if any(f["version"].startswith(("2.12", "2.13")) for f in pypi[p]
                                                       if p == "torchaudio")}, "torchaudio 2.12/2.13")
    check(not any(f["version"].startswith(("2.12", "2.13")) for f in pypi["torchaudio"]), "no torchaudio 2.12/2.13")

    # Every requirement of every release resolves on its index (pins exist), markers ignored.
    versions: dict[tuple[str, str], list[Version]] = {}
    for index, entry in m["indexes"].items():
        for project, files in entry["projects"].items():
            versions.setdefault((index, project), []).extend(Version(f["version"]) for f in files)
    checked = 0
    for rel in m["releases"]:
        for index in rel["indexes"]:
            for text in rel.get("requires_dist", []):
                req = Requirement(text)
                if req.marker and "extra" in str(req.marker) and rel["name"] not in ("torch", "cuda-toolkit"):
                    continue   # optional extras of ordinary deps (Babel, pytest, ...) are not in the index
                dep = canonicalize_name(req.name)
                where = [index] if (index != "pypi" and (dep.startswith(("nvidia-", "cuda-")) or dep in ("triton", "pytorch-triton", "torch"))) else ["pypi"]
                if rel["name"] == "fixture-needs-sdist":
                    continue
                for w in where:
                    vs = versions.get((w, dep), [])
                    ok = any(req.specifier.contains(v, prereleases=True) for v in vs)
                    check(ok, f"{rel['name']} {rel['version']} on {index}: {text} has no match on {w} ({sorted(map(str, vs))})")
                    checked += 1
    check(checked > 2000, f"only {checked} requirements checked")

    # --extra-files: a file lands in the wheel (mode kept) and in RECORD.
    sys.path.insert(0, str(SOURCE / "fixtures"))
    import generate
    with tempfile.TemporaryDirectory() as d:
        lib = Path(d) / "nvidia_cudnn_cu12-9.1.0.70" / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9"
        lib.parent.mkdir(parents=True)
        lib.write_bytes(b"\x7fELF fake")
        lib.chmod(0o755)
        rel = next(r for r in json.loads((Path(args.data) / "gpu.json").read_text())["releases"]
                   if r["name"] == "nvidia-cudnn-cu12" and r["version"] == "9.1.0.70")
        rel["upload_time"] = "2024-01-01T00:00:00Z"
        f = generate.File(rel, rel["wheels"][0], 0)
        f.build(generate.load_extra_files(Path(d)))
        with zipfile.ZipFile(io.BytesIO(f.data)) as z:
            info = z.getinfo("nvidia/cudnn/lib/libcudnn.so.9")
            check(z.read(info) == b"\x7fELF fake" and (info.external_attr >> 16) & 0o111, "extra file in wheel")
            check("nvidia/cudnn/lib/libcudnn.so.9,sha256=" in z.read("nvidia_cudnn_cu12-9.1.0.70.dist-info/RECORD").decode(),
                  "extra file in RECORD")

    # Determinism: the same inputs give the same bytes.
    inputs = m["inputs"]
    with tempfile.TemporaryDirectory() as d:
        cmd = [sys.executable, str(SOURCE / "fixtures" / "generate.py"), "-q", "--data", inputs["data"],
               "--out", d, "--scale", str(inputs["scale"]), "--timestamp", str(inputs["timestamp"])]
        if inputs.get("extra_files"):
            cmd += ["--extra-files", inputs["extra_files"]]
        p = subprocess.run(cmd, capture_output=True, text=True)
        check(p.returncode == 0, f"regeneration failed: {p.stderr}")
        ours = {q.relative_to(d).as_posix() for q in Path(d).rglob("*") if q.is_file()}
        theirs = {q.relative_to(root).as_posix() for q in root.rglob("*") if q.is_file()}
        check(ours == theirs, f"different file sets: {sorted(ours ^ theirs)[:5]}")
        diff = [q for q in sorted(ours) if q != "manifest.json" and (Path(d) / q).read_bytes() != (root / q).read_bytes()]
        check(not diff, f"not deterministic: {diff[:5]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("check")
    ap.add_argument("--env", type=Path)
    ap.add_argument("--index", type=Path)
    ap.add_argument("--data", type=Path)
    args = ap.parse_args()
    t0 = time.monotonic()
    try:
        if args.check == "generator":
            t_generator(args)
        else:
            fn = globals().get(f"t_{args.check}")
            if fn is None:
                raise Failure(f"unknown check {args.check}")
            fn(read_env(args.env))
    except Failure as e:
        print(f"FAIL {args.check}: {e}", file=sys.stderr)
        return 1
    print(f"ok {args.check}: {CHECKS} checks in {time.monotonic() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
