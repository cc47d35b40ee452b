#!/usr/bin/env python3
"""Runs every command a `hint:` line gave during the tests (issue 43, "done when").

tests/support/cli_runner.h (Catch2 tests) and tests/support/hint_log.py (Python tests) keep
each gpulock run whose output has a `hint:` line with a gpulock command in it (in backquotes, or
after ": ") under the build's hint-log/: its argv, env, output, exit status, the directory it
ran in and a copy of that directory as it was, and run this script with --run-record at once,
while the test's servers and files are there. For each such command, it runs it as the user
would have (the same environment, in a fresh copy of that directory, absolute paths into the
old directory pointed at the copy) and checks:
  - it exits 0, or 1 where the command reports findings by its exit status (check, diff);
  - the finding the hint was printed for (the nearest line above the hint block that is not a
    hint) is not in its output, unless the hint only shows something ("see what ...").
and writes result.json beside the record. Not run, and listed: a hint that is a pattern rather
than a command (`...`, `URL`, `VERSION`, `<URL>`), one for another machine ("on a machine with
an NVIDIA GPU"). A command that reads a value there ("prints there") runs here, for its exit
status. An install runs into a copy of the environment it names (the
copy of the directory links its subdirectories: the test's own environment stays as it was). ctest `hints_run` (the cleanup of
fixture `hint_log`, which every test that runs gpulock requires, so it runs after the last of
them) reads every result: it fails on a command that did not work, except those in KNOWN (each
with why: the list only shrinks); `--self-test` checks the parsing.
"""
import argparse
import collections
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

COMMAND = re.compile(r"`(gpulock [^`]+)`|: (gpulock [^`]+?)\s*$")
# A placeholder is a whole shell word (or a flag's value after "=", or a file name's stem):
# VERSION, URL, LOCK, OLD.toml; or a word with "...", "<name>" or X.Y in it. Judged word by word, so a path with an upper-case directory
# (a mktemp name like /tmp/bc.IBJC) is no placeholder.
PLACEHOLDER = re.compile(r"[A-Z][A-Z_]{2,}")
PLACEHOLDER_PART = re.compile(r"(\.\.\.|<[A-Za-z_]+>|\bX\.Y\b)")


def is_pattern(command):
    """Whether the command is a pattern rather than a command (a placeholder in a word)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return any(PLACEHOLDER.fullmatch(w.split("=", 1)[-1].split(".", 1)[0]) or
               PLACEHOLDER_PART.search(w) for w in words)
ELSEWHERE = re.compile(r"on a machine with|on another machine")
# A hint that shows something ("see what gpulock detects"), or names a command that reads a value
# on the other machine ("the version `gpulock probe --machine` prints there": it runs here too,
# on this machine's facts), is checked for its exit status only.
SHOWS = re.compile(r"\bsee\b|\bprints there\b")
# Hints whose command does not (yet) do what the hint says, matched by a part of the hint line,
# each with why it is still printed (issue 43 item 5 leaves them to confirm). Only shrinks.
KNOWN = {}
FINDING_EXIT_1 = {"check", "diff"}


def hint_commands(text):
    """[(hint line, finding, command)] of one run's output."""
    out = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped.startswith("hint:"):
            continue
        j = i - 1
        while j >= 0 and (not lines[j].strip() or lines[j].strip().startswith("hint:")):
            j -= 1
        finding = lines[j].strip() if j >= 0 else ""
        for m in COMMAND.finditer(stripped):
            out.append((stripped, finding, (m.group(1) or m.group(2)).strip()))
    return out


def read_nul(path):
    with open(path, "rb") as f:
        return [x.decode() for x in f.read().split(b"\0") if x]


