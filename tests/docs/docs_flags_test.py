#!/usr/bin/env python3
"""Every flag a command's `--help` prints is on that command's page (issue 42 item 4).

    docs_flags_test.py GPULOCK [--docs DIR]     check the real binary against DIR (default: docs/)
    docs_flags_test.py --self-test              prove the check fails where it must

The commands are read from `gpulock --help` ("Subcommands:"), their subcommands from each
`gpulock CMD --help`. Every long flag of `gpulock CMD [SUB] --help` must appear, as a whole word,
in docs/commands/CMD.md (a subcommand may have docs/commands/CMD-SUB.md; else it shares its
parent's page); gpulock's own options (`gpulock --help`) must appear in docs/commands/README.md.
A command without a page fails. Exit 0 when everything is documented, else 1 naming each
missing flag and page.
"""

from __future__ import annotations

import argparse
import os
import re
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DOCS = HERE.parent.parent / "docs"


def help_text(gpulock: str, words: list[str]) -> str:
    p = subprocess.run([gpulock, *words, "--help"], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "NO_COLOR": "1"})
    if p.returncode != 0:
        raise RuntimeError(f"`gpulock {' '.join(words + ['--help'])}` exited {p.returncode}: "
                           f"{p.stderr.strip()}")
    return p.stdout


def sections(text: str) -> dict[str, list[str]]:
    """CLI11's help: 'Options:', 'Subcommands:', 'Positionals:' headings, indented entries."""
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            current = line[:-1]
            out[current] = []
        elif current and line.startswith("  "):
            out[current].append(line)
        elif not line.strip():
            current = None
    return out


def long_flags(text: str) -> list[str]:
    """The long flags of the Options section: each entry's names, not words of descriptions."""
    flags: list[str] = []
    for line in sections(text).get("Options", []):
        if line.startswith("   "):  # a description continued on its own line
            continue
        head = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        # "-r,--requirement TEXT ...", "--urls,--direct-urls Excludes: --all-urls"
        names = head.split(" ", 1)[0]
        for name in names.split(","):
            if name.startswith("--") and name not in flags:
                flags.append(name)
    return flags


def subcommands(text: str) -> list[str]:
    return [line.split()[0] for line in sections(text).get("Subcommands", [])
            if not line.startswith("   ") and line.strip()]


def mentions(page_text: str, flag: str) -> bool:
    return re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", page_text) is not None


def check(gpulock: str, docs: Path) -> list[str]:
    problems: list[str] = []
    commands_dir = docs / "commands"
    top = help_text(gpulock, [])
    index = commands_dir / "README.md"
    if not index.is_file():
        problems.append(f"{index}: missing (gpulock's own options and the list of commands)")
    else:
        text = index.read_text()
        for flag in long_flags(top):
            if not mentions(text, flag):
                problems.append(f"{index}: gpulock's option {flag} is not mentioned")
    commands = subcommands(top)
    if not commands:
        problems.append("`gpulock --help` lists no commands: is its format still CLI11's?")
    checked = 0
    for command in commands:
        page = commands_dir / f"{command}.md"
        if not page.is_file():
            problems.append(f"{page}: missing: `gpulock {command}` has no page")
            continue
        text = page.read_text()
        command_help = help_text(gpulock, [command])
        todo = [([command], command_help, page, text)]
        for sub in subcommands(command_help):
            own = commands_dir / f"{command}-{sub}.md"
            sub_page, sub_text = (own, own.read_text()) if own.is_file() else (page, text)
            todo.append(([command, sub], help_text(gpulock, [command, sub]), sub_page, sub_text))
        for words, help_out, where, where_text in todo:
            for flag in long_flags(help_out):
                checked += 1
                if not mentions(where_text, flag):
                    problems.append(f"{where}: `gpulock {' '.join(words)}` option {flag} is not "
                                    "mentioned")
    if checked == 0:
        problems.append("no flag was checked: the help texts could not be read")
    return problems


# ----- self-test: a fake gpulock and fake pages, where the check must and must not fail -----

