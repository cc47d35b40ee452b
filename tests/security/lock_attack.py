#!/usr/bin/env python3
"""gpulock's attack suite, round 3 (issue 40): hostile locks and hostile local files.

    lock_attack.py ITEM --gpulock EXE --work DIR

A lock is input: every field a command turns into a path, a URL or a number is checked when the
lock is read, and a local file gpulock reads must be a regular file of bounded size. Each ITEM
writes hostile locks (and wheels, FIFOs, a mirror) under DIR, runs the real gpulock binary
(Python standard library only) and asserts the safe outcome:

  fields        a hostile sha256/url/path/size (or a [tool.gpulock.gpu] value that does not
                parse) exits 3 with one error line, from every command
                that reads a lock, and touches nothing (a victim where `../` would lead stays)
  local-files   file:///dev/zero, path = "/dev/zero", a FIFO: install and mirror add end at
                once with an error; a local file larger than the lock's size is refused
  mirror        mirror add after a tampered store puts the genuine bytes back (verify fails,
                add, verify passes and the stored files are the originals); `.part` leftovers
                are reported by verify and removed by add; two adds sharing a mirror wait for
                each other

Exit 0 when every check holds; else every failed check is printed.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import io
import os
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import hint_log  # noqa: E402  (tests/support/hint_log.py: hints for ctest hints_run)

FAILURES: list[str] = []


def check(cond: bool, what: str) -> None:
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


# ---- wheels and locks --------------------------------------------------------------------------

def make_wheel(out: Path, name: str = "alpha", version: str = "1.0") -> tuple[Path, bytes, str]:
    """(path, bytes, METADATA text) of a minimal wheel written under `out`."""
    dist = f"{name}-{version}"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    members = {f"{name}/__init__.py": b"VALUE = 1\n",
               f"{dist}.dist-info/METADATA": meta.encode(),
               f"{dist}.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: lock_attack\n"
                                         b"Root-Is-Purelib: true\nTag: py3-none-any\n"}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        rows = []
        for n, data in members.items():
            z.writestr(zipfile.ZipInfo(n, (2024, 1, 1, 0, 0, 0)), data)
            rows.append(f"{n},,")
        rows.append(f"{dist}.dist-info/RECORD,,")
        z.writestr(zipfile.ZipInfo(f"{dist}.dist-info/RECORD", (2024, 1, 1, 0, 0, 0)),
                   "\n".join(rows) + "\n")
    path = out / f"{dist}-py3-none-any.whl"
    path.write_bytes(buf.getvalue())
    return path, buf.getvalue(), meta


def toml_str(s: str) -> str:
    """A TOML basic string; control characters escaped so the hostile value survives TOML."""
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def write_lock(path: Path, wheel: dict, name: str = "alpha", version: str = "1.0",
               tail: str = "") -> Path:
    """A lock of one package with one wheel; `wheel` maps keys to Python values (str, int) or to
    raw TOML text (bytes). `tail`: TOML text after the package (a [tool.gpulock] table)."""
    lines = ['lock-version = "1.0"', 'created-by = "tests/security/lock_attack.py"',
             'requires-python = ">=3.8"', "", "[[packages]]", f'name = "{name}"',
             f'version = "{version}"', "", "[[packages.wheels]]"]
    for k, v in wheel.items():
        if isinstance(v, bytes):
            lines.append(f"{k} = {v.decode()}")
        elif isinstance(v, int):
            lines.append(f"{k} = {v}")
        elif isinstance(v, dict):
            lines.append(f"{k} = {{ " + ", ".join(f"{a} = {toml_str(b)}" for a, b in v.items()) + " }")
        else:
            lines.append(f"{k} = {toml_str(v)}")
    path.write_text("\n".join(lines) + "\n" + tail)
    return path


def good_wheel_fields(wheel: Path, data: bytes) -> dict:
    return {"name": wheel.name, "url": wheel.resolve().as_uri(), "size": len(data),
            "hashes": {"sha256": sha(data)}}


def make_venv(path: Path) -> Path:
    if not path.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    return path


def tree_snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under root (and root) with its bytes (None for directories)."""
    out: dict[str, bytes | None] = {}
    if not root.exists():
        return out
    out[str(root)] = None if root.is_dir() else root.read_bytes()
    for p in root.rglob("*"):
        out[str(p)] = None if p.is_dir() else p.read_bytes()
    return out


