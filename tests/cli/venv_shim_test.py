#!/usr/bin/env python3
"""A venv made through pyenv-like shims (issue 41 item 8): PATH starts with a directory of shims
(python3, python3.X, python: shell scripts that record each start in a file, sleep 1 s as a
pyenv shim takes its time, then exec the real interpreter). `gpulock install` asks the first
interpreter the lock accepts and no other, runs no shim a second time (the venv is made by the
real interpreter the shim reported), and its timing line reports the venv's creation apart from
the sync. The same through `install --print-target` (choose_lock_for_new_venv) with
pylock.<name>.toml locks.

    venv_shim_test.py --gpulock EXE --work DIR
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "security"))
from install_attack import Gpulock, check, make_wheel, run, write_lock  # noqa: E402


def shims(work: Path, real: str) -> tuple[Path, Path]:
    d, log = work / "shims", work / "shim-starts"
    d.mkdir()
    minor = f"python3.{sys.version_info.minor}"
    for name in ("python3", minor, "python"):
        s = d / name
        s.write_text(f'#!/bin/sh\necho "$0" >> "{log}"\nsleep 1\nexec "{real}" "$@"\n')
        s.chmod(0o755)
    return d, log


def starts(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def test(g: Gpulock, work: Path) -> None:
    os.environ.pop("VIRTUAL_ENV", None)
    real = os.path.realpath(sys.executable)
    shim_dir, log = shims(work, real)
    g.env["PATH"] = f"{shim_dir}:{g.env['PATH']}"
    wheel = make_wheel(work / "wheels", "shimpkg", "1.0", {"shimpkg/__init__.py": b"X = 1\n"})
    write_lock(work / "pylock.toml", [("shimpkg", "1.0", wheel)])

    p = g.run("install", "--no-probe", "--cache-dir", str(work / "cache"))
    made = (work / ".venv" / "bin" / "python").exists()
    check(p.returncode == 0 and made, "install makes ./.venv through the shims")
    check(starts(log) == [str(shim_dir / "python3")],
          f"one shim started, once (python3); started: {starts(log)}")
    check(f"-> {real}" in p.err, "the venv is made by the real interpreter the shim runs")
    m = re.search(r"venv created in ([0-9.]+) s; 1 installed, 0 replaced, 0 removed, "
                  r"0 unchanged in ([0-9.]+) s", p.out)
    check(m is not None and float(m.group(1)) >= 0.9 and float(m.group(2)) < float(m.group(1)),
          "the timing line reports the venv's creation (the 1 s shim) apart from the sync")
    p = g.run("install", "--no-probe", "--cache-dir", str(work / "cache"))
    check(p.returncode == 0 and "venv created" not in p.out and len(starts(log)) == 1,
          "a second install (the venv is there) starts no shim and creates no venv")

    # Several target locks, the venv still to be made: the lock is chosen with the same
    # interpreters, asked in turn, each once.
    t = work / "targets"
    t.mkdir()
    for name in ("cpu", "other"):
        write_lock(t / f"pylock.{name}.toml", [("shimpkg", "1.0", wheel)])
    log.unlink()
    g.work = t
    p = g.run("install", "--no-probe", "--cache-dir", str(work / "cache"))
    check(p.returncode == 0 and (t / ".venv" / "bin" / "python").exists()
          and starts(log) == [str(shim_dir / "python3")],
          f"choosing among target locks, then making the venv: one shim start; "
          f"started: {starts(log)}")


if __name__ == "__main__":
    sys.exit(run({"venv-shim": test}))
