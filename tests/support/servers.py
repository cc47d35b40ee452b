#!/usr/bin/env python3
"""Starts and stops the loopback servers gpulock's tests use (Python standard library only).

    servers.py start --root INDEX --state DIR [--env-file FILE] [--copy] [--page-max-age N]
                     [--no-tls] [--no-fault] [--gzip-static]
    servers.py stop  --state DIR
    servers.py status --state DIR
    servers.py regenerate --state DIR --overlay FILE...   (changes a --copy tree: drift tests)
    servers.py copy  --from INDEX --to DIR       (hard-linked copy of a tree)

`start` runs, all on 127.0.0.1 and free ports, with every pid, log, temp file and certificate
inside DIR:
  - nginx (Debian's /usr/sbin/nginx) serving INDEX over HTTP, and over HTTPS + HTTP/2 with a
    certificate signed by a CA generated here (DIR/tls/ca.pem), so a client trusts it only when
    told to (SSL_CERT_FILE). Content negotiation on Accept for /simple/ (PEP 691 JSON or PEP 503
    HTML), Range, ETag/Last-Modified, gzip for pages, `Cache-Control: max-age=N` on pages and
    `immutable` on files, 404 for a missing /simple/ project and 403 for anything missing under
    /whl/ (as download.pytorch.org does), one access-log line per request (DIR/access.log);
  - tests/support/fault_server.py (see its docstring) on the same tree.
It writes DIR/servers.env (and --env-file) as KEY=VALUE lines; see fixtures/README.md for the keys.
`--copy` serves a hard-linked copy of INDEX made in DIR/index (regenerate into it with
fixtures/generate.py --out DIR/index --overlay ..., which replaces files instead of editing them).
`--gzip-static` serves `<file>.gz` where it exists (bench/run precompresses the pages of its
large index, as a CDN serves them cached, instead of nginx compressing megabytes per request).
`start` on a DIR whose servers still run stops them first. `stop` ends only the processes this
script started for DIR (their pids are in DIR and their command lines name DIR).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

NGINX = os.environ.get("GPULOCK_NGINX", "/usr/sbin/nginx")
HERE = Path(__file__).resolve().parent

LOG_FORMAT = ("'$msec\\t$scheme\\t$request_method\\t$request_uri\\t$status\\t$body_bytes_sent\\t"
              "$http_range\\t$http_accept\\t$http_if_none_match\\t$http_if_modified_since\\t"
              "$http_accept_encoding\\t$server_protocol\\t$http_user_agent\\t$connection\\t"
              "$connection_requests'")

# PEP 691 negotiation in nginx (it has none built in): JSON when the Accept header lists the
# JSON type with q > 0, unless it gives the JSON type an explicit q < 1 and lists an HTML type
# without q. (The fault server implements full q-value comparison.)
ACCEPT_MAP = r"""
    map $http_accept $fixture_json {
        default 0;
        "~*application/vnd\.pypi\.simple\.(v1|latest)\+json\s*;\s*q\s*=\s*0(\.0*)?\s*(,|$)" 0;
        "~*^(?=.*application/vnd\.pypi\.simple\.(v1|latest)\+json\s*;\s*q\s*=\s*0\.)(?=.*(text/html|application/vnd\.pypi\.simple\.(v1|latest)\+html)\s*(,|$))" 0;
        "~*application/vnd\.pypi\.simple\.(v1|latest)\+json" 1;
    }
"""

LOCATIONS = r"""
        location /simple/ {
            if ($fixture_json) {
                rewrite ^(/simple/(?:[^/]+/)?)$ $1index.json last;
            }
            index index.html;
        }
        location ~ ^/simple/(?:[^/]+/)?index\.json$ {
            types { }
            default_type application/vnd.pypi.simple.v1+json;
            add_header Cache-Control "max-age=@MAXAGE@";
            add_header Vary "Accept";
        }
        location ~ ^/simple/(?:[^/]+/)?index\.html$ {
            types { }
            default_type text/html;
            add_header Cache-Control "max-age=@MAXAGE@";
            add_header Vary "Accept";
        }
        location /packages/ {
            add_header Cache-Control "max-age=365000000, immutable";
        }
        location /whl/ {
            location ~ \.(whl|metadata|tar\.gz)$ {
                add_header Cache-Control "max-age=365000000, immutable";
                try_files $uri =403;
            }
            add_header Cache-Control "max-age=@MAXAGE@";
            try_files $uri ${uri}index.html $uri/index.html =403;
        }
        location /find-links/ {
            autoindex on;
        }
        location /broken/files/ {
            autoindex on;
        }