def own_environment(argv, env, old_dir, cwd, work):
    """(env, "", (root, copy)) with the environment an install command names (--python,
    --venv, else $VIRTUAL_ENV, else ./.venv) replaced in `argv` (in place) and `env` by a copy
    under `work`; (env, why, None) when there is none to copy."""
    def original(path):
        path = path if os.path.isabs(path) else os.path.join(old_dir, path)
        if path.startswith(cwd + "/"):
            path = old_dir + path[len(cwd):]
        return os.path.normpath(path)

    env = dict(env)
    where, root = None, None
    for i, word in enumerate(argv[:-1]):
        if word == "--python":
            where, root = i + 1, os.path.dirname(os.path.dirname(original(argv[i + 1])))
        elif word == "--venv":
            where, root = i + 1, original(argv[i + 1])
    if root is None:
        root = env.get("VIRTUAL_ENV") or os.path.join(old_dir, ".venv")
    if not os.path.isfile(os.path.join(root, "pyvenv.cfg")):
        return env, f"its environment {root} is not a virtual environment to copy", None
    rel = os.path.relpath(root, old_dir)
    if old_dir not in ("", "/") and not rel.startswith(".."):
        # Inside the directory: its top-level entry, a link in the copy, becomes a real copy,
        # so relative paths (./.venv) reach the copied environment too.
        top = rel.split(os.sep)[0]
        link = os.path.join(cwd, top)
        if os.path.islink(link):
            os.remove(link)
        if not os.path.exists(link):
            shutil.copytree(os.path.join(old_dir, top), link, symlinks=True)
        copy = os.path.normpath(os.path.join(cwd, rel))
    else:
        copy = os.path.join(work, "env")
        shutil.copytree(root, copy, symlinks=True)
    if where is not None:
        argv[where] = (os.path.join(copy, "bin", "python") if argv[where - 1] == "--python"
                       else copy)
    elif "VIRTUAL_ENV" in env:
        env["VIRTUAL_ENV"] = copy
    return env, "", (root, copy)


def fixed_for(record, moved, copied, exe, cwd, env, finding):
    """Whether the command that printed the hint, run again after it (in the same copy, on the
    copied environment), no longer says `finding`: a fix (an install that replaces what changed)
    can name the finding in its own output, as what it fixes."""
    argv = [moved(w) for w in read_nul(os.path.join(record, "argv"))]
    if copied:
        root, copy = copied
        argv = [copy + w[len(root):] if w == root or w.startswith(root + "/") else w
                for w in argv]
    argv[0] = os.path.abspath(exe)
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          errors="replace")
    return finding not in proc.stdout + proc.stderr


def run_record(record, exe, scratch):
    """[(status, message)] for each hint command of one kept run."""
    env = dict(kv.split("=", 1) for kv in read_nul(os.path.join(record, "env")))
    with open(os.path.join(record, "dir")) as f:
        old_dir = f.read()
    text = ""
    for name in ("stderr", "stdout"):
        with open(os.path.join(record, name), errors="replace") as f:
            text += f.read()
    results = []
    for hint, finding, command in hint_commands(text):
        if is_pattern(command):
            results.append(("pattern", f"{command}  (from: {hint})"))
            continue
        if ELSEWHERE.search(hint):
            results.append(("elsewhere", f"{command}  (from: {hint})"))
            continue
        snapshot = os.path.join(record, "cwd")
        work = tempfile.mkdtemp(dir=scratch)
        cwd = os.path.join(work, "cwd")
        if not os.path.isdir(snapshot):
            results.append(("fail", f"{command}: its directory was not kept"))
            continue
        words = shlex.split(command)
        inside = old_dir not in ("", "/")

        def moved(word):
            if inside and (word == old_dir or word.startswith(old_dir + "/")):
                return cwd + word[len(old_dir):]
            return word

        argv = [moved(w) for w in words]
        argv[0] = os.path.abspath(exe)
        shutil.copytree(snapshot, cwd, symlinks=True)
        run_env, copied = env, None
        if len(words) > 1 and words[1] == "install":
            # The copy links the directory's subdirectories: the install gets a copy of the
            # environment of its own, so it cannot change the one the test goes on using.
            run_env, why, copied = own_environment(argv, env, old_dir, cwd, work)
            if why:
                shutil.rmtree(work, ignore_errors=True)
                results.append(("outside", f"{command}  ({why})"))
                continue
        proc = subprocess.run(argv, cwd=cwd, env=run_env, capture_output=True, text=True,
                              timeout=300, errors="replace")
        allowed = {0, 1} if len(argv) > 1 and argv[1] in FINDING_EXIT_1 else {0}
        output = proc.stdout + proc.stderr
        problems = []
        if proc.returncode not in allowed:
            problems.append(f"exit {proc.returncode}")
        if finding and finding in output and not SHOWS.search(hint) and not fixed_for(
                record, moved, copied, exe, cwd, run_env, finding):
            problems.append(f"its output still says: {finding}")
        shutil.rmtree(work, ignore_errors=True)
        known = next((why for part, why in KNOWN.items() if part in hint), None)
        if problems:
            results.append(("known" if known else "fail",
                            f"{command}\n    printed for: {finding}\n    {hint}\n    "
                            + "; ".join(problems) + (f"\n    known: {known}" if known else "")
                            + "\n    output:\n" + output[-2000:]))
        else:
            results.append(("ok", command))
    return results


