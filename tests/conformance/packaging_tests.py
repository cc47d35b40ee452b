#!/usr/bin/python3
"""pypa/packaging's own test modules, answered by gpulock's core (issue 20, label `conformance`).

Usage: packaging_tests.py --oracle PATH/TO/core_oracle --shared DIR --work DIR
                          [--modules version,specifiers,...] [--list FILE]

Runs packaging's test modules (DIR/reference/packaging/tests, with pytest, hypothesis, pretend
and tomli_w from Debian) against packaging 26.3 (DIR/reference/pip/src/pip/_vendor/packaging,
imported as `packaging`), with a recorder around packaging's public entry points: Version(text),
version comparisons, Specifier(text)/SpecifierSet(text) and their contains(), Marker(text) and
Marker.evaluate(), Requirement(text). Every input a test hands to them becomes a question for
core_oracle (the differential oracle's JSON protocol, tests/core/differential/oracle.cpp), and
packaging 26.3's answer to the same question (differential.py's expect_* functions, with that
script's documented mapping) is compared with gpulock's. Per test:
  passed         the test passed under packaging and gpulock agreed on every input it recorded;
  failed         gpulock disagreed on at least one input (each disagreement is listed);
  no counterpart the test recorded nothing gpulock answers (tags, pickling, metadata, repr...);
  packaging-fail the test fails under packaging 26.3 itself (environment), not counted above.
Exits 1 when any test failed, unless its disagreement is listed in DELIBERATE (README,
"Differences from uv and pip").
"""
import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_MODULES = "version,specifiers,markers,requirements,tags,utils"

# Substrings of a disagreement line that gpulock makes on purpose, with the reason.
DELIBERATE = {
    "both quotes": "a marker value holding both quote characters: gpulock prints it escaped",
    ' in extras"': "`extras` is always defined (empty unless given): gpulock evaluates PEP 751 "
                   "lock-file markers, where packaging 26.3's default context rejects it",
    ' in dependency_groups"': "as `extras`",
}
# The marker variables gpulock's Environment has; an evaluate() with other keys (a test's
# made-up variables) has no counterpart.
KNOWN_ENV = {"implementation_name", "implementation_version", "os_name", "platform_machine",
             "platform_python_implementation", "platform_release", "platform_system",
             "platform_version", "python_full_version", "python_version", "sys_platform",
             "extra"}