# ---- gpulock -----------------------------------------------------------------------------------

class Gpulock:
    def __init__(self, exe: str, work: Path):
        self.exe, self.work = os.path.abspath(exe), work
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work),
                    "NO_COLOR": "1", "GPULOCK_PROBE_TIMEOUT_MS": "2000",
                    "GPULOCK_HTTP_RETRIES": "0", "GPULOCK_CACHE_DIR": str(work / "default-cache")}

    def run(self, *args: str, env: dict | None = None, timeout: float = 120):
        e = dict(self.env)
        e.update(env or {})
        started = time.monotonic()
        try:
            p = subprocess.run([self.exe, *args], env=e, cwd=self.work, capture_output=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            print(f"$ gpulock {' '.join(args)}\n  -> timed out after {timeout} s")
            p = subprocess.CompletedProcess(args, -999, b"", b"timed out")
        p.seconds = time.monotonic() - started
        p.out = p.stdout.decode(errors="replace")
        p.err = p.stderr.decode(errors="replace")
        hint_log.keep([self.exe, *args], e, self.work, p.returncode, p.out, p.err)
        print(f"$ gpulock {' '.join(args)}\n  -> {p.returncode} ({p.seconds:.1f} s)\n" +
              "".join(f"  | {line}\n" for line in (p.out + p.err).splitlines()[:20]))
        return p

    def start(self, *args: str) -> subprocess.Popen:
        print(f"$ gpulock {' '.join(args)} &")
        return subprocess.Popen([self.exe, *args], env=self.env, cwd=self.work,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def error_lines(p) -> list[str]:
    return [line for line in (p.out + p.err).splitlines() if line.startswith("error:")]


# ---- fields ------------------------------------------------------------------------------------

def attack_fields(g: Gpulock, work: Path) -> None:
    """Every file field of a lock is checked when read: exit 3, one error line naming the field,
    the file and the line, from every command that reads a lock; nothing is touched."""
    wheel, data, _ = make_wheel(work)
    good = write_lock(work / "good.toml", good_wheel_fields(wheel, data))
    r = g.run("export", "--lock", str(good))
    check(r.returncode == 0, f"the good lock exports (exit 0; got {r.returncode})")

    # The install cache is <cache>/wheels-v1/<sha256>: "../../victim" from it is work/c/victim.
    cache = work / "c" / "cache"
    (cache / "wheels-v1" / "partial").mkdir(parents=True)
    victim = work / "c" / "victim"
    victim.mkdir()
    (victim / "victim.txt").write_text("precious\n")
    abs_victim = work / "abs-victim"
    abs_victim.mkdir()
    (abs_victim / "victim.txt").write_text("precious\n")
    venv = make_venv(work / "venv")
    mirror = work / "mirror"
    before = {**tree_snapshot(victim), **tree_snapshot(abs_victim), **tree_snapshot(cache)}
    venv_before = tree_snapshot(venv / "lib")

    base = good_wheel_fields(wheel, data)
    ctrl_path = "alpha\x01-1.0-py3-none-any.whl"
    hostile = {
        # field shown in the error -> (description, wheel fields)
        "sha256-dotdot": ("sha256", {**base, "hashes": {"sha256": "../../victim"}}),
        "sha256-absolute": ("sha256", {**base, "hashes": {"sha256": str(abs_victim)}}),
        "sha256-upper": ("sha256", {**base, "hashes": {"sha256": sha(data).upper()}}),
        "sha256-63": ("sha256", {**base, "hashes": {"sha256": sha(data)[:63]}}),
        "sha256-nul": ("sha256", {**base, "hashes": {"sha256": sha(data)[:63] + "\x00"}}),
        "sha512-slash": ("sha512", {**base, "hashes": {"sha256": sha(data), "sha512": "ab/" * 20}}),
        "url-ftp": ("url", {**base, "url": f"ftp://127.0.0.1/{wheel.name}"}),
        "url-gopher": ("url", {**base, "url": f"gopher:{wheel.name}"}),
        "url-newline": ("url", {**base, "url": f"https://example.invalid/{wheel.name}\nX: y"}),
        "url-space": ("url", {**base, "url": f"https://example.invalid/a b/{wheel.name}"}),
        "path-control": ("path", {k: v for k, v in base.items() if k != "url"} | {"path": ctrl_path}),
        "size-negative": ("size", {**base, "size": -1}),
        "size-huge": ("size", {**base, "size": 2**62}),
        "size-string": ("size", {**base, "size": "123"}),
    }
    # [tool.gpulock.gpu]'s values are typed when read: one that does not parse is refused too.
    gpu_values = {
        "gpu-driver": ("driver", 'driver = "abc"'),
        "gpu-cuda": ("cuda", 'cuda = "x"'),
        "gpu-archs": ("archs", 'archs = ["sm_90", "sm_x"]'),
    }
    cases = [(label, field, fields, "") for label, (field, fields) in hostile.items()]
    cases += [(label, field, base, f"\n[tool.gpulock]\nschema = 1\n\n[tool.gpulock.gpu]\n{value}\n")
              for label, (field, value) in gpu_values.items()]
    for label, field, fields, tail in cases:
        lock = write_lock(work / f"{label}.toml", fields, tail=tail)
        commands = {
            "install": ("install", "--lock", str(lock), "--venv", str(venv), "--cache-dir",
                        str(cache), "--no-probe"),
            "install --dry-run": ("install", "--lock", str(lock), "--venv", str(venv),
                                  "--cache-dir", str(cache), "--no-probe", "--dry-run"),
            "check": ("check", "--lock", str(lock)),
            "export": ("export", "--lock", str(lock)),
            "diff": ("diff", str(good), str(lock)),
            "probe --lock": ("probe", "--lock", str(lock)),
            "mirror add": ("mirror", "add", str(lock), "--to", str(mirror), "--cache-dir",
                           str(cache)),
        }
        for what, argv in commands.items():
            r = g.run(*argv, timeout=60)
            errs = error_lines(r)
            check(r.returncode == 3, f"{label}: {what} exits 3 (got {r.returncode})")
            check(len(errs) == 1, f"{label}: {what} prints one error line (got {len(errs)})")
            check(bool(errs) and f"'{field}'" in errs[0] and str(lock) in errs[0]
                  and f"{lock}:" in errs[0],
                  f"{label}: {what}'s error names the field '{field}', the file and the line")
    after = {**tree_snapshot(victim), **tree_snapshot(abs_victim), **tree_snapshot(cache)}
    check(after == before, "the victims and the cache are untouched")
    check(tree_snapshot(venv / "lib") == venv_before, "nothing was installed into the venv")
    check(not mirror.exists(), "no mirror was created")


# ---- local files -------------------------------------------------------------------------------

def attack_local_files(g: Gpulock, work: Path) -> None:
    """Local files are read only when regular, and never past the size the lock records."""
    wheel, data, _ = make_wheel(work)
    venv = make_venv(work / "venv")
    fifo = work / "alpha-1.0-py3-none-any.fifo"
    os.mkfifo(fifo)
    base = {"name": wheel.name, "hashes": {"sha256": sha(data)}}
    cases = {
        "url file:///dev/zero": {**base, "url": "file:///dev/zero"},
        "url file:///dev/zero with a size": {**base, "url": "file:///dev/zero", "size": len(data)},
        "path /dev/zero": {**base, "path": "/dev/zero"},
        "url to a FIFO": {**base, "url": fifo.as_uri()},
        "path to a FIFO": {**base, "path": str(fifo)},
        "relative path to a FIFO": {**base, "path": fifo.name},
        "url to a directory": {**base, "url": work.as_uri()},
    }
    for i, (label, fields) in enumerate(cases.items()):
        lock = write_lock(work / f"local-{i}.toml", fields)
        r = g.run("install", "--lock", str(lock), "--venv", str(venv), "--cache-dir",
                  str(work / f"cache-{i}"), "--no-probe", timeout=20)
        check(r.returncode not in (0, -999), f"{label}: install fails (got {r.returncode})")
        check(r.seconds < 20, f"{label}: install ends within 20 s")
        check(len(error_lines(r)) == 1, f"{label}: install prints one error line")
        check("regular file" in r.err, f"{label}: install says the file is not a regular file")
        r = g.run("mirror", "add", str(lock), "--to", str(work / f"mirror-{i}"), "--cache-dir",
                  str(work / f"cache-{i}"), timeout=20)
        check(r.returncode != -999 and r.seconds < 20, f"{label}: mirror add ends within 20 s")
        if "url" in fields:
            check(r.returncode not in (0, -999), f"{label}: mirror add fails (got {r.returncode})")
            check(len(error_lines(r)) == 1 and "regular file" in r.err,
                  f"{label}: mirror add prints one error line saying it is not a regular file")
        else:  # mirror add keeps files with a URL; a path-only file is named as not mirrored
            check(r.returncode == 0 and "not mirrored" in r.err,
                  f"{label}: mirror add passes over the path-only file, saying so")

    # A regular file larger than the lock's size is refused: the read stops at the size.
    lock = write_lock(work / "short-size.toml",
                      {**base, "url": wheel.resolve().as_uri(), "size": len(data) - 1})
    r = g.run("install", "--lock", str(lock), "--venv", str(venv), "--cache-dir",
              str(work / "cache-short"), "--no-probe", timeout=20)
    check(r.returncode == 4 and "larger than" in r.err,
          f"install of a local file larger than the lock's size exits 4, saying so "
          f"(got {r.returncode})")
    r = g.run("mirror", "add", str(lock), "--to", str(work / "mirror-short"), "--cache-dir",
              str(work / "cache-short"), timeout=20)
    check(r.returncode == 4 and "larger than" in r.err,
          f"mirror add of a local file larger than the lock's size exits 4 (got {r.returncode})")
    # Without a size, GPULOCK_MAX_DOWNLOAD_SIZE bounds it.
    lock = write_lock(work / "no-size.toml", {**base, "url": wheel.resolve().as_uri()})
    r = g.run("install", "--lock", str(lock), "--venv", str(venv), "--cache-dir",
              str(work / "cache-limit"), "--no-probe", env={"GPULOCK_MAX_DOWNLOAD_SIZE": "100"},
              timeout=20)
    check(r.returncode == 4 and "GPULOCK_MAX_DOWNLOAD_SIZE" in r.err,
          f"install of a local file over GPULOCK_MAX_DOWNLOAD_SIZE exits 4 (got {r.returncode})")
    # The genuine lock still installs.
    lock = write_lock(work / "genuine.toml", good_wheel_fields(wheel, data))
    r = g.run("install", "--lock", str(lock), "--venv", str(venv), "--cache-dir",
              str(work / "cache-genuine"), "--no-probe", timeout=60)
    check(r.returncode == 0, f"the genuine lock installs (got {r.returncode})")


# ---- mirror ------------------------------------------------------------------------------------

def attack_mirror(g: Gpulock, work: Path) -> None:
    """The store is never trusted: mirror add re-derives what it holds from the lock."""
    wheel, data, meta = make_wheel(work)
    h = sha(data)
    lock = write_lock(work / "pylock.toml", good_wheel_fields(wheel, data))
    mirror, cache = work / "mirror", work / "cache"
    stored = mirror / "files" / "sha256" / h[:2] / h / wheel.name
    stored_meta = stored.with_name(wheel.name + ".metadata")

    def add():
        return g.run("mirror", "add", str(lock), "--to", str(mirror), "--cache-dir", str(cache))

    r = add()
    check(r.returncode == 0, f"mirror add exits 0 (got {r.returncode})")
    check(stored.read_bytes() == data if stored.exists() else False, "the wheel is stored")
    check(stored_meta.read_text() == meta if stored_meta.exists() else False,
          "its METADATA is stored")

    # A tampered .metadata alone: verify flags it, add puts the genuine one back.
    stored_meta.write_text(meta + "Requires-Dist: evil\n")
    r = g.run("mirror", "verify", str(mirror))
    check(r.returncode == 1 and ".metadata" in r.out, "verify flags the tampered .metadata (exit 1)")
    r = add()
    check(r.returncode == 0, f"mirror add again exits 0 (got {r.returncode})")
    check(stored_meta.read_text() == meta, "the stored .metadata is the wheel's METADATA again")
    check(sha(meta) in (mirror / "manifest.toml").read_text() and
          sha(meta + "Requires-Dist: evil\n") not in (mirror / "manifest.toml").read_text(),
          "the manifest records the genuine METADATA's hash")
    r = g.run("mirror", "verify", str(mirror))
    check(r.returncode == 0, f"verify passes (got {r.returncode})")

    # A tampered wheel and .metadata: add replaces both with the genuine bytes.
    stored.write_bytes(data + b"tampered")
    stored_meta.write_text("Metadata-Version: 2.1\nName: alpha\nVersion: 1.0\nRequires-Dist: evil\n")
    r = g.run("mirror", "verify", str(mirror))
    check(r.returncode == 1, f"verify flags the tampered wheel (exit 1; got {r.returncode})")
    r = g.run("mirror", "add", str(lock), "--to", str(mirror), "--cache-dir", str(cache),
              "--offline")
    check(r.returncode == 1 and wheel.name in r.err,
          f"mirror add --offline names the tampered wheel as missing (exit 1; got {r.returncode})")
    r = add()
    check(r.returncode == 0, f"mirror add again exits 0 (got {r.returncode})")
    r = g.run("mirror", "verify", str(mirror))
    check(r.returncode == 0, f"verify passes (got {r.returncode})")
    check(stored.read_bytes() == data, "the stored wheel is the genuine bytes again")
    check(stored_meta.read_text() == meta, "the stored .metadata is the genuine METADATA again")

    # Leftovers of an interrupted write: verify reports them, add removes them.
    leftovers = [stored.with_name(wheel.name + ".part"),
                 stored.with_name(f".{wheel.name}.metadata.tmp-1-0-deadbeef")]
    for p in leftovers:
        p.write_bytes(b"half")
    r = g.run("mirror", "verify", str(mirror))
    check(r.returncode == 1 and all(p.name in r.out for p in leftovers),
          f"verify reports the leftovers (exit 1; got {r.returncode})")
    r = add()
    check(r.returncode == 0 and not any(p.exists() for p in leftovers),
          "mirror add removes the leftovers")
    leftovers[0].write_bytes(b"half")
    r = g.run("mirror", "gc", str(mirror), "--keep", str(lock))
    check(r.returncode == 0 and not leftovers[0].exists(), "mirror gc removes a leftover")
    r = g.run("mirror", "verify", str(mirror))
    check(r.returncode == 0, f"verify passes (got {r.returncode})")

    # Two adds sharing the mirror: the second waits for the first's lock, then succeeds.
    lock_file = mirror / ".gpulock-mirror.lock"
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    shutil.rmtree(mirror / "files")
    started = time.monotonic()
    p = g.start("mirror", "add", str(lock), "--to", str(mirror), "--cache-dir", str(cache))
    threading.Timer(2.0, lambda: os.close(fd)).start()
    out, err = p.communicate(timeout=60)
    took = time.monotonic() - started
    print("".join(f"  | {line}\n" for line in (out + err).decode(errors="replace").splitlines()))
    check(p.returncode == 0, f"a mirror add that found the mirror in use succeeds (got {p.returncode})")
    check(took >= 1.9, f"it waited for the other (took {took:.1f} s)")
    check(b"waiting" in err, "it says it is waiting")
    check(stored.exists() and stored.read_bytes() == data, "the wheel is stored")
    procs = [g.start("mirror", "add", str(lock), "--to", str(work / "mirror2"), "--cache-dir",
                     str(cache)) for _ in range(4)]
    codes = [q.wait(timeout=60) for q in procs]
    check(codes == [0, 0, 0, 0], f"four concurrent adds into one new mirror all succeed ({codes})")


# ---- main --------------------------------------------------------------------------------------

ATTACKS = {"fields": attack_fields, "local-files": attack_local_files, "mirror": attack_mirror}


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