FAKE_HELP = {
    "": """gpulock: test
Usage: gpulock [OPTIONS] [SUBCOMMAND]

Options:
  -h,--help                   Show help and exit
  --color TEXT:{auto,always,never}=auto
                              Colour output: auto, always, never

Subcommands:
  alpha                       The first command
  beta                        A command with subcommands
""",
    "alpha": """The first command
Usage: gpulock alpha [OPTIONS]

Options:
  -h,--help                   Show this command's help and exit
  -o,--output TEXT=pylock.toml
                              Lock file to write, mentions --not-a-flag in its text
  --urls,--direct-urls Excludes: --all-urls
                              Direct URLs
  --all-urls Excludes: --urls Every package as a URL
""",
    "beta": """A command with subcommands
Usage: gpulock beta [OPTIONS] SUBCOMMAND

Options:
  -h,--help                   Show this command's help and exit

Subcommands:
  gamma                       A subcommand
""",
    "beta gamma": """A subcommand
Usage: gpulock beta gamma [OPTIONS]

Options:
  -h,--help                   Show this command's help and exit
  --keep TEXT ... REQUIRED    Locks to keep
""",
}

PAGES = {
    "README.md": "| `-h`, `--help` | help |\n| `--color WHEN` | colour |\n",
    "alpha.md": "`-o FILE`, `--output FILE`; `--urls`, `--direct-urls`; `--all-urls`; `--help`\n",
    "beta.md": "`--help`; `gpulock beta gamma --keep LOCK`\n",
}


def self_test() -> int:
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        fake = root / "gpulock"
        cases = "\n".join(
            f'  "{key}") cat <<\'EOF\'\n{text}EOF\n  ;;' for key, text in FAKE_HELP.items())
        fake.write_text('#!/bin/sh\nargs="$*"\nargs="${args% --help}"\n'
                        'case "$args" in\n  "--help") cat <<\'EOF\'\n' + FAKE_HELP[""] +
                        "EOF\n  ;;\n" + cases + '\n  *) echo "unknown: $args" >&2; exit 2 ;;\n'
                        "esac\n")
        fake.chmod(fake.stat().st_mode | stat.S_IXUSR)

        def run_case(name: str, pages: dict[str, str], expect: list[str]) -> None:
            docs = root / name / "docs"
            (docs / "commands").mkdir(parents=True)
            for file, text in pages.items():
                (docs / "commands" / file).write_text(text)
            got = check(str(fake), docs)
            if sorted(got) != sorted(expect):
                failures.append(f"{name}: expected {expect}, got {got}")

        c = root / "{}" / "docs" / "commands"
        run_case("complete", PAGES, [])
        run_case("flag-missing", {**PAGES, "alpha.md": "`--output`, `--urls`, `--help`\n"},
                 [f"{c}/alpha.md".format("flag-missing") +
                  ": `gpulock alpha` option --direct-urls is not mentioned",
                  f"{c}/alpha.md".format("flag-missing") +
                  ": `gpulock alpha` option --all-urls is not mentioned"])
        run_case("prefix-is-not-a-mention",
                 {**PAGES, "beta.md": "`--help`; `--keeping` is another flag\n"},
                 [f"{c}/beta.md".format("prefix-is-not-a-mention") +
                  ": `gpulock beta gamma` option --keep is not mentioned"])
        run_case("page-missing", {k: v for k, v in PAGES.items() if k != "beta.md"},
                 [f"{c}/beta.md".format("page-missing") +
                  ": missing: `gpulock beta` has no page"])
        run_case("subcommand-page", {**PAGES, "beta.md": "`--help`\n",
                                     "beta-gamma.md": "`--help`, `--keep`\n"}, [])
        run_case("global-option-missing", {**PAGES, "README.md": "`--help`\n"},
                 [f"{c}/README.md".format("global-option-missing") +
                  ": gpulock's option --color is not mentioned"])
    # The parser reads names, not descriptions.
    names = long_flags(FAKE_HELP["alpha"])
    if names != ["--help", "--output", "--urls", "--direct-urls", "--all-urls"]:
        failures.append(f"long_flags: {names}")
    for f in failures:
        print(f"FAIL: {f}")
    print("self-test: " + ("ok" if not failures else f"{len(failures)} failure(s)"))
    return 1 if failures else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gpulock", nargs="?")
    ap.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if not args.gpulock:
        ap.error("GPULOCK is required")
    problems = check(args.gpulock, args.docs)
    for p in problems:
        print(f"FAIL: {p}")
    if problems:
        print(f"{len(problems)} flag(s) or page(s) undocumented; each command's page ends with a "
              "table of its options (docs/commands/README.md)")
        return 1
    print("every flag of every command is on its page")
    return 0


if __name__ == "__main__":
    sys.exit(main())