"""


def nginx_conf(state: Path, root: Path, http_port: int, https_port: int | None, max_age: int,
               gzip_static: bool = False) -> str:
    tmp = state / "tmp"
    user = "user root root;\n" if os.geteuid() == 0 else ""
    locations = LOCATIONS.replace("@MAXAGE@", str(max_age))
    # --gzip-static: <file>.gz where present (precompressed, as a CDN serves cached pages).
    static = "    gzip_static on;\n" if gzip_static else ""
    tls = ""
    if https_port:
        tls = f"""
    server {{
        listen 127.0.0.1:{https_port} ssl http2;
        server_name localhost 127.0.0.1;
        ssl_certificate {state}/tls/server.pem;
        ssl_certificate_key {state}/tls/server.key;
        ssl_protocols TLSv1.2 TLSv1.3;
        root {root};
{locations}
    }}
"""
    return f"""# Generated by tests/support/servers.py: gpulock's fixture index server.
{user}worker_processes 1;
daemon on;
pid {state}/nginx.pid;
error_log {state}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    types {{ text/html html; }}
    default_type application/octet-stream;
    log_format fixture {LOG_FORMAT};
    access_log {state}/access.log fixture;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    sendfile on;
    keepalive_timeout 65;
    keepalive_requests 100000;
    absolute_redirect off;
    server_tokens off;
    gzip on;
    gzip_vary on;
    gzip_min_length 1;
    gzip_comp_level 5;
    gzip_types application/vnd.pypi.simple.v1+json;   # text/html is always compressed
{static}{ACCEPT_MAP}
    server {{
        listen 127.0.0.1:{http_port};
        server_name localhost 127.0.0.1;
        root {root};
{locations}
    }}
{tls}
}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, **kw)


