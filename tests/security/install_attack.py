#!/usr/bin/env python3
"""The installer's attack and fault suite (issue 40): hostile wheels, tampered caches and
environments, concurrent runs, each against the real gpulock binary.

    install_attack.py ITEM --gpulock EXE --work DIR

Each ITEM builds its wheels and locks here (standard library only, file:// URLs), makes
venvs with `python3 -m venv --without-pip`, runs `gpulock install` and asserts the safe
outcome. Exit 0 when every check holds; else every failed check is printed.
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
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


# ---- wheels and locks --------------------------------------------------------------------------

def record_hash(data: bytes) -> tuple[str, str]:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}", str(len(data))


def make_wheel(out: Path, name: str, version: str, files: dict[str, bytes],
               info: str | None = None, extra_infos: dict[str, dict[str, bytes]] | None = None,
               purelib: bool = True) -> Path:
    """A wheel `name-version-py3-none-any.whl` with `files`, its dist-info named `info`
    (default `name-version.dist-info`) and, as a hostile wheel may, more dist-info trees."""
    out.mkdir(parents=True, exist_ok=True)
    dist = f"{name.replace('-', '_')}-{version}"
    info = info or f"{dist}.dist-info"
    members = dict(files)
    members[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n").encode()
    members[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: install_attack\n"
                                f"Root-Is-Purelib: {'true' if purelib else 'false'}\n"
                                f"Tag: py3-none-any\n").encode()
    for other, other_files in (extra_infos or {}).items():
        for n, data in other_files.items():
            members[f"{other}/{n}"] = data
    path = out / f"{dist}-py3-none-any.whl"
    rows = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for n, data in members.items():
            zi = zipfile.ZipInfo(n, (2024, 1, 1, 0, 0, 0))
            zi.external_attr = (0o100000 | (0o755 if "/scripts/" in n else 0o644)) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
            h, s = record_hash(data)
            rows.append(f"{n},{h},{s}")
        rows.append(f"{info}/RECORD,,")
        z.writestr(f"{info}/RECORD", "\n".join(rows) + "\n")
    return path


def write_lock(path: Path, wheels: list[tuple[str, str, Path]]) -> Path:
    lines = ['lock-version = "1.0"', 'created-by = "tests/security/install_attack.py"',
             'requires-python = ">=3.8"']
    for name, version, wheel in wheels:
        data = wheel.read_bytes()
        lines += ["", "[[packages]]", f'name = "{name}"', f'version = "{version}"', "",
                  "[[packages.wheels]]", f'name = "{wheel.name}"',
                  f'url = "file://{wheel.resolve()}"', f"size = {len(data)}",
                  f'hashes = {{ sha256 = "{hashlib.sha256(data).hexdigest()}" }}']
    path.write_text("\n".join(lines) + "\n")
    return path


def make_venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    return path


def site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


# ---- gpulock -----------------------------------------------------------------------------------

class Gpulock:
    def __init__(self, exe: str, work: Path):
        self.exe, self.work = os.path.abspath(exe), work
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work),
                    "NO_COLOR": "1", "GPULOCK_PROBE_TIMEOUT_MS": "2000"}

    def argv(self, args) -> list[str]:
        return [self.exe, *args]

    def run(self, *args: str, env: dict | None = None, timeout: float = 120):
        e = dict(self.env)
        e.update(env or {})
        try:
            p = subprocess.run(self.argv(args), env=e, cwd=self.work, capture_output=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            print(f"$ gpulock {' '.join(args)}\n  -> timed out after {timeout} s")
            p = subprocess.CompletedProcess(args, -999, b"", b"timed out")
        p.out = p.stdout.decode(errors="replace")
        p.err = p.stderr.decode(errors="replace")
        hint_log.keep(self.argv(args), e, self.work, p.returncode, p.out, p.err)
        print(f"$ gpulock {' '.join(args)}\n  -> {p.returncode}\n" +
              "".join(f"  | {line}\n" for line in (p.out + p.err).splitlines()[:30]))
        return p

    def start(self, *args: str) -> subprocess.Popen:
        e = dict(self.env)
        print(f"$ gpulock {' '.join(args)} &")
        return subprocess.Popen(self.argv(args), env=e, cwd=self.work, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)

    def install(self, lock: Path, venv: Path, cache: Path, *args: str, **kw):
        return self.run("install", "--lock", str(lock), "--venv", str(venv), "--cache-dir",
                        str(cache), "--no-probe", *args, **kw)


def one_error_line(p) -> bool:
    return (p.out + p.err).count("error:") == 1


# ---- 1: a planted journal ----------------------------------------------------------------------

def attack_journal(g: Gpulock, work: Path) -> None:
    """A wheel that ships `.gpulock-stash-zz/journal` is refused; a stash planted in the venv
    by anything else is not replayed."""
    victim = work / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me\n")
    venv = make_venv(work / "venv")
    site = site_packages(venv)
    journal = ("gpulock-install-journal 1\n"
               f"F\t{victim}/precious.txt\t\n"
               f"A\t{victim}/planted.sh\t{site}/.gpulock-stash-zz/payload\n")
    wheels = work / "wheels"
    evil = make_wheel(wheels, "evilpkg", "1.0", {
        "evilpkg/__init__.py": b"",
        ".gpulock-stash-zz/journal": journal.encode(),
        ".gpulock-stash-zz/payload": b"#!/bin/sh\necho pwned\n",
    })
    nested = make_wheel(wheels, "nestedpkg", "1.0", {
        "nestedpkg/__init__.py": b"",
        "nestedpkg-1.0.data/data/.gpulock-stash-q/journal": journal.encode(),
    })
    good = make_wheel(wheels, "goodpkg", "1.0", {"goodpkg/__init__.py": b"X = 1\n"})
    cache = work / "cache"
    p = g.install(write_lock(work / "evil.toml", [("evilpkg", "1.0", evil)]), venv, cache)
    check(p.returncode == 3 and one_error_line(p) and ".gpulock-stash-zz" in p.out + p.err,
          "a wheel shipping .gpulock-stash-*/journal is refused (exit 3, one error line naming it)")
    check(not (site / ".gpulock-stash-zz").exists(), "nothing of the refused wheel is in the venv")
    p = g.install(write_lock(work / "nested.toml", [("nestedpkg", "1.0", nested)]), venv, cache)
    check(p.returncode == 3, "a reserved name under .data/data is refused too (exit 3)")

    # Planted by hand (another installer, a tarball): never replayed.
    stash = site / ".gpulock-stash-zz"
    stash.mkdir()
    (stash / "journal").write_text(journal)
    (stash / "payload").write_text("#!/bin/sh\necho pwned\n")
    lock = write_lock(work / "good.toml", [("goodpkg", "1.0", good)])
    p = g.install(lock, venv, cache)
    check(p.returncode == 0, "a sync with a planted stash in the venv still works")
    check((victim / "precious.txt").exists(), "the planted journal deleted nothing outside the venv")
    check(not (victim / "planted.sh").exists(), "the planted journal wrote nothing outside the venv")
    check("not written by" in p.out + p.err, "install says the stash was not written by gpulock")

    # A journal gpulock did write, whose paths were edited to point outside: not followed.
    venv2 = make_venv(work / "venv2")
    p = g.install(lock, venv2, cache, env={"GPULOCK_TEST_INSTALL_KILL": "file 1"})
    check(p.returncode != 0, "the test hook killed a sync half way")
    stashes = list(venv2.glob(".gpulock-stash-*")) + list(site_packages(venv2).glob(".gpulock-stash-*"))
    check(len(stashes) == 1, "the killed sync left one stash")
    if stashes:
        j = stashes[0] / "journal"
        text = j.read_text()
        lines = text.splitlines()
        header = [line for line in lines if not line.startswith(("F\t", "D\t", "A\t", "U\t"))]
        # A symbolic link planted in the environment leads outside: not followed either.
        sneaky = site_packages(venv2) / "sneaky"
        sneaky.symlink_to(victim)
        (victim / "linked.txt").write_text("keep me too\n")
        j.write_text("\n".join(header + [f"F\t{victim}/precious.txt\t",
                                         f"D\t{victim}\t",
                                         f"F\t{sneaky}/linked.txt\t"]) + "\n")
        p = g.install(lock, venv2, cache)
        check((victim / "precious.txt").exists(),
              "an edited journal naming a path outside the scheme removes nothing there")
        check((victim / "linked.txt").exists(),
              "nor through a symbolic link planted in the environment")
        check(p.returncode != 0 or "outside" in p.out + p.err,
              "install says the journal names a path outside the environment")


# ---- 3: two syncs at once ----------------------------------------------------------------------

def big_wheel(wheels: Path, name: str, files: int) -> Path:
    return make_wheel(wheels, name, "1.0", {f"{name}/m{i:05d}.py": f"X = {i}\n".encode()
                                            for i in range(files)})


def attack_concurrent(g: Gpulock, work: Path) -> None:
    wheels = work / "wheels"
    big = big_wheel(wheels, "bigpkg", 20000)
    lock = write_lock(work / "big.toml", [("bigpkg", "1.0", big)])
    cache = work / "cache"
    # Warm the cache first, so the first run spends its time linking (its journal live).
    warm = make_venv(work / "warm")
    check(g.install(lock, warm, cache).returncode == 0, "the cache is warmed")
    venv = make_venv(work / "venv")
    a = g.start("install", "--lock", str(lock), "--venv", str(venv), "--cache-dir", str(cache),
                "--no-probe")
    site = site_packages(venv)
    deadline = time.time() + 60
    while time.time() < deadline and not list(site.glob(".gpulock-stash-*")) and \
            not list(venv.glob(".gpulock-stash-*")) and a.poll() is None:
        time.sleep(0.005)
    live = a.poll() is None
    check(live, "the first sync is still running when the second starts")
    b = g.run("install", "--lock", str(lock), "--venv", str(venv), "--cache-dir", str(cache),
              "--no-probe", "--no-wait")
    check(b.returncode == 74 and one_error_line(b), "a second sync with --no-wait exits 74")
    check(f"PID {a.pid}" in b.out + b.err, "it names the PID holding the environment")
    c = g.run("check", "--env", "--lock", str(lock), "--python", str(venv / "bin" / "python"))
    if a.poll() is None:
        check("a sync is in progress" in c.out + c.err and c.returncode != 1,
              "check --env during a sync says a sync is in progress (not drift)")
    d = g.run("install", "--lock", str(lock), "--venv", str(venv), "--cache-dir", str(cache),
              "--no-probe", "--lock-timeout", "120")
    a_out, a_err = a.communicate(timeout=120)
    check(a.returncode == 0, "the first sync finished (exit 0)")
    check(d.returncode == 0, "a second sync waited for the first, then ran (exit 0)")
    n = len(list((site / "bigpkg").glob("m*.py")))
    check(n == 20000, f"every file of the package is installed ({n} of 20000)")
    p = g.run("check", "--env", "--lock", str(lock), "--python", str(venv / "bin" / "python"))
    check(p.returncode == 0, "check --env after both: ok")


# ---- 4 and 5: the cache ------------------------------------------------------------------------

def cache_entry(cache: Path, wheel: Path) -> Path:
    return cache / "wheels-v1" / hashlib.sha256(wheel.read_bytes()).hexdigest()


def attack_cache(g: Gpulock, work: Path) -> None:
    wheels = work / "wheels"
    pkg = make_wheel(wheels, "cachepkg", "1.0", {f"cachepkg/m{i}.py": f"X = {i}\n".encode()
                                                 for i in range(40)} |
                     {"cachepkg/run.sh": b"#!/bin/sh\n"})
    lock = write_lock(work / "pkg.toml", [("cachepkg", "1.0", pkg)])
    cache = work / "cache"
    a = make_venv(work / "a")
    check(g.install(lock, a, cache).returncode == 0, "installed into venv a")
    entry = cache_entry(cache, pkg)
    f = entry / "cachepkg" / "m1.py"
    check(f.exists() and (f.stat().st_mode & 0o222) == 0,
          "cache entries are published read-only (no write bit)")
    # 4: an entry missing a file (a pruned or torn unpacking) is not installed as is.
    (entry / "cachepkg" / "m7.py").unlink()
    b = make_venv(work / "b")
    p = g.install(lock, b, cache)
    check(p.returncode == 0 and (site_packages(b) / "cachepkg" / "m7.py").exists(),
          "an entry missing a file is unpacked again before a venv links to it")
    # 5: an edit through a hard link (in place) does not reach the next venv.
    ina = site_packages(a) / "cachepkg" / "m2.py"
    os.chmod(ina, 0o644)
    with open(ina, "r+b") as fh:
        fh.write(b"Y")  # same size, new mtime
    c = make_venv(work / "c")
    check(g.install(lock, c, cache).returncode == 0, "installed into venv c")
    got = (site_packages(c) / "cachepkg" / "m2.py").read_bytes()
    check(got == b"X = 2\n", "an edited file is not linked into a new venv (size and mtime "
                             "compared with the entry's record)")
    p = g.run("check", "--env", "--lock", str(lock), "--python", str(a / "bin" / "python"))
    check(p.returncode == 1 and "cachepkg" in p.out and "m2.py" in p.out,
          "check --env finds the modified file of an ordinary package")
    # 4b: a file planted in an entry, or a link in place of one of its directories, makes the
    # entry unpacked again, each named (the check walks the entry by directory descriptors).
    pkgdir = entry / "cachepkg"
    os.chmod(pkgdir, 0o755)
    (pkgdir / "planted.py").write_bytes(b"import os\n")
    d = make_venv(work / "d")
    p = g.install(lock, d, cache)
    check(p.returncode == 0 and "unpacked again" in p.out + p.err and
          "cachepkg/planted.py: not one of the wheel's files" in p.out + p.err,
          "an entry with a planted file is unpacked again, the file named")
    check(not (entry / "cachepkg" / "planted.py").exists(), "the planted file is gone")
    elsewhere = work / "elsewhere"
    shutil.copytree(entry / "cachepkg", elsewhere)
    os.chmod(entry, 0o755)
    os.chmod(entry / "cachepkg", 0o755)
    shutil.rmtree(entry / "cachepkg")
    os.symlink(elsewhere, entry / "cachepkg")
    e = make_venv(work / "e")
    p = g.install(lock, e, cache)
    check(p.returncode == 0 and "cachepkg: not one of the wheel's files" in p.out + p.err,
          "an entry whose directory is a link elsewhere is unpacked again")
    check((entry / "cachepkg").is_dir() and not (entry / "cachepkg").is_symlink(),
          "the entry is a real directory again")
    check((elsewhere / "m1.py").exists(), "removing the damaged entry did not follow its link")
    # prune never removes an unpacking a live run holds.
    root = cache / "wheels-v1"
    live = root / ".tmp-live-unpack"
    live.mkdir()
    fd = os.open(live, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    stale = root / ".tmp-dead-unpack"
    stale.mkdir()
    p = g.run("cache", "prune", "--all", "--cache-dir", str(cache))
    check(p.returncode == 0 and live.exists(), "cache prune leaves an unpacking a live run holds")
    check(not stale.exists(), "cache prune removes one nobody holds")
    os.close(fd)


def attack_pidns(g: Gpulock, work: Path) -> None:
    """Two containers sharing a cache volume, both PID 1 (a PID namespace each), unpack the same
    wheel at once: neither may publish an entry missing a file."""
    wheels = work / "wheels"
    big = big_wheel(wheels, "nspkg", 6000)
    lock = write_lock(work / "ns.toml", [("nspkg", "1.0", big)])
    cache = work / "cache"
    venvs = [make_venv(work / f"v{i}") for i in range(2)]
    runs = []
    for v in venvs:
        argv = ["unshare", "--pid", "--fork", "--mount-proc", g.exe, "install", "--lock",
                str(lock), "--venv", str(v), "--cache-dir", str(cache), "--no-probe"]
        runs.append(subprocess.Popen(argv, env=dict(g.env), cwd=work, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE))
    outs = [r.communicate(timeout=240) for r in runs]
    for i, (r, (out, err)) in enumerate(zip(runs, outs)):
        print(f"run {i} -> {r.returncode}\n{(out + err).decode(errors='replace')[:2000]}")
        check(r.returncode == 0, f"install {i} in its own PID namespace (PID 1) exits 0")
    for v in venvs:
        n = len(list((site_packages(v) / "nspkg").glob("m*.py")))
        check(n == 6000, f"{v.name}: every file is installed ({n} of 6000)")
    entry = cache_entry(cache, big)
    n = len(list((entry / "nspkg").glob("m*.py"))) if entry.exists() else -1
    check(n == 6000, f"the published cache entry is complete ({n} of 6000)")
    left = [p.name for p in (cache / "wheels-v1").iterdir() if p.name.startswith(".tmp-")]
    check(not left, f"no temporary directory is left in the cache ({left})")
    v3 = make_venv(work / "v3")
    p = g.install(lock, v3, cache)
    check(p.returncode == 0 and "unpacked again" not in p.out + p.err,
          "a third install takes the entry from the cache as it is")


# ---- 6: a second dist-info, overwriting another package's files --------------------------------

def attack_dist_info(g: Gpulock, work: Path) -> None:
    wheels = work / "wheels"
    six = make_wheel(wheels, "six", "1.0", {"six.py": b"GENUINE = True\n"})
    shadow = make_wheel(wheels, "shadowpkg", "1.0", {"shadowpkg/__init__.py": b""},
                        extra_infos={"six-1.0.dist-info": {"METADATA": b"Name: six\n",
                                                           "RECORD": b"six.py,,\n"}})
    cache = work / "cache"
    venv = make_venv(work / "venv")
    p = g.install(write_lock(work / "a.toml", [("six", "1.0", six), ("shadowpkg", "1.0", shadow)]),
                  venv, cache)
    check(p.returncode == 3 and one_error_line(p) and "dist-info" in p.out + p.err,
          "a wheel with two .dist-info directories is refused (exit 3)")
    wrong = make_wheel(wheels, "wrongname", "1.0", {"wrongname/__init__.py": b""},
                       info="other-1.0.dist-info")
    p = g.install(write_lock(work / "b.toml", [("wrongname", "1.0", wrong)]), venv, cache)
    check(p.returncode == 3, "a wheel whose dist-info names another project is refused")
    wrongv = make_wheel(wheels, "wrongver", "1.0", {"wrongver/__init__.py": b""},
                        info="wrongver-2.0.dist-info")
    p = g.install(write_lock(work / "c.toml", [("wrongver", "1.0", wrongv)]), venv, cache)
    check(p.returncode == 3, "a wheel whose dist-info names another version is refused")
    # A member that overwrites a file another installed distribution owns.
    over = make_wheel(wheels, "overpkg", "1.0", {"overpkg/__init__.py": b"",
                                                 "six.py": b"EVIL = True\n"})
    check(g.install(write_lock(work / "d.toml", [("six", "1.0", six)]), venv, cache).returncode == 0,
          "six installed")
    p = g.install(write_lock(work / "e.toml", [("six", "1.0", six), ("overpkg", "1.0", over)]),
                  venv, cache)
    check(p.returncode != 0 and "six.py" in p.out + p.err,
          "a wheel overwriting six's six.py is refused, naming the file")
    check((site_packages(venv) / "six.py").read_bytes() == b"GENUINE = True\n",
          "six.py is unchanged")
    # Byte-identical shared files (every nvidia-*-cu12 wheel's empty nvidia/__init__.py) are fine
    # and stay until their last owner goes.
    n1 = make_wheel(wheels, "nvidia-one-cu12", "1.0", {"nvidia/__init__.py": b"",
                                                       "nvidia/one/lib/libone.so": b"one"})
    n2 = make_wheel(wheels, "nvidia-two-cu12", "1.0", {"nvidia/__init__.py": b"",
                                                       "nvidia/two/lib/libtwo.so": b"two"})
    v2 = make_venv(work / "v2")
    p = g.install(write_lock(work / "f.toml", [("nvidia-one-cu12", "1.0", n1),
                                               ("nvidia-two-cu12", "1.0", n2)]), v2, cache)
    check(p.returncode == 0, "two wheels sharing a byte-identical nvidia/__init__.py install")
    p = g.install(write_lock(work / "g.toml", [("nvidia-two-cu12", "1.0", n2)]), v2, cache)
    check(p.returncode == 0 and (site_packages(v2) / "nvidia" / "__init__.py").exists(),
          "removing one owner keeps the shared file for the other")
    p = g.run("check", "--env", "--lock", str(work / "g.toml"), "--python",
              str(v2 / "bin" / "python"))
    check(p.returncode == 0, "check --env: ok after removing one owner")


# ---- 7: RECORD rows outside the environment ----------------------------------------------------

def attack_record(g: Gpulock, work: Path) -> None:
    wheels = work / "wheels"
    pkg = make_wheel(wheels, "recpkg", "1.0", {"recpkg/__init__.py": b""})
    lock = write_lock(work / "pkg.toml", [("recpkg", "1.0", pkg)])
    cache = work / "cache"
    venv = make_venv(work / "venv")
    check(g.install(lock, venv, cache).returncode == 0, "installed")
    outside = work / "outside.txt"
    outside.write_text("outside\n")
    fifo = work / "fifo"
    os.mkfifo(fifo)
    record = site_packages(venv) / "recpkg-1.0.dist-info" / "RECORD"
    with open(record, "a") as f:
        f.write("/dev/zero,sha256=AAAA,1\n")
        f.write(f"{fifo},sha256=AAAA,1\n")
        f.write("../../../../../../../../dev/zero,sha256=AAAA,1\n")
    p = g.install(lock, venv, cache, timeout=30)
    check(p.returncode == 0, "a sync over a RECORD naming /dev/zero and a FIFO finishes (exit 0)")
    p = g.run("check", "--env", "--lock", str(lock), "--python", str(venv / "bin" / "python"),
              "--deep", timeout=30)
    check(p.returncode != -999, "check --env --deep over the same RECORD finishes")
    check(outside.exists(), "nothing outside was removed")


# ---- low: names that shadow the environment's own files ----------------------------------------

def attack_shadow(g: Gpulock, work: Path) -> None:
    wheels = work / "wheels"
    cache = work / "cache"
    venv = make_venv(work / "venv")
    python = venv / "bin" / "python"
    before = os.path.realpath(python)
    cases = {
        "datapython": {"datapython/__init__.py": b"",
                       "datapython-1.0.data/scripts/python": b"#!/bin/sh\necho pwned\n"},
        "cfgpkg": {"cfgpkg/__init__.py": b"", "cfgpkg-1.0.data/data/pyvenv.cfg": b"home = /x\n"},
        "eppkg": {"eppkg/__init__.py": b"def main():\n    pass\n",
                  "eppkg-1.0.dist-info/entry_points.txt": b"[console_scripts]\npython3 = eppkg:main\n"},
    }
    cfg = (venv / "pyvenv.cfg").read_bytes()
    for name, files in cases.items():
        w = make_wheel(wheels, name, "1.0", files)
        p = g.install(write_lock(work / f"{name}.toml", [(name, "1.0", w)]), venv, cache)
        check(p.returncode == 3 and one_error_line(p),
              f"{name}: a file that shadows the environment's own is refused (exit 3)")
    check(os.path.realpath(python) == before and not python.read_bytes().startswith(b"#!/bin/sh"),
          "bin/python is still the interpreter")
    check((venv / "pyvenv.cfg").read_bytes() == cfg, "pyvenv.cfg is unchanged")
    # One file named twice (a plain path and a .data/purelib path to the same place): the plain
    # one is linked last (archive order) and replaces the other, into a new directory as well.
    twice = make_wheel(wheels, "twice", "1.0", {"twice/x.py": b"PLAIN = 1\n",
                                                "twice-1.0.data/purelib/twice/x.py": b"DATA = 1\n"})
    fresh = make_venv(work / "twice-venv")
    p = g.install(write_lock(work / "twice.toml", [("twice", "1.0", twice)]), fresh, cache)
    check(p.returncode == 0 and
          (site_packages(fresh) / "twice" / "x.py").read_bytes() == b"PLAIN = 1\n",
          "a file a wheel names twice is installed once, the plain path's bytes")
    # -q prints no plan
    ok = make_wheel(wheels, "quietpkg", "1.0", {"quietpkg/__init__.py": b""})
    p = g.install(write_lock(work / "q.toml", [("quietpkg", "1.0", ok)]), venv, cache, "-q")
    check(p.returncode == 0 and "quietpkg" not in p.out, "install -q prints no sync plan")


ATTACKS = {
    "journal": attack_journal,
    "concurrent": attack_concurrent,
    "cache": attack_cache,
    "pidns": attack_pidns,
    "dist-info": attack_dist_info,
    "record": attack_record,
    "shadow": attack_shadow,
}


def run(tests: dict, argv=None) -> int:
    """`SCRIPT [ITEM] --gpulock EXE --work DIR` (ITEM when there are several tests): runs the
    test in a fresh DIR; exit 0 when every check holds, else every failed check is printed."""
    ap = argparse.ArgumentParser()
    if len(tests) > 1:
        ap.add_argument("item", choices=sorted(tests))
    ap.add_argument("--gpulock", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args(argv)
    work = Path(a.work).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    test = tests[a.item] if len(tests) > 1 else next(iter(tests.values()))
    test(Gpulock(a.gpulock, work), work)
    if FAILURES:
        print(f"\n{len(FAILURES)} check(s) failed:")
        for f in FAILURES:
            print(f"  - {f}")
        return 1
    print("\nall checks hold")
    return 0


if __name__ == "__main__":
    sys.exit(run(ATTACKS))
