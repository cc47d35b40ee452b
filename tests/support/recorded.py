"""Answers recorded from the reference implementations (tests/recorded/, issue 42).

A recording is xz-compressed JSON lines (.jsonl.xz): the first line is a header object (what was
recorded, from which reference, with which seed or modules), every further line one row, keys
sorted. The bytes depend only on the content, so re-recording unchanged answers changes nothing.
scripts/record-golden writes them from a reference directory; the default suite reads them.
"""
import json
import lzma
from pathlib import Path


def write(path, header, rows):
    """Writes `header` and `rows` (JSON values) to `path` (.jsonl.xz)."""
    text = json.dumps(header, sort_keys=True) + "\n"
    text += "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_bytes(lzma.compress(text.encode("ascii"), preset=9 | lzma.PRESET_EXTREME))


def read(path):
    """(header, rows) of a recording; exits with a message naming the file when it is missing."""
    p = Path(path)
    if not p.is_file():
        raise SystemExit(f"{p}: no such recording (scripts/record-golden writes it from a "
                         "reference directory; docs/testing.md)")
    lines = lzma.decompress(p.read_bytes()).decode("ascii").splitlines()
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
