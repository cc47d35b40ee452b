#!/usr/bin/python3
"""pypa/packaging's own test modules, answered by gpulock's core (issues 20 and 42, `conformance`).

Usage: packaging_tests.py --oracle CORE_ORACLE --reference DIR --work DIR [--modules a,b,...]
                          [--record FILE | --check-golden FILE] [--list FILE]
       packaging_tests.py --oracle CORE_ORACLE --golden FILE [--modules a,b,...] [--list FILE]

Live: runs packaging's test modules (DIR/packaging/tests, with pytest, hypothesis, pretend and
tomli_w from Debian) against packaging 26.3 (DIR/pip/src/pip/_vendor/packaging, imported as
`packaging`) with packaging_recorder.py around its public entry points: every input a test hands
them becomes a question for core_oracle, and packaging 26.3's answer to the same question
(packaging_expect.py) is compared with gpulock's. --record FILE keeps the questions, answers and
test outcomes (tests/recorded/, scripts/record-golden); --golden FILE compares with such a
recording instead, without packaging or pytest (the default suite; it holds every module,
test_version's 51,000 tests included). Per test, one of:
  passed          the test passed under packaging and gpulock agreed on every input it recorded;
  failed          gpulock disagreed on an input, and no deviation lists that disagreement;
  deviation       every disagreement is a deliberate one, listed with its reason in
                  packaging_deviations.toml;
  not applicable  listed there with the reason (platform detection: sys_tags, manylinux,
                  musllinux and macOS probing of the running interpreter);
  no counterpart  the test recorded nothing gpulock answers (pickling, metadata, repr, ...);
  packaging-fail  the test fails under packaging 26.3 itself (environment), not counted above.
Exits 1 when a test failed, or when a listed deviation of a module that ran matched nothing.
"""
import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "support"))
import recorded  # noqa: E402
from packaging_recorder import Recorder  # noqa: E402

DEFAULT_MODULES = "version,specifiers,markers,requirements,tags,utils"
DEVIATIONS = HERE / "packaging_deviations.toml"


def run_pytest(reference, work, modules):
    """Runs the modules under the recorder: (by_test questions, outcome per test, seconds)."""
    vendored = reference / "pip/src/pip/_vendor/packaging"
    tests_src = reference / "packaging/tests"
    for p in (vendored, tests_src):
        if not p.is_dir():
            sys.exit(f"packaging_tests.py: {p} is missing")
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    shutil.copytree(tests_src, work / "tests")
    for p in [work / "tests", *(work / "tests").rglob("*")]:
        p.chmod(p.stat().st_mode | 0o200)  # the reference may be read-only (CI's copy)
    (work / "tests/__init__.py").touch()
    (work / "packaging").symlink_to(vendored)
    sys.path.insert(0, str(work))
    cwd = os.getcwd()
    os.chdir(work)
    started = time.monotonic()
    import packaging
    import pytest
    rec = Recorder()
    rec.install(packaging)
    files = [f"tests/test_{m}.py" for m in modules]
    pytest.main(["-q", "-p", "no:cacheprovider", "--no-header", "-o", "console_output_style=count",
                 "-W", "ignore", *files], plugins=[rec])
    os.chdir(cwd)
    return rec.by_test, rec.outcome, time.monotonic() - started


def expected_table(reference, by_test, outcome):
    """The recording: header stats, questions with packaging's answers, and per test its outcome
    and the questions it asked (indices; those without a counterpart left out)."""
    sys.path.insert(0, str(reference / "pip/src"))
    import packaging_expect
    diff = packaging_expect.load()
    stats = collections.Counter()
    index, questions = {}, []
    tests = {}
    for test, result in outcome.items():
        asks = []
        for q in by_test.get(test, []):
            key = json.dumps(q, sort_keys=True)
            if key not in index:
                pair = packaging_expect.expect(q, diff, stats)
                index[key] = None if pair is None else len(questions)
                if pair is not None:
                    questions.append(list(pair))
            if index[key] is not None and index[key] not in asks:
                asks.append(index[key])
        tests[test] = {"outcome": result, "asks": asks}
    return diff.packaging.__version__, dict(stats), questions, tests


