#!/usr/bin/env python3
"""One developer's environment does not end up in the shared lock (issue 41 item 2).

A setting from the user's environment or user-level configuration (PIP_*, UV_*, GPULOCK_*,
pip.conf, uv.toml, the user's gpulock.toml) that supplied no file of the lock is not written to
the lock at all; one that did is named as the `origin` of its index record. `check --inputs`
reports a user-level setting only when it supplied a locked file and differs now (error), or
when one present now would be asked before the index a locked file came from (warning).
Project-level inputs keep their strictness.

    user_settings_test.py --gpulock EXE --work DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "security"))
from install_attack import Gpulock, check, make_wheel, run  # noqa: E402


def resolve(g: Gpulock, out: str, *extra: str, env: dict | None = None):
    return g.run("resolve", "-r", "requirements.txt", "--driver", "none", "--python-version",
                 "3.11", "--platform", "manylinux_2_28_x86_64", "-o", out, *extra, env=env)


def test(g: Gpulock, work: Path) -> None:
    proj = work / "proj"
    proj.mkdir()
    g.work = proj
    (proj / "simple").mkdir()  # an empty index: files come from --find-links
    make_wheel(proj / "wheels", "teampkg", "1.0", {"teampkg/__init__.py": b"X = 1\n"})
    make_wheel(work / "dev-wheels", "devpkg", "1.0", {"devpkg/__init__.py": b"Y = 1\n"})
    (work / "opt-wheels").mkdir()  # the developer's PIP_FIND_LINKS: empty, contributes nothing
    # The project's own find-links is a requirements file line (a --find-links flag would win
    # over PIP_FIND_LINKS, which would then never be asked).
    (proj / "requirements.txt").write_text("--find-links wheels\nteampkg==1.0\n")
    index = ["--index-url", (proj / "simple").as_uri()]
    dev = {"PIP_FIND_LINKS": str(work / "opt-wheels")}

    # 1. The case: a variable that supplied nothing is not in the lock.
    p = resolve(g, "pylock.dev.toml", *index, env=dev)
    check(p.returncode == 0, "resolve with PIP_FIND_LINKS set")
    dev_lock = (proj / "pylock.dev.toml").read_text()
    check("PIP_FIND_LINKS" not in dev_lock and "opt-wheels" not in dev_lock,
          "a user-level setting that supplied no file is not written to the lock")
    p = resolve(g, "pylock.ci.toml", *index)
    ci_lock = (proj / "pylock.ci.toml").read_text()
    check(dev_lock.replace("pylock.dev.toml", "X") == ci_lock.replace("pylock.ci.toml", "X"),
          "the lock does not churn between a developer with the variable and one without")
    p = g.run("check", "--inputs", "--lock", "pylock.dev.toml")
    check(p.returncode == 0 and "PIP_FIND_LINKS" not in p.out + p.err,
          "check --inputs on a runner without the variable: no drift (exit 0)")
    # On the developer's machine the variable would be asked before the project's find-links
    # (a setting's list comes before a requirements file's): a warning, not drift.
    p = g.run("check", "--inputs", "--lock", "pylock.ci.toml", env=dev)
    check(p.returncode == 0 and "warning:" in p.out and "PIP_FIND_LINKS (find-links " in p.out
          and "would be asked before" in p.out and "error" not in p.out,
          "check --inputs with the variable set now: one warning naming it, exit 0")
    p = g.run("check", "--inputs", "--lock", "pylock.ci.toml",
              env={"PIP_EXTRA_INDEX_URL": (work / "opt-wheels").as_uri()})
    check(p.returncode == 0 and "PIP_EXTRA_INDEX_URL" in p.out,
          "an extra index set now would also be asked before the project's find-links")

    # 2. A variable that supplied a locked file is recorded with its origin, never its value
    # as an input of its own; check reports it only when it differs now.
    (proj / "requirements.txt").write_text("--find-links wheels\nteampkg==1.0\ndevpkg==1.0\n")
    supplied = {"PIP_FIND_LINKS": str(work / "dev-wheels")}
    p = resolve(g, "pylock.toml", *index, env=supplied)
    check(p.returncode == 0, "resolve with devpkg from PIP_FIND_LINKS")
    text = (proj / "pylock.toml").read_text()
    check('origin = "env PIP_FIND_LINKS"' in text and text.count("PIP_FIND_LINKS") == 1,
          "the index record names the variable as its origin, once")
    p = g.run("check", "--inputs", env=supplied)
    check(p.returncode == 0, "check with the same variable: clean")
    p = g.run("check", "--inputs")
    check(p.returncode == 1 and "PIP_FIND_LINKS supplied locked files (find-links " in p.out
          and "devpkg 1.0) and is not set now" in p.out,
          "check without it: the variable that supplied devpkg is named (exit 1)")
    check(p.out.count("PIP_FIND_LINKS supplied") == 1, "said once")
    p = g.run("check", "--inputs", env={"PIP_FIND_LINKS": str(work / "opt-wheels")})
    check(p.returncode == 1 and "and is now '" + str(work / "opt-wheels") + "'" in p.out,
          "check with another value: the value now is named")

    # 3. A user-level file: recorded by its name under ~, not the developer's home path.
    conf = work / ".config" / "pip" / "pip.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text(f"[global]\nfind-links = {work / 'dev-wheels'}\n")
    p = resolve(g, "pylock.conf.toml", *index)
    text = (proj / "pylock.conf.toml").read_text()
    check(p.returncode == 0 and 'origin = "file ~/.config/pip/pip.conf"' in text,
          "a pip.conf that supplied a file is the origin, spelled from ~")
    check('kind = "config"' not in text and text.count("pip.conf") == 1,
          "the user's pip.conf is not an input file of the lock")
    p = g.run("check", "--inputs", "--lock", "pylock.conf.toml")
    check(p.returncode == 0, "check with the same pip.conf: clean")
    conf.write_text("[global]\ntimeout = 60\n")
    p = g.run("check", "--inputs", "--lock", "pylock.conf.toml")
    check(p.returncode == 1 and "~/.config/pip/pip.conf supplied locked files" in p.out
          and "sets no find-links now" in p.out,
          "check after the pip.conf dropped it: named, exit 1")
    conf.unlink()

    # 4. A variable present now that would be asked before the index a locked file came from.
    (proj / "requirements.txt").write_text("teampkg==1.0\n")
    (proj / "gpulock.toml").write_text(
        f'index-url = "{(proj / "simple").as_uri()}"\nfind-links = ["wheels"]\n')
    p = resolve(g, "pylock.project.toml")
    check(p.returncode == 0, "resolve with the project's gpulock.toml")
    other = work / "other-simple"
    other.mkdir()
    p = g.run("check", "--inputs", "--lock", "pylock.project.toml",
              env={"PIP_INDEX_URL": other.as_uri()})
    check(p.returncode == 0 and "warning:" in p.out and "PIP_INDEX_URL (index-url " in p.out
          and "would be asked before" in p.out and "where 1 locked package came from" in p.out,
          "a variable set now that would be asked first: a warning naming it")
    # Project-level inputs keep their strictness: an edited gpulock.toml is drift (here the team
    # adds a second wheel directory; the lock's command, which the hint gives, locks again).
    (proj / "more-wheels").mkdir()
    (proj / "gpulock.toml").write_text(
        f'index-url = "{(proj / "simple").as_uri()}"\nfind-links = ["wheels", "more-wheels"]\n')
    p = g.run("check", "--inputs", "--lock", "pylock.project.toml")
    check(p.returncode == 1 and "gpulock.toml changed since the lock was resolved" in p.out,
          "an edited project gpulock.toml is still drift")


if __name__ == "__main__":
    sys.exit(run({"user-settings": test}))
