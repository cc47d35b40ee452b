#!/usr/bin/env python3
"""`--json` on every command that reports, and diff's list facts one line per entry (issue 41
item 8), through the real binary against file:// indexes:

- resolve: `--json` prints the report (schema gpulock.resolve-report/2) on stdout and writes the
  lock to -o (default pylock.toml); `--json -o -` is a usage error (exit 2); with
  `--all-targets` the targets' outcomes (gpulock.resolve-targets/1);
- export, mirror add|verify|gc, cache dir|prune: one JSON document on stdout, its `schema` key,
  its fields, the exit status the text output has;
- diff: `indexes` and `inputs.options` print one line per changed entry, not one line of
  every entry joined; `diff a.toml` alone names OLD and NEW; `export --format requirements`
  gets a did-you-mean.

    json_outputs_test.py ITEM --gpulock EXE --work DIR     (ITEM: resolve, export, mirror,
                                                            cache, diff)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "security"))
from install_attack import Gpulock, check, make_wheel, run  # noqa: E402


def text(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def doc_of(p, schema: str) -> dict | None:
    """stdout as one JSON object with this `schema`, else None (and a failed check)."""
    try:
        doc = json.loads(p.out)
    except ValueError:
        check(False, f"stdout is one JSON document ({schema})")
        return None
    ok = isinstance(doc, dict) and doc.get("schema") == schema
    check(ok, f"stdout is the {schema} document")
    return doc if ok else None


def project(g: Gpulock, work: Path) -> list[str]:
    """A project of one requirement whose wheels come from --find-links; the resolve flags."""
    for v in ("1.0", "2.0"):
        make_wheel(work / "wheels", "jpkg", v, {"jpkg/__init__.py": f"V = '{v}'\n".encode()})
    (work / "requirements.txt").write_text("jpkg==1.0\n")
    (work / "simple").mkdir(exist_ok=True)  # an empty index: the wheels come from --find-links
    return ["-r", "requirements.txt", "--index-url", (work / "simple").as_uri(), "--find-links",
            "wheels", "--driver", "none"]


def lock(g: Gpulock, work: Path) -> Path:
    p = g.run("resolve", *project(g, work), "-q")
    check(p.returncode == 0 and (work / "pylock.toml").exists(), "a lock to work on")
    return work / "pylock.toml"


def test_resolve(g: Gpulock, work: Path) -> None:
    flags = project(g, work)
    p = g.run("resolve", *flags, "--json")
    doc = doc_of(p, "gpulock.resolve-report/2")
    if doc:
        check(doc["solved"] is True and doc["output"] == "pylock.toml"
              and [x["name"] for x in doc["packages"]] == ["jpkg"]
              and doc["packages"][0]["version"] == "1.0",
              "resolve --json: solved, the lock's path, each package with its version")
    check(p.returncode == 0 and "[[packages]]" in text(work / "pylock.toml"),
          "resolve --json writes the lock to pylock.toml, not to stdout")
    p = g.run("resolve", *flags, "--json", "-o", "other.toml", "--explain")
    doc = doc_of(p, "gpulock.resolve-report/2")
    check(doc is not None and doc["output"] == "other.toml" and (work / "other.toml").exists()
          and "required by you" in p.err,
          "resolve --json -o FILE writes FILE; --explain's text goes to stderr")
    before = text(work / "pylock.toml")
    p = g.run("resolve", *flags, "--json", "-o", "-")
    check(p.returncode == 2 and "--json and -o - both write to stdout" in p.err and p.out == ""
          and text(work / "pylock.toml") == before,
          "resolve --json -o - is a usage error (exit 2), nothing written")
    (work / "requirements.txt").write_text("jpkg==9.0\n")
    p = g.run("resolve", *flags, "--json", "-o", "none.toml")
    doc = doc_of(p, "gpulock.resolve-report/2")
    check(p.returncode == 1 and doc is not None and doc["solved"] is False
          and "jpkg" in doc["headline"],
          "resolve --json with no solution: the report says why, exit 1")
    # Declared targets: each one's outcome.
    (work / "requirements.txt").write_text("jpkg==1.0\n")
    (work / "gpulock.toml").write_text(
        '[targets.one]\npython-version = "3.11"\nplatform = "manylinux_2_28_x86_64"\n'
        'driver = "none"\n\n[targets.two]\npython-version = "3.12"\n'
        'platform = "manylinux_2_28_x86_64"\ndriver = "none"\n')
    p = g.run("resolve", *flags[:-2], "--all-targets", "--json")
    doc = doc_of(p, "gpulock.resolve-targets/1")
    check(p.returncode == 0 and doc is not None and doc["written"] is True
          and [t["name"] for t in doc["targets"]] == ["one", "two"]
          and all(t["solved"] and t["packages"] == 1 for t in doc["targets"])
          and (work / "pylock.one.toml").exists(),
          "resolve --all-targets --json: each target's outcome, the set written")


def test_export(g: Gpulock, work: Path) -> None:
    lock(g, work)
    p = g.run("export", "--json")
    doc = doc_of(p, "gpulock.export/1")
    if doc:
        pkgs = doc["packages"]
        check(p.returncode == 0 and [x["name"] for x in pkgs] == ["jpkg"]
              and pkgs[0]["version"] == "1.0" and pkgs[0]["url"] is None
              and len(pkgs[0]["hashes"]) == 1 and pkgs[0]["hashes"][0].startswith("sha256:")
              and doc["output"] is None and "jpkg==1.0" in doc["requirements"],
              "export --json: each requirement with its hashes, the text as requirements")
    p = g.run("export", "--json", "-o", "req.txt")
    doc = doc_of(p, "gpulock.export/1")
    check(doc is not None and doc["output"] == "req.txt"
          and text(work / "req.txt") == doc["requirements"],
          "export --json -o FILE: FILE holds exactly the text the JSON reports")
    p = g.run("export", "--json", "--all-urls")
    doc = doc_of(p, "gpulock.export/1")
    check(doc is not None and doc["packages"][0]["url"] is not None
          and doc["packages"][0]["url"].endswith("jpkg-1.0-py3-none-any.whl")
          and doc["packages"][0]["version"] is None,
          "export --json --all-urls: the direct URL of each package")
    p = g.run("export", "--json", "-o", "-")
    check(p.returncode == 2 and p.out == "", "export --json -o - is a usage error (exit 2)")


def test_mirror(g: Gpulock, work: Path) -> None:
    lk = lock(g, work)
    p = g.run("mirror", "add", str(lk), "--to", "m", "--json", "--cache-dir", "c")
    doc = doc_of(p, "gpulock.mirror-add/1")
    check(p.returncode == 0 and doc is not None and doc["ok"] is True and doc["files"] == 1
          and doc["downloaded"] == 1 and doc["present"] == 0 and doc["missing"] == [],
          "mirror add --json: the counts of the run")
    p = g.run("mirror", "add", str(lk), "--to", "m", "--json", "--offline", "--cache-dir", "c")
    doc = doc_of(p, "gpulock.mirror-add/1")
    check(p.returncode == 0 and doc is not None and doc["present"] == 1
          and doc["downloaded"] == 0 and doc["offline"] is True,
          "mirror add --offline --json: the file already there")
    p = g.run("mirror", "verify", "m", "--json")
    doc = doc_of(p, "gpulock.mirror-verify/1")
    check(p.returncode == 0 and doc is not None and doc["ok"] is True and doc["checked"] == 1
          and doc["corrupt"] == [], "mirror verify --json: intact")
    # A stored file with other bytes: the finding is in the JSON, exit 1 as the text says.
    stored = [f for f in (work / "m").rglob("*.whl") if f.is_file() and not f.is_symlink()]
    target = stored[0] if stored else None
    if target is not None:
        target.chmod(0o644)
        target.write_bytes(b"not the wheel")
    p = g.run("mirror", "verify", "m", "--json")
    doc = doc_of(p, "gpulock.mirror-verify/1")
    check(p.returncode == 1 and doc is not None and doc["ok"] is False
          and len(doc["corrupt"]) == 1 and "corrupt:" not in p.out,
          "mirror verify --json: a corrupt file is in the JSON alone, exit 1")
    empty = work / "empty.toml"
    empty.write_text('lock-version = "1.0"\ncreated-by = "test"\npackages = []\n')
    p = g.run("mirror", "gc", "m", "--keep", str(empty), "--json")
    doc = doc_of(p, "gpulock.mirror-gc/1")
    check(p.returncode == 0 and doc is not None and doc["kept"] == 0
          and len(doc["removed"]) >= 1 and doc["keep"] == [str(empty)],
          "mirror gc --json: what was removed")


def test_cache(g: Gpulock, work: Path) -> None:
    p = g.run("cache", "--cache-dir", str(work / "c"), "dir", "--json")
    doc = doc_of(p, "gpulock.cache-dir/1")
    check(p.returncode == 0 and doc is not None and doc["dir"] == str(work / "c" / "wheels-v1")
          and doc["exists"] is False, "cache dir --json: where, and that it is not there yet")
    (work / "c" / "wheels-v1").mkdir(parents=True)
    p = g.run("cache", "--cache-dir", str(work / "c"), "dir", "--json")
    doc = doc_of(p, "gpulock.cache-dir/1")
    check(doc is not None and doc["exists"] is True, "cache dir --json: it exists now")
    p = g.run("cache", "--cache-dir", str(work / "c"), "prune", "--json")
    doc = doc_of(p, "gpulock.cache-prune/1")
    check(p.returncode == 0 and doc is not None and doc["removed"] == 0 and doc["in_use"] == 0,
          "cache prune --json: what was removed")


def test_diff(g: Gpulock, work: Path) -> None:
    flags = project(g, work)
    p = g.run("resolve", *flags, "-o", "old.toml", "-q")
    (work / "simple2").mkdir()
    p = g.run("resolve", *flags, "--extra-index-url", (work / "simple2").as_uri(),
              "--prerelease", "allow", "-o", "new.toml", "-q")
    check(p.returncode == 0, "two locks whose indexes and options differ")
    p = g.run("diff", "old.toml", "new.toml")
    lines = p.out.splitlines()
    extra = f"  + extra-1={(work / 'simple2').as_uri()}/ (extra)"
    check(p.returncode == 1 and "indexes:" in lines and extra in lines,
          "diff: an added index is a line of its own")
    check("  - prerelease=if-necessary" in lines and "  + prerelease=allow" in lines
          and "inputs.options:" in lines,
          "diff: a changed option is one line removed, one added")
    check(not any("driver=none" in line for line in lines),
          "diff: options that did not change are not printed")
    check(not any("default=" in line and "extra-1=" in line for line in lines)
          and max(len(line) for line in lines) <= 160,
          "diff: no line holds several entries of a list (before: one line of 238 characters)")
    p = g.run("diff", "--json", "old.toml", "new.toml")
    doc = json.loads(p.out) if p.out.startswith("{") else {}
    check(any(f.get("key") == "indexes" for f in doc.get("facts", [])),
          "diff --json keeps its facts (key, old, new)")
    p = g.run("diff", "old.toml")
    check(p.returncode == 2 and "diff needs OLD and NEW" in p.err,
          "diff with one lock names OLD and NEW")
    p = g.run("export", "--lock", "old.toml", "--format", "requirements")
    check(p.returncode == 2 and "did you mean 'requirements-txt'" in p.err,
          "export --format requirements: a did-you-mean")


if __name__ == "__main__":
    sys.exit(run({"resolve": test_resolve, "export": test_export, "mirror": test_mirror,
                  "cache": test_cache, "diff": test_diff}))
