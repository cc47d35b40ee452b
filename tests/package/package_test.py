#!/usr/bin/env python3
"""A binary that can be moved and installed (issue 42 item 3), from the dev build tree (no second
build):

- `cmake --install BUILD --prefix P` gives P/bin/gpulock and P/lib/gpulock/libgpulock-net.so;
  P/bin/gpulock resolves (which needs the plugin) from anywhere, with no GPULOCK_NET_PLUGIN;
  without its plugin it exits 74 with one `error:` line naming the places it tried, none of
  them in the build tree;
- P/share/man/man1 has gpulock.1 and gpulock-COMMAND.1 for every command, rendered by
  `man -l`, every long flag of a command's --help in its page;
- bash, zsh and fish completions are installed where each shell looks, each parses in its
  shell, and bash's completes commands, flags and a flag's choices; `gpulock completion SHELL`
  prints the same scripts;
- CPack makes a .deb with Depends declared; `dpkg -x` of it runs.

    package_test.py --gpulock EXE --build BUILD --work DIR
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "security"))
from install_attack import check, hint_log, make_wheel, run  # noqa: E402


def sh(*args, cwd=None, env=None, timeout=300) -> subprocess.CompletedProcess:
    e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd or "/"), "NO_COLOR": "1"}
    e.update(env or {})
    p = subprocess.run([str(a) for a in args], cwd=cwd, env=e, capture_output=True, text=True,
                       timeout=timeout)
    hint_log.keep(args, e, cwd, p.returncode, p.stdout, p.stderr)
    print(f"$ {' '.join(str(a) for a in args)}\n  -> {p.returncode}\n" +
          "".join(f"  | {line}\n" for line in (p.stdout + p.stderr).splitlines()[:12]))
    return p


def commands(exe: Path) -> list[str]:
    out = sh(exe, "--help").stdout
    block = out.split("Subcommands:", 1)[1]
    return [m.group(1) for m in re.finditer(r"^  ([a-z][a-z-]*)\s", block, re.M)]


def resolve_offline(exe: Path, where: Path, cache: Path) -> subprocess.CompletedProcess:
    """A resolve from a find-links folder: reading the wheel's METADATA needs the plugin."""
    return sh(exe, "resolve", "pkgpkg==1.0", "--index-url", (where / "simple").as_uri(),
              "--find-links", str(where / "wheels"), "--driver", "none", "--python-version",
              "3.11", "--platform", "manylinux_2_28_x86_64", "-o", "-", cwd=where,
              env={"GPULOCK_CACHE_DIR": str(cache)})