class Recorder:
    """Wraps packaging's entry points and records, per test, the questions for the oracle."""

    def __init__(self):
        self.current = None
        self.by_test = collections.defaultdict(list)
        self.outcome = {}
        self.spec_text = {}
        self.marker_text = {}
        self.busy = False

    def add(self, q):
        if self.current is not None and not self.busy:
            self.by_test[self.current].append(q)

    def install(self, packaging):
        from packaging import markers, requirements, specifiers, version
        rec = self

        def wrap_init(cls, kind):
            orig = cls.__init__

            def init(self, *args, **kwargs):
                text = args[0] if args else kwargs.get("version", kwargs.get("spec", kwargs.get(
                    "specifiers", kwargs.get("marker", kwargs.get("requirement_string")))))
                try:
                    orig(self, *args, **kwargs)
                except Exception:
                    if isinstance(text, str):
                        q = {"k": kind, "s": text}
                        if kind == "s":
                            q["v"] = []
                        if kind == "m":
                            q.update(env=None, x="")
                        rec.add(q)
                    raise
                if isinstance(text, str):
                    if kind == "s":
                        rec.spec_text[id(self)] = (text, self)  # kept alive: ids stay unique
                        rec.add({"k": "s", "s": text, "v": []})
                    elif kind == "m":
                        rec.marker_text[id(self)] = (text, self)
                        rec.add({"k": "m", "s": text, "env": None, "x": ""})
                    else:
                        rec.add({"k": kind, "s": text})
            cls.__init__ = init

        wrap_init(version.Version, "v")
        wrap_init(specifiers.Specifier, "s")
        wrap_init(specifiers.SpecifierSet, "s")
        wrap_init(markers.Marker, "m")
        wrap_init(requirements.Requirement, "r")

        for op in ("__lt__", "__le__", "__eq__", "__ge__", "__gt__", "__ne__"):
            orig = getattr(version.Version, op)

            def cmp(self, other, _orig=orig):
                if isinstance(other, version.Version) and not rec.busy:
                    rec.busy = True
                    try:
                        a, b = str(self), str(other)
                    finally:
                        rec.busy = False
                    rec.add({"k": "c", "a": a, "b": b})
                return _orig(self, other)
            setattr(version.Version, op, cmp)

        for cls in (specifiers.Specifier, specifiers.SpecifierSet):
            orig = cls.contains

            def contains(self, item, *args, _orig=orig, **kwargs):
                text = rec.spec_text.get(id(self), (None,))[0]
                if text is not None and isinstance(item, (str, version.Version)) and not rec.busy:
                    rec.busy = True
                    try:
                        rec.add({"k": "s", "s": text, "v": [str(item)]})
                    finally:
                        rec.busy = False
                return _orig(self, item, *args, **kwargs)
            cls.contains = contains

        orig_eval = markers.Marker.evaluate
        # The interpreter's environment, computed without touching packaging's cache (a test
        # monkeypatches platform and expects default_environment() to see it).
        uncached = getattr(markers._cached_default_environment, "__wrapped__",
                           markers.default_environment)
        base_env = dict(uncached())

        def evaluate(self, environment=None, *args, **kwargs):
            text = rec.marker_text.get(id(self), (None,))[0]
            if text is not None and not rec.busy and not args and not kwargs:
                env = dict(base_env)
                if environment:
                    env.update(environment)
                if all(isinstance(v, str) or v is None for v in env.values()) and \
                        set(env) <= KNOWN_ENV:
                    extra = env.pop("extra", "") or ""
                    env = {k: v for k, v in env.items() if isinstance(v, str)}
                    rec.add({"k": "m", "s": text, "env": env, "x": extra})
            return orig_eval(self, environment, *args, **kwargs)
        markers.Marker.evaluate = evaluate

    # pytest hooks
    def pytest_runtest_setup(self, item):
        self.current = item.nodeid

    def pytest_runtest_teardown(self, item):
        self.current = None

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.outcome[report.nodeid] = report.outcome


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--shared", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--modules", default=DEFAULT_MODULES)
    ap.add_argument("--list", help="write every test with its status here")
    ap.add_argument("--replay", help="recording.json of an earlier run: skip pytest, ask the "
                                     "oracle the recorded questions")
    args = ap.parse_args()
    started = time.monotonic()
    shared = Path(args.shared)
    vendored = shared / "reference/pip/src/pip/_vendor/packaging"
    tests_src = shared / "reference/packaging/tests"
    for p in (vendored, tests_src):
        if not p.is_dir():
            sys.exit(f"packaging_tests.py: {p} is missing")
    if args.replay:
        data = json.loads(Path(args.replay).read_text())
        rec = Recorder()
        rec.by_test.update(data["by_test"])
        rec.outcome.update(data["outcome"])
        return compare_with_oracle(args, shared, rec, started, started)
    work = Path(args.work)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    shutil.copytree(tests_src, work / "tests")
    (work / "tests/__init__.py").touch()
    (work / "packaging").symlink_to(vendored)
    sys.path.insert(0, str(work))
    os.chdir(work)

    import packaging
    import pytest
    rec = Recorder()
    rec.install(packaging)
    files = [f"tests/test_{m}.py" for m in args.modules.split(",")]
    pytest.main(["-q", "-p", "no:cacheprovider", "--no-header", "-o", "console_output_style=count",
                 "-W", "ignore", *files], plugins=[rec])
    ran = time.monotonic()
    (work / "recording.json").write_text(json.dumps({"by_test": rec.by_test,
                                                      "outcome": rec.outcome}))
    return compare_with_oracle(args, shared, rec, started, ran)