def ask_oracle(oracle, questions, stats):
    """Disagreement lines per question index."""
    sys.path.insert(0, str(HERE.parent / "core/differential"))
    import differential as diff
    payload = "".join(json.dumps(q) + "\n" for q, _ in questions)
    proc = subprocess.run([oracle], input=payload.encode("utf-8", "surrogatepass"),
                          capture_output=True)
    if proc.returncode != 0:
        sys.exit(f"oracle failed: {proc.stderr.decode()[-2000:]}")
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    if len(lines) != len(questions):
        sys.exit(f"oracle answered {len(lines)} of {len(questions)} questions")
    problems = {}
    for i, ((q, e), line) in enumerate(zip(questions, lines)):
        p = diff.compare(q, e, json.loads(line), stats)
        if p:
            problems[i] = [f"{json.dumps(q)}: {x}" for x in p]
    return problems


# Facts of the kernel a recording ran on (its release and build), which a marker test's default
# environment holds: two machines of the same kind differ in them (6.18.44-fc-v1272 and -v1294).
HOST_FACTS = ("platform_release", "platform_version")


def without_host_facts(question):
    """`question` with the kernel's facts in a default environment replaced by one word."""
    if isinstance(question, list):
        return [without_host_facts(q) for q in question]
    if isinstance(question, dict):
        return {k: ("<host>" if k in HOST_FACTS and isinstance(v, str) else without_host_facts(v))
                for k, v in question.items()}
    return question


def by_content(questions, tests, modules):
    """Per test of `modules`: its outcome and the questions it asked with their answers, as
    sorted JSON text (independent of the order questions were numbered in, and of the kernel
    the recording ran on)."""
    return {t: (v["outcome"], sorted(json.dumps(without_host_facts(questions[i]), sort_keys=True)
                                     for i in v["asks"]))
            for t, v in tests.items() if module_of(t) in modules}


def module_of(test):
    return test.split("::")[0].removeprefix("tests/test_").removesuffix(".py")


def matches_any(match, line):
    """A deviation's `match`: one substring of the disagreement line, or a list of them."""
    return any(m in line for m in ([match] if isinstance(match, str) else match))


def classify(tests, problems, listed):
    """Status per test, the disagreement lines of failed tests, and uses per listed entry."""
    status, failing = {}, []
    used = collections.Counter()
    for test, t in sorted(tests.items()):
        na = next((i for i, n in enumerate(listed["not_applicable"])
                   if test.startswith(n["test"])), None)
        if na is not None:
            status[test] = "not applicable"
            used[("not_applicable", na)] += 1
            continue
        if t["outcome"] not in ("passed", "skipped"):
            status[test] = "packaging-fail"
            continue
        if t["outcome"] == "skipped" or not t["asks"]:
            status[test] = "no counterpart"
            continue
        bad = [line for i in t["asks"] for line in problems.get(i, [])]
        matches = [next((i for i, d in enumerate(listed["deviation"])
                         if d["module"] == module_of(test) and matches_any(d["match"], b)), None)
                   for b in bad]
        if not bad:
            status[test] = "passed"
        elif all(m is not None for m in matches):
            status[test] = "deviation"
            for m in set(matches):
                used[("deviation", m)] += 1
        else:
            status[test] = "failed"
            failing.append(f"{test} :: {bad[matches.index(None)]}")
    return status, failing, used


