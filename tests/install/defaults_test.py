#!/usr/bin/env python3
"""`install`, `check` and `probe` find the same environment (issue 41 item 5): with no --python
and no $VIRTUAL_ENV, `gpulock install` makes ./.venv, and `check` (its env layer) and `probe`
then read that ./.venv, not python3 on PATH; `install --driver` passes the described machine to
its probe; a stale lock is said before the sync, and `--locked` refuses it (item 8).

    defaults_test.py --gpulock EXE --work DIR
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "security"))
from install_attack import Gpulock, check, make_wheel, run, write_lock  # noqa: E402


def test(g: Gpulock, work: Path) -> None:
    os.environ.pop("VIRTUAL_ENV", None)
    wheel = make_wheel(work / "wheels", "defpkg", "1.0", {"defpkg/__init__.py": b"X = 1\n"})
    write_lock(work / "pylock.toml", [("defpkg", "1.0", wheel)])

    p = g.run("install", "--cache-dir", str(work / "cache"), "--driver", "550.54.14")
    check(p.returncode == 0 and (work / ".venv" / "bin" / "python").exists(),
          "install with no --python and no $VIRTUAL_ENV makes ./.venv")
    check("driver        550.54.14" in p.out and "no NVIDIA driver found" not in p.out,
          "install --driver: its probe reports the described machine")

    p = g.run("check")
    check(p.returncode == 0 and "env: ok" in p.out and "(.venv/bin/python)" in p.out,
          "check reads ./.venv's environment without --python")
    p = g.run("probe")
    check(".venv/bin/python" in p.out and "defpkg  lock 1.0  installed 1.0  ok" in p.out,
          "probe reads ./.venv's environment without --python")

    # A file edited in place after install: check --env finds it for any package (issue 40).
    init = next((work / ".venv" / "lib").glob("python3*/site-packages")) / "defpkg" / "__init__.py"
    os.chmod(init, 0o644)
    init.write_bytes(b"X = 2  # edited\n")
    p = g.run("check", "--env")
    check(p.returncode == 1 and "defpkg 1.0: 1 of" in p.out and "defpkg/__init__.py" in p.out,
          "check --env reports the edited file of an ordinary package")

    # A stale lock (item 8): its recorded inputs changed since it was resolved.
    stale = work / "stale"
    stale.mkdir()
    for v in ("1.0", "2.0"):
        make_wheel(stale / "wheels", "stpkg", v, {"stpkg/__init__.py": f"V = '{v}'\n".encode()})
    (stale / "requirements.txt").write_text("stpkg==1.0\n")
    (stale / "simple").mkdir()  # an empty index: the wheels come from --find-links
    g.work = stale
    p = g.run("resolve", "-r", "requirements.txt", "--index-url", (stale / "simple").as_uri(),
              "--find-links", "wheels", "--driver", "none", "-o", "pylock.toml")
    check(p.returncode == 0, "a lock with recorded inputs")
    p = g.run("install", "--no-probe", "--cache-dir", str(work / "cache"))
    check(p.returncode == 0 and "is stale" not in p.err, "a fresh lock installs without a word")
    (stale / "requirements.txt").write_text("stpkg==2.0\n")
    p = g.run("install", "--no-probe", "--cache-dir", str(work / "cache"))
    check(p.returncode == 0 and "warning: pylock.toml is stale: requirements.txt changed" in p.err,
          "install of a stale lock says so before syncing")
    shutil.rmtree(stale / ".venv")
    p = g.run("install", "--no-probe", "--cache-dir", str(work / "cache"), "--locked")
    check(p.returncode == 1 and "error: --locked: pylock.toml is stale" in p.err
          and not (stale / ".venv").exists(),
          "install --locked refuses a stale lock (exit 1) and installs nothing")


if __name__ == "__main__":
    sys.exit(run({"defaults": test}))
