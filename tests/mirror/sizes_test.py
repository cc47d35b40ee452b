#!/usr/bin/env python3
"""A mirror's PEP 691 pages declare every file's size (issue 41 item 7): the mirror holds the
bytes, so a file whose lock (and source page) gave no `size`, as the PyTorch index's do, still
gets PEP 700's `size` on a page that declares api-version 1.1.

    sizes_test.py --gpulock EXE --work DIR
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "security"))
from install_attack import Gpulock, check, make_wheel, run, write_lock  # noqa: E402


def test(g: Gpulock, work: Path) -> None:
    wheels = [make_wheel(work / "wheels", name, "1.0", {f"{name}/__init__.py": b"X = 1\n" * n})
              for name, n in (("sized", 3), ("unsized", 5))]
    lock = write_lock(work / "pylock.toml", [("sized", "1.0", wheels[0]),
                                            ("unsized", "1.0", wheels[1])])
    # The second file without a size, as a lock of the PyTorch index's files has it.
    text = lock.read_text()
    at = text.index('name = "unsized-1.0')
    lock.write_text(text[:at] + re.sub(r"size = \d+\n", "", text[at:], count=1))
    check("size = " not in lock.read_text()[at:], "the lock gives no size for unsized's wheel")
    p = g.run("mirror", "add", str(lock), "--to", str(work / "m"), "--cache-dir",
              str(work / "cache"))
    check(p.returncode == 0, "mirror add exits 0")
    for whl in wheels:
        project = whl.name.split("-")[0]
        page = json.loads((work / "m" / "simple" / project / "index.json").read_text())
        check(page["meta"]["api-version"] == "1.1", f"{project}: the page declares api 1.1")
        sizes = [f.get("size") for f in page["files"]]
        check(sizes == [whl.stat().st_size],
              f"{project}: every file entry carries its size ({sizes}, {whl.stat().st_size})")


if __name__ == "__main__":
    sys.exit(run({"sizes": test}))