def report(args, status, failing, used, listed, modules, asked, disagree, reference):
    """Prints the counts; returns the exit status."""
    for line in failing[:60]:
        print("FAILED", line)
    if len(failing) > 60:
        print(f"... and {len(failing) - 60} more")
    per_module = collections.defaultdict(collections.Counter)
    for test, st in status.items():
        per_module[test.split("::")[0]][st] += 1
    for mod, c in sorted(per_module.items()):
        print(f"  {mod}: " + ", ".join(f"{c[k]} {k}" for k in sorted(c)))
    stale = []
    for kind in ("deviation", "not_applicable"):
        for i, entry in enumerate(listed[kind]):
            n = used[(kind, i)]
            what = entry.get("match") or entry.get("test")
            if n:
                print(f"  {kind.replace('_', ' ')} ({n} tests): {what!r}: {entry['reason']}")
            elif kind == "deviation" and entry["module"] in modules:
                stale.append(f"listed deviation {what!r} ({entry['module']}) matched no test: "
                             "gpulock agrees now, remove it from packaging_deviations.toml")
    for line in stale:
        print("FAILED", line)
    c = collections.Counter(status.values())
    print(f"packaging {reference} tests ({','.join(modules)}) against gpulock core: "
          f"{len(status)} tests: {c['passed']} passed, {c['failed']} failed, {c['deviation']} "
          f"deviations (listed), {c['not applicable']} not applicable (listed), "
          f"{c['no counterpart']} no counterpart, {c['packaging-fail']} fail under packaging "
          f"itself; {asked} distinct inputs asked, {disagree} disagree")
    if args.list:
        Path(args.list).write_text("".join(f"{v}\t{k}\n" for k, v in sorted(status.items())))
    return 1 if c["failed"] or stale else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--reference", type=Path, help="pip/ and packaging/ (live run)")
    ap.add_argument("--shared", type=Path, help="deprecated: the directory above reference/")
    ap.add_argument("--golden", help="a recording to compare with instead of a live run")
    ap.add_argument("--record", help="write the live run's recording here")
    ap.add_argument("--check-golden", help="fail unless the live run's recording equals this")
    ap.add_argument("--work", type=Path)
    ap.add_argument("--modules", help=f"default: {DEFAULT_MODULES} (live), every module (golden)")
    ap.add_argument("--deviations", type=Path, default=DEVIATIONS)
    ap.add_argument("--list", help="write every test with its status here")
    args = ap.parse_args()
    started = time.monotonic()
    if args.shared and not args.reference:
        args.reference = args.shared / "reference"
    if bool(args.reference) == bool(args.golden):
        ap.error("give either --reference DIR (live) or --golden FILE")
    listed = tomllib.loads(args.deviations.read_text())
    listed.setdefault("deviation", [])
    listed.setdefault("not_applicable", [])
    stale = False
    if args.golden:
        header, rows = recorded.read(args.golden)
        questions, tests = rows[0]["questions"], rows[1]["tests"]
        stats = collections.Counter(header["stats"])
        modules = args.modules.split(",") if args.modules else header["modules"]
        reference = f"{header['packaging']} (recorded)"
    else:
        modules = (args.modules or DEFAULT_MODULES).split(",")
        by_test, outcome, took = run_pytest(args.reference, args.work, modules)
        version, stats, questions, tests = expected_table(args.reference, by_test, outcome)
        stats = collections.Counter(stats)
        reference = version
        header = {"what": "pypa/packaging's tests: questions recorded from them, packaging's "
                  "answers, test outcomes", "packaging": version, "modules": modules,
                  "stats": dict(stats)}
        rows = [{"questions": questions}, {"tests": tests}]
        print(f"pytest and packaging's answers: {took:.0f}s")
        if args.record:
            recorded.write(args.record, header, rows)
            print(f"recorded {len(tests)} tests, {len(questions)} questions in {args.record}")
        if args.check_golden:
            _, old_rows = recorded.read(args.check_golden)
            old = by_content(old_rows[0]["questions"], old_rows[1]["tests"], modules)
            if old != by_content(json.loads(json.dumps(questions)), tests, modules):
                stale = True
                print(f"FAILED: {args.check_golden} is not what this run records for "
                      f"{','.join(modules)} (re-record it with scripts/record-golden)")
    tests = {t: v for t, v in tests.items() if module_of(t) in modules}
    problems = ask_oracle(args.oracle, questions, stats)
    status, failing, used = classify(tests, problems, listed)
    code = report(args, status, failing, used, listed, modules, len(questions), len(problems),
                  reference)
    print(f"({time.monotonic() - started:.0f}s)")
    return 1 if code or stale else 0


if __name__ == "__main__":
    sys.exit(main())