def test(exe: Path, build: Path, work: Path) -> None:
    (work / "simple").mkdir()
    make_wheel(work / "wheels", "pkgpkg", "1.0", {"pkgpkg/__init__.py": b"X = 1\n"})

    # --- cmake --install -------------------------------------------------------------------
    prefix = work / "prefix"
    p = sh("cmake", "--install", build, "--prefix", prefix)
    check(p.returncode == 0, "cmake --install BUILD --prefix P")
    gl = prefix / "bin" / "gpulock"
    plugin = prefix / "lib" / "gpulock" / "libgpulock-net.so"
    check(gl.is_file() and os.access(gl, os.X_OK) and plugin.is_file(),
          "P/bin/gpulock and P/lib/gpulock/libgpulock-net.so")
    doc = prefix / "share" / "doc" / "gpulock"
    links = re.findall(r"\]\((docs/[^)#]+)", (doc / "README.md").read_text())
    check(links and all((doc / link).is_file() for link in links),
          f"P/share/doc/gpulock: README.md and the docs/ its {len(links)} links lead to")
    # The installed binary, copied elsewhere with its plugin: no path into the build tree.
    moved = work / "moved"
    shutil.copytree(prefix, moved, symlinks=True)
    exe_bytes = (moved / "bin" / "gpulock").read_bytes()
    check(str(build).encode() + b"/lib" not in exe_bytes,
          "no build-tree path to the plugin is compiled into gpulock")
    p = resolve_offline(moved / "bin" / "gpulock", work, work / "cache1")
    check(p.returncode == 0 and 'name = "pkgpkg"' in p.stdout,
          "the moved P/bin/gpulock resolves, its plugin found beside it in ../lib/gpulock")
    (moved / "lib" / "gpulock" / "libgpulock-net.so").unlink()
    p = resolve_offline(moved / "bin" / "gpulock", work, work / "cache2")
    err = p.stderr
    check(p.returncode == 74, "without its plugin: exit 74 (was 70, internal error)")
    check(err.count("error:") == 1 and err.startswith("error: cannot load gpulock's network plugin"),
          "one error: line")
    check(f"{moved}/lib/gpulock/libgpulock-net.so (not found)" in err
          and f"{moved}/bin/libgpulock-net.so (not found)" in err
          and f"{build}/lib/" not in err,
          "it names the places tried, none in the build tree")

    # --- man pages -------------------------------------------------------------------------
    man1 = prefix / "share" / "man" / "man1"
    cmds = commands(gl)
    check(len(cmds) >= 10, f"the commands are listed by --help ({len(cmds)})")
    missing = [c for c in cmds if not (man1 / f"gpulock-{c}.1").is_file()]
    check((man1 / "gpulock.1").is_file() and not missing,
          f"gpulock.1 and gpulock-COMMAND.1 for every command (missing: {missing})")
    page = sh("man", "-l", man1 / "gpulock-resolve.1", env={"MANPAGER": "cat", "MANWIDTH": "100",
                                                             "TERM": "dumb"})
    text = re.sub(r".\x08", "", page.stdout)
    check(page.returncode == 0 and "GPULOCK-RESOLVE(1)" in text and "--driver" in text,
          "man -l renders gpulock-resolve.1")
    undocumented = []
    for c in cmds:
        # The flags of the option lines ("  -o,--output TEXT  ..."), not flags quoted in prose.
        help_text = sh(gl, c, "--help").stdout
        flags = {f for line in re.findall(r"^ {2,}(-\S+)", help_text, re.M)
                 for f in re.findall(r"--[a-z][a-z0-9-]*", line)}
        body = (man1 / f"gpulock-{c}.1").read_text().replace("\\-", "-")
        undocumented += [f"{c} {f}" for f in sorted(flags) if f not in body]
    check(not undocumented, f"every flag of each --help is in its man page: {undocumented[:5]}")

    # --- completions -----------------------------------------------------------------------
    share = prefix / "share"
    bash_file = share / "bash-completion" / "completions" / "gpulock"
    zsh_file = share / "zsh" / "vendor-completions" / "_gpulock"
    fish_file = share / "fish" / "vendor_completions.d" / "gpulock.fish"
    check(bash_file.is_file() and zsh_file.is_file() and fish_file.is_file(),
          "completions installed where bash, zsh and fish look")
    for shell, f in (("bash", bash_file), ("zsh", zsh_file), ("fish", fish_file)):
        printed = sh(gl, "completion", shell).stdout
        check(printed == f.read_text(), f"gpulock completion {shell} prints the installed script")
        check(sh(shell, "-n", f).returncode == 0, f"{shell} parses its completion script")
    probe = (f"source {bash_file}; complete -p gpulock; "
             "t() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); _gpulock; "
             "echo \"[${COMPREPLY[*]}]\"; }; "
             "t gpulock res; t gpulock resolve --dri; t gpulock --color ''; t gpulock mirror ''")
    out = sh("bash", "-c", probe).stdout.splitlines()
    check(out[:1] == ["complete -F _gpulock gpulock"], "sourcing it defines gpulock's completion")
    check(out[1:3] == ["[resolve]", "[--driver]"], "bash completes a command and a flag")
    check(len(out) > 4 and out[3] == "[auto always never]" and "add" in out[4],
          "bash completes a flag's choices and subcommands")
    fish = sh("fish", "-c", f"source {fish_file}; complete -C 'gpulock resolve torch --dri'; "
                            "complete -C 'gpulock mirror '")
    check("--driver" in fish.stdout and "verify" in fish.stdout,
          "fish completes a flag after an argument, and subcommands")

    # --- the .deb --------------------------------------------------------------------------
    pkg = work / "pkg"
    p = sh("cpack", "--config", build / "CPackConfig.cmake", "-B", pkg, timeout=600)
    debs = sorted(pkg.glob("*.deb"))
    check(p.returncode == 0 and len(debs) == 1, "cpack on the dev build tree makes one .deb")
    if debs:
        depends = sh("dpkg-deb", "-f", debs[0], "Depends").stdout
        check("libcurl" in depends and "libfmt" in depends and "libc6" in depends,
              f"the .deb declares its Debian dependencies ({depends.strip()[:80]})")
        contents = sh("dpkg-deb", "-c", debs[0]).stdout
        for f in ("./usr/bin/gpulock", "./usr/lib/gpulock/libgpulock-net.so",
                  "./usr/share/man/man1/gpulock-resolve.1", "./usr/share/bash-completion/"):
            check(f in contents, f"the .deb holds {f}")
        root = work / "root"
        check(sh("dpkg", "-x", debs[0], root).returncode == 0, "dpkg -x unpacks it")
        p = resolve_offline(root / "usr" / "bin" / "gpulock", work, work / "cache3")
        check(p.returncode == 0 and 'name = "pkgpkg"' in p.stdout,
              "the unpacked /usr/bin/gpulock resolves with its packaged plugin")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    a, rest = ap.parse_known_args()
    build = Path(a.build).resolve()
    return run({"package": lambda gl, work: test(Path(gl.exe), build, work)}, rest)


if __name__ == "__main__":
    sys.exit(main())
