#!/usr/bin/env python3
"""Every relative link in README.md and docs/ resolves, and README.md stays short (issue 42 item 4).

    docs_links_test.py [ROOT]      check ROOT/README.md and ROOT/docs/**/*.md (default: this tree)
    docs_links_test.py --self-test prove the check fails where it must

A relative link `[text](path)` or `[text](path#anchor)` must name an existing file or directory
(relative to the page); an anchor must be the GitHub slug of a heading of the target Markdown
file (`#anchor` alone: of the page itself). Links inside code blocks and code spans are not
links. README.md has at most 300 lines. Exit 0 when everything holds, else 1 naming each broken
link with its page and line.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_ROOT = HERE.parent.parent
README_MAX_LINES = 300

LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?\s*\)")


def strip_code(text: str) -> list[str]:
    """The page's lines with fenced code blocks and code spans blanked (line numbers kept)."""
    out = []
    fence = None
    for line in text.splitlines():
        m = re.match(r"^\s*(```+|~~~+)", line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append("")
            continue
        if m:
            fence = m.group(1)
            out.append("")
            continue
        out.append(re.sub(r"(`+)(.+?)\1", lambda c: " " * len(c.group(0)), line))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    fence = None
    for line in page.read_text().splitlines():
        m = re.match(r"^\s*(```+|~~~+)", line)
        if fence:
            if m and m.group(1)[0] == fence[0]:
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        h = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not h:
            continue
        base = slug(h.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def pages(root: Path) -> list[Path]:
    found = [root / "README.md"] if (root / "README.md").is_file() else []
    return found + sorted((root / "docs").rglob("*.md"))


def check(root: Path) -> list[str]:
    problems: list[str] = []
    readme = root / "README.md"
    if not readme.is_file():
        problems.append(f"{readme}: missing")
    else:
        n = len(readme.read_text().splitlines())
        if n > README_MAX_LINES:
            problems.append(f"{readme}: {n} lines; at most {README_MAX_LINES} (move details into "
                            "docs/)")
    if not (root / "docs").is_dir():
        problems.append(f"{root / 'docs'}: missing")
    checked = 0
    for page in pages(root):
        for number, line in enumerate(strip_code(page.read_text()), 1):
            for m in list(LINK.finditer(line)) + list(IMAGE.finditer(line)):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
                    continue
                checked += 1
                where = f"{page.relative_to(root)}:{number}"
                path_part, _, anchor = target.partition("#")
                dest = (page.parent / path_part).resolve() if path_part else page
                if path_part and not dest.exists():
                    problems.append(f"{where}: link to {target}: {path_part} does not exist")
                    continue
                if anchor:
                    if dest.is_dir() or dest.suffix != ".md":
                        problems.append(f"{where}: link to {target}: an anchor into a file that "
                                        "is not Markdown")
                    elif anchor not in anchors(dest):
                        problems.append(f"{where}: link to {target}: {dest.name} has no heading "
                                        f"#{anchor}")
    if checked == 0:
        problems.append("no relative link was found in README.md and docs/")
    return problems


def self_test() -> int:
    failures: list[str] = []
    good_readme = ("# Tool\n\nSee [the guide](docs/guide.md#first-steps), [the dir](docs/), "
                   "[here](#tool) and [home](https://example.org/x).\n\n"
                   "```\n[not a link](nowhere.md)\n```\n\nA span: `[no](nowhere.md)`.\n")
    guide = ("# Guide\n\n## First steps\n\n## `--machine`: what it runs\n\n## Repeat\n\n"
             "## Repeat\n\nBack to [the README](../README.md#tool), to "
             "[the flag](#--machine-what-it-runs) and to [the second](#repeat-1).\n")
    cases = {
        "good": ({"README.md": good_readme, "docs/guide.md": guide}, []),
        "missing-file": ({"README.md": good_readme.replace("docs/guide.md#", "docs/gide.md#"),
                          "docs/guide.md": guide},
                         ["README.md:3: link to docs/gide.md#first-steps: docs/gide.md does not "
                          "exist"]),
        "missing-anchor": ({"README.md": good_readme.replace("#first-steps", "#first-step"),
                            "docs/guide.md": guide},
                           ["README.md:3: link to docs/guide.md#first-step: guide.md has no "
                            "heading #first-step"]),
        "too-long": ({"README.md": good_readme + "line\n" * 300, "docs/guide.md": guide},
                     ["README.md: 309 lines; at most 300 (move details into docs/)"]),
        "no-docs": ({"README.md": "# Tool\n\n[x](README.md)\n"}, ["docs: missing"]),
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name, (files, expect) in cases.items():
            root = Path(tmp) / name
            for rel, text in files.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text)
            got = [p.replace(str(root) + "/", "") for p in check(root)]
            if got != expect:
                failures.append(f"{name}: expected {expect}, got {got}")
    if slug("`gpulock probe --machine`: what this machine can run") != \
            "gpulock-probe---machine-what-this-machine-can-run":
        failures.append("slug of a heading with code and punctuation")
    for f in failures:
        print(f"FAIL: {f}")
    print("self-test: " + ("ok" if not failures else f"{len(failures)} failure(s)"))
    return 1 if failures else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", nargs="?", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    problems = check(args.root.resolve())
    for p in problems:
        print(f"FAIL: {p}")
    if problems:
        print(f"{len(problems)} problem(s)")
        return 1
    print(f"every relative link in README.md and docs/ resolves; README.md is at most "
          f"{README_MAX_LINES} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
