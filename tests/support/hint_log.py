"""Keeps a gpulock run whose output gives a command hint, for ctest `hints_run` (issue 43).

The Python tests' half of tests/support/cli_runner.h's keep_hints: the same record (argv and
env NUL-separated, stdout, stderr, status, the directory it ran in and a copy of that
directory's files as they were, its subdirectories linked) under $GPULOCK_HINT_LOG (set by ctest
for the tests that require the fixture `hint_log`), and the hinted commands run at once by
hints_run.py --run-record, while the test's servers and files are there. Without
$GPULOCK_HINT_LOG (a script run by hand) nothing is kept.
"""
from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_counter = itertools.count()


def prints_command_hint(text: str) -> bool:
    for line in text.splitlines():
        at = line.find("hint:")
        if at >= 0 and ("`gpulock " in line[at:] or ": gpulock " in line[at:]):
            return True
    return False


def _text(data) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


def keep(argv, env: dict, cwd, status: int, out, err) -> None:
    log = os.environ.get("GPULOCK_HINT_LOG")
    argv = [str(a) for a in argv]
    if not log or not argv or Path(argv[0]).name != "gpulock":
        return
    out, err = _text(out), _text(err)
    if not prints_command_hint(err) and not prints_command_hint(out):
        return
    record = Path(log) / f"py{os.getpid()}-{next(_counter)}"
    record.mkdir(parents=True, exist_ok=True)
    (record / "argv").write_bytes(b"".join(a.encode() + b"\0" for a in argv))
    (record / "env").write_bytes(b"".join(f"{k}={v}".encode() + b"\0" for k, v in env.items()))
    (record / "stdout").write_text(out)
    (record / "stderr").write_text(err)
    (record / "status").write_text(str(status))
    origin = Path(cwd) if cwd else Path.cwd()
    (record / "dir").write_text(str(origin))
    copy = record / "cwd"
    copy.mkdir(exist_ok=True)
    for entry in os.scandir(origin):
        to = copy / entry.name
        try:
            if entry.is_symlink():
                os.symlink(os.readlink(entry.path), to)
            elif entry.is_dir():
                os.symlink(entry.path, to, target_is_directory=True)
            elif entry.is_file():
                if entry.stat().st_size >= 1 << 20:
                    try:
                        os.link(entry.path, to)
                        continue
                    except OSError:
                        pass
                shutil.copy2(entry.path, to)
        except OSError:
            pass
    subprocess.run([sys.executable, str(_HERE / "hints_run.py"), "--run-record", str(record),
                    "--gpulock", argv[0]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