def make_certs(tls: Path) -> None:
    """A CA and a server certificate for 127.0.0.1 and localhost (EC P-256: fast)."""
    tls.mkdir(parents=True, exist_ok=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    steps = [
        ["openssl", "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "3650",
         "-subj", "/CN=gpulock fixture CA", "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
        ["openssl", "req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"],
        ["openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
         "-set_serial", str(int.from_bytes(os.urandom(8), "big")), "-out", "server.pem",
         "-days", "3650", "-extfile", "ext.cnf"],
    ]
    (tls / "ext.cnf").write_text(
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for cmd in steps:
        p = run(cmd, cwd=tls)
        if p.returncode != 0:
            raise SystemExit(f"servers: {' '.join(cmd[:3])} failed:\n{p.stderr}")


def read_env(path: Path) -> dict[str, str]:
    env = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            if "=" in line and not line.startswith("#"):
                k, v = line.split("=", 1)
                env[k] = v
    return env


def write_env(path: Path, env: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "# gpulock test servers (tests/support/servers.py); KEY=VALUE, no quoting\n" + \
        "".join(f"{k}={v}\n" for k, v in env.items())
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def ours(pid: int, state: Path) -> bool:
    """True when pid is alive and its command line names this state dir."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    return str(state) in cmd


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours counts as gone.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().split(")")[-1].split()
                if int(fields[1]) == pid:
                    out.append(int(d.name))
            except (OSError, IndexError, ValueError):
                pass
    return out


def stop(state: Path, quiet: bool = False) -> int:
    state = state.resolve()
    pids = []
    for name in ("nginx.pid", "fault.pid"):
        p = state / name
        if p.is_file():
            try:
                pids.append(int(p.read_text().split()[0]))
            except (ValueError, IndexError):
                pass
    stopped = 0
    for pid in pids:
        if not ours(pid, state):
            continue
        kids = children(pid)
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and (alive(pid) or any(alive(k) for k in kids)):
            time.sleep(0.02)
        for k in [pid] + kids:
            if alive(k):
                try:
                    os.kill(k, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        stopped += 1
    for name in ("nginx.pid", "fault.pid", "fault.port"):
        (state / name).unlink(missing_ok=True)
    if not quiet:
        print(f"servers: stopped {stopped} server(s) of {state}")
    return 0


def copy_tree(src: Path, dst: Path) -> None:
    """Hard-linked copy (falls back to copying across file systems)."""
    if dst.exists():
        shutil.rmtree(dst)

    def link(s, d):
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)
    shutil.copytree(src, dst, copy_function=link)


def start(args) -> int:
    state = args.state.resolve()
    root = args.root.resolve()
    # A generated fixture index has manifest.json; a `gpulock mirror` directory manifest.toml.
    if not (root / "manifest.json").is_file() and not (root / "manifest.toml").is_file():
        raise SystemExit(f"servers: {root} is not a generated fixture index (no manifest.json); "
                         "build the gpulock_fixtures target first")
    if not Path(NGINX).is_file():
        raise SystemExit(f"servers: {NGINX} not found (Debian package nginx-light; scripts/install-deps)")
    state.mkdir(parents=True, exist_ok=True)
    stop(state, quiet=True)
    for name in ("access.log", "error.log", "fault.log", "nginx.conf", "servers.env", "nginx.out"):
        (state / name).unlink(missing_ok=True)
    for d in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (state / "tmp" / d).mkdir(parents=True, exist_ok=True)
    if args.copy:
        copy_tree(root, state / "index")
        root = state / "index"
    if not args.no_tls:
        make_certs(state / "tls")

    http_port = https_port = 0
    for attempt in range(8):
        http_port = free_port()
        https_port = free_port() if not args.no_tls else None
        (state / "nginx.conf").write_text(nginx_conf(state, root, http_port, https_port, args.page_max_age,
                                                     getattr(args, "gzip_static", False)))
        with open(state / "nginx.out", "w") as out:
            p = subprocess.run([NGINX, "-p", f"{state}/", "-c", f"{state}/nginx.conf", "-e", f"{state}/error.log"],
                               stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        if p.returncode == 0:
            break
        msg = (state / "nginx.out").read_text() + (state / "error.log").read_text() \
            if (state / "error.log").exists() else (state / "nginx.out").read_text()
        if "Address already in use" not in msg or attempt == 7:
            raise SystemExit(f"servers: nginx failed to start:\n{msg}")
    deadline = time.monotonic() + 10
    while not (state / "nginx.pid").is_file() and time.monotonic() < deadline:
        time.sleep(0.01)
    if not (state / "nginx.pid").is_file():
        raise SystemExit("servers: nginx started but wrote no pid file")

    env = {"STATE_DIR": str(state), "INDEX_ROOT": str(root), "MANIFEST": str(root / "manifest.json"),
           "HTTP_PORT": str(http_port), "HTTP_URL": f"http://127.0.0.1:{http_port}",
           "PYPI_URL": f"http://127.0.0.1:{http_port}/simple/",
           "TORCH_INDEX_BASE": f"http://127.0.0.1:{http_port}/whl",
           "FIND_LINKS_URL": f"http://127.0.0.1:{http_port}/find-links/",
           "FILE_INDEX_URL": f"file://{root}/simple/",
           "ACCESS_LOG": str(state / "access.log"), "ERROR_LOG": str(state / "error.log"),
           "PAGE_MAX_AGE": str(args.page_max_age),
           "NGINX_PID": (state / "nginx.pid").read_text().strip()}
    if https_port:
        env.update({"HTTPS_PORT": str(https_port), "HTTPS_URL": f"https://127.0.0.1:{https_port}",
                    "HTTPS_PYPI_URL": f"https://127.0.0.1:{https_port}/simple/",
                    "HTTPS_TORCH_INDEX_BASE": f"https://127.0.0.1:{https_port}/whl",
                    "CA_FILE": str(state / "tls" / "ca.pem")})
    if not args.no_fault:
        (state / "fault.port").unlink(missing_ok=True)
        with open(state / "fault.out", "w") as out:
            fp = subprocess.Popen([sys.executable, str(HERE / "fault_server.py"), "--root", str(root),
                                   "--state", str(state)], stdin=subprocess.DEVNULL, stdout=out,
                                  stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)
        (state / "fault.pid").write_text(f"{fp.pid}\n")
        deadline = time.monotonic() + 10
        while not (state / "fault.port").is_file():
            if fp.poll() is not None or time.monotonic() > deadline:
                stop(state, quiet=True)
                raise SystemExit("servers: the fault server did not start:\n" + (state / "fault.out").read_text())
            time.sleep(0.01)
        port = int((state / "fault.port").read_text())
        env.update({"FAULT_PORT": str(port), "FAULT_URL": f"http://127.0.0.1:{port}",
                    "FAULT_LOG": str(state / "fault.log"), "FAULT_PID": str(fp.pid)})
    write_env(state / "servers.env", env)
    if args.env_file:
        write_env(args.env_file, env)
    if not args.quiet:
        print("".join(f"{k}={v}\n" for k, v in env.items()), end="")
    return 0


def regenerate(state: Path, overlays: list[Path]) -> int:
    """Regenerates a --copy tree with the build's generator inputs plus overlays."""
    state = state.resolve()
    env = read_env(state / "servers.env")
    root = Path(env.get("INDEX_ROOT", ""))
    if not env or state not in root.parents:
        raise SystemExit(f"servers: {state} does not serve a copy (start it with --copy) - "
                         "refusing to regenerate a shared tree")
    import json
    inputs = json.loads((root / "manifest.json").read_text()).get("inputs", {})
    cmd = [sys.executable, str(HERE.parent.parent / "fixtures" / "generate.py"), "-q",
           "--data", inputs["data"], "--out", str(root), "--scale", str(inputs.get("scale", 1)),
           "--timestamp", str(inputs.get("timestamp", 1755561600))]
    if inputs.get("extra_files"):
        cmd += ["--extra-files", inputs["extra_files"]]
    if inputs.get("cache_dir"):
        cmd += ["--cache-dir", inputs["cache_dir"]]
    for o in overlays:
        cmd += ["--overlay", str(o.resolve())]
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL)
    return p.returncode


def status(state: Path) -> int:
    state = state.resolve()
    env = read_env(state / "servers.env")
    ok = True
    for key in ("NGINX_PID", "FAULT_PID"):
        if key in env:
            up = ours(int(env[key]), state)
            ok &= up
            print(f"{key}={env[key]} {'running' if up else 'NOT running'}")
    return 0 if env and ok else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("start")
    s.add_argument("--root", type=Path, required=True)
    s.add_argument("--state", type=Path, required=True)
    s.add_argument("--env-file", type=Path)
    s.add_argument("--copy", action="store_true", help="serve a hard-linked copy made in STATE/index")
    s.add_argument("--page-max-age", type=int, default=600)
    s.add_argument("--no-tls", action="store_true")
    s.add_argument("--no-fault", action="store_true")
    s.add_argument("--gzip-static", action="store_true",
                   help="serve <file>.gz where present instead of compressing on the fly (benchmarks)")
    s.add_argument("-q", "--quiet", action="store_true")
    t = sub.add_parser("stop")
    t.add_argument("--state", type=Path, required=True)
    u = sub.add_parser("status")
    u.add_argument("--state", type=Path, required=True)
    g = sub.add_parser("regenerate", help="regenerate a --copy tree with overlays (drift tests)")
    g.add_argument("--state", type=Path, required=True)
    g.add_argument("--overlay", type=Path, action="append", default=[])
    c = sub.add_parser("copy")
    c.add_argument("--from", dest="src", type=Path, required=True)
    c.add_argument("--to", dest="dst", type=Path, required=True)
    args = ap.parse_args()
    if args.cmd == "start":
        return start(args)
    if args.cmd == "stop":
        return stop(args.state)
    if args.cmd == "status":
        return status(args.state)
    if args.cmd == "regenerate":
        return regenerate(args.state, args.overlay)
    copy_tree(args.src, args.dst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