def self_test():
    text = ("error: torch has no build for this GPU\n  because ...\n"
            "hint: `gpulock resolve torch --torch-backend cu126` locks torch 2.13.0+cu126\n"
            "hint: update the lock: gpulock resolve -r requirements.txt -o pylock.toml\n"
            "hint: to take triton from another index: `gpulock resolve ... --index other=URL`\n")
    got = hint_commands(text)
    assert [c for _, _, c in got] == ["gpulock resolve torch --torch-backend cu126",
                                      "gpulock resolve -r requirements.txt -o pylock.toml",
                                      "gpulock resolve ... --index other=URL"], got
    assert all(f == "because ..." for _, f, _ in got), got
    assert is_pattern(got[2][2]) and not is_pattern(got[0][2])
    assert is_pattern("gpulock install --lock LOCK --python PYTHON")
    assert is_pattern("gpulock resolve --index-url=URL torch")
    assert is_pattern("gpulock resolve --cuda-ceiling X.Y torch")
    assert is_pattern("gpulock install -o pylock.<name>.toml")
    assert is_pattern("gpulock diff OLD.toml NEW.toml")
    there = "hint: add --driver VERSION with the version `gpulock probe --machine` prints there"
    assert not ELSEWHERE.search(there) and SHOWS.search(there)
    assert ELSEWHERE.search("hint: run `gpulock probe --run-kernels` on a machine with an NVIDIA GPU")
    # An upper-case directory in a path is not a placeholder.
    assert not is_pattern("gpulock resolve torch --cache-dir /tmp/bc.IBJC/main/cache -o -")
    print("hints_run self-test: ok")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpulock")
    ap.add_argument("--log")
    ap.add_argument("--run-record")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if args.run_record:
        scratch = tempfile.mkdtemp(prefix="gpulock-hints-")
        try:
            results = run_record(args.run_record, args.gpulock, scratch)
        except Exception as e:  # noqa: BLE001 -- the record says what went wrong
            results = [("fail", f"the runner failed: {e!r}")]
        shutil.rmtree(scratch, ignore_errors=True)
        with open(os.path.join(args.run_record, "result.json"), "w") as f:
            json.dump(results, f)
        return 0
    records = sorted(os.listdir(args.log)) if os.path.isdir(args.log) else []
    counts = collections.Counter()
    listed = collections.defaultdict(list)
    for name in records:
        path = os.path.join(args.log, name, "result.json")
        if not os.path.exists(path):
            counts["fail"] += 1
            listed["fail"].append(f"{name}: no result (the run was not finished)")
            continue
        with open(path) as f:
            for status, message in json.load(f):
                counts[status] += 1
                if status != "ok":
                    listed[status].append(message)
    print(f"{len(records)} runs printed command hints: {counts['ok']} commands worked, "
          f"{counts['fail']} did not, {counts['known']} known not to (KNOWN), "
          f"{counts['pattern']} patterns, {counts['elsewhere']} for another machine, "
          f"{counts['outside']} installs without an environment to copy")
    for status in ("pattern", "elsewhere", "outside", "known", "fail"):
        for message in sorted(set(listed[status])):
            print(f"{status.upper()}: {message}")
    if not records:
        print("no gpulock run of the tests that ran printed a command hint")
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