def compare_with_oracle(args, shared, rec, started, ran):
    # packaging 26.3's answers through differential.py (pip._vendor's copy, not the recorded one).
    sys.path.insert(0, str(shared / "reference/pip/src"))
    sys.path.insert(0, str(HERE.parent / "core/differential"))
    import differential as diff
    stats = collections.Counter()
    unique = {}
    for qs in rec.by_test.values():
        for q in qs:
            unique.setdefault(json.dumps(q, sort_keys=True), q)
    questions, expected = [], []
    for key, q in unique.items():
        if q["k"] == "m" and q["env"] and not set(q["env"]) <= KNOWN_ENV:
            continue  # made-up environment keys: no counterpart
        if q["k"] == "v":
            e = diff.expect_version(q["s"], stats)
        elif q["k"] == "c":
            try:
                va, vb = diff.Version(q["a"]), diff.Version(q["b"])
            except (diff.InvalidVersion, ValueError):
                continue
            if max(diff.version_numbers(va) + diff.version_numbers(vb)) > diff.U64_MAX:
                continue
            e = {"c": str(-1 if va < vb else (0 if va == vb else 1)), "hash": True, "cons": True}
        elif q["k"] == "s":
            try:
                e = diff.expect_spec(q["s"], q["v"], stats)
            except ValueError:  # a number over Python's 4300-digit limit: not a specifier
                e = {"ok": False}
        elif q["k"] == "m":
            if q["env"] is None:
                e = diff.expect_marker(q["s"], {}, "", stats)
                e.pop("r", None)
                q = dict(q, env={})
            else:
                e = diff.expect_marker(q["s"], q["env"], q["x"], stats)
        else:
            e = diff.expect_requirement(q["s"], stats)
        questions.append((key, q))
        expected.append(e)
    payload = "".join(json.dumps(q) + "\n" for _, q in questions).encode("utf-8", "surrogatepass")
    proc = subprocess.run([args.oracle], input=payload, capture_output=True)
    if proc.returncode != 0:
        print(f"oracle failed: {proc.stderr.decode()[-2000:]}")
        return 1
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    problems = {}
    for (key, q), e, line in zip(questions, expected, lines):
        p = diff.compare(q, e, json.loads(line), stats)
        if p:
            problems[key] = [f"{json.dumps(q)}: {x}" for x in p]
    answered = set(k for k, _ in questions)

    status = {}
    for test, outcome in rec.outcome.items():
        if outcome != "passed" and outcome != "skipped":
            status[test] = "packaging-fail"
            continue
        keys = [json.dumps(q, sort_keys=True) for q in rec.by_test.get(test, [])]
        keys = [k for k in keys if k in answered]
        if outcome == "skipped" or not keys:
            status[test] = "no counterpart"
            continue
        bad = [line for k in keys for line in problems.get(k, [])]
        if not bad:
            status[test] = "passed"
        elif all(any(d in b for d in DELIBERATE) for b in bad):
            status[test] = "deliberate"
        else:
            status[test] = "failed"
            status[test + " :: " + bad[0]] = None
    counts = collections.Counter(v for v in status.values() if v)
    failing = sorted(k for k, v in status.items() if v is None)
    for line in failing[:60]:
        print("FAILED", line)
    if len(failing) > 60:
        print(f"... and {len(failing) - 60} more")
    per_module = collections.defaultdict(collections.Counter)
    for test, st in status.items():
        if st:
            per_module[test.split("::")[0]][st] += 1
    for mod, c in sorted(per_module.items()):
        print(f"  {mod}: " + ", ".join(f"{c[k]} {k}" for k in sorted(c)))
    print(f"packaging's tests ({args.modules}) against gpulock core: {sum(counts.values())} tests: "
          f"{counts['passed']} passed, {counts['failed']} failed, {counts['no counterpart']} no "
          f"counterpart, {counts['deliberate']} differ on purpose, {counts['packaging-fail']} fail "
          f"under packaging itself; {len(questions)} distinct inputs asked, {len(problems)} "
          f"disagree (pytest {ran - started:.0f}s, total {time.monotonic() - started:.0f}s)")
    if args.list:
        Path(args.list).write_text("".join(f"{v}\t{k}\n" for k, v in sorted(status.items()) if v))
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
