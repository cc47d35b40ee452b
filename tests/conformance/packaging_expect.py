"""packaging 26.3's answers to the questions packaging_recorder.py records, in the shape
core_oracle answers (tests/core/differential/oracle.cpp). Versions, specifiers, markers and
requirements go through differential.py's expect_* functions and their documented mapping; the
utils and tags questions are answered here. Needs REFERENCE/pip/src on sys.path (pip 26.3's
vendored packaging, imported as pip._vendor.packaging).
"""
import sys
from pathlib import Path

from packaging_recorder import KNOWN_ENV

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core/differential"))


def load():
    """differential.py with packaging loaded (exits with its message when it is not there)."""
    import differential
    differential.need_packaging()
    return differential


def joined(tags):
    return ",".join(sorted(str(t) for t in tags))


def too_big(diff, version):
    """A version number over 2^64-1: packaging accepts it (Python ints), gpulock reports an
    error (differential.py's first documented difference)."""
    return max(diff.version_numbers(version)) > diff.U64_MAX


def expect_utils(q, diff, stats):
    """packaging.utils and packaging.tags answers; None when the question has no counterpart."""
    from pip._vendor.packaging import tags, utils
    k, s = q["k"], q.get("s")
    try:
        if k == "w":
            name, version, build, tagset = utils.parse_wheel_filename(s)
            if too_big(diff, version) or (build and build[0] > diff.U64_MAX):
                stats["big numbers (expected error)"] += 1
                return {"ok": False}
            return {"ok": True, "n": name, "ver": str(version), "t": joined(tagset),
                    "b": f"{build[0]},{build[1]}" if build else ""}
        if k == "sd":
            name, version = utils.parse_sdist_filename(s)
            if too_big(diff, version):
                stats["big numbers (expected error)"] += 1
                return {"ok": False}
            return {"ok": True, "n": name, "ver": str(version)}
        if k == "n":
            return {"ok": True, "n": utils.canonicalize_name(s, validate=q["val"])}
        if k == "cv":
            return {"n": utils.canonicalize_version(s, strip_trailing_zero=q["strip"])}
        if k == "t":
            return {"ok": True, "t": joined(tags.parse_tag(s))}
        if k == "tag":
            parts = (q["i"], q["a"], q["p"])
            if any("-" in p or "." in p for p in parts):
                return None  # not one tag's text: gpulock holds tags only as parsed text
            return {"ok": True, "t": str(tags.Tag(*parts))}
    except Exception:  # InvalidWheelFilename, InvalidSdistFilename, InvalidName, ValueError
        return {"ok": False}
    raise ValueError(f"unknown question kind {k!r}")


def expect(q, diff, stats):
    """(question as asked, packaging's answer), or None when gpulock has no counterpart."""
    k = q["k"]
    if k == "m" and q["env"] and not set(q["env"]) <= KNOWN_ENV:
        return None  # made-up environment keys
    if k == "v":
        return q, diff.expect_version(q["s"], stats)
    if k == "c":
        try:
            va, vb = diff.Version(q["a"]), diff.Version(q["b"])
        except (diff.InvalidVersion, ValueError):
            return None
        if too_big(diff, va) or too_big(diff, vb):
            return None
        return q, {"c": str(-1 if va < vb else (0 if va == vb else 1)), "hash": True, "cons": True}
    if k == "s":
        try:
            return q, diff.expect_spec(q["s"], q["v"], stats)
        except ValueError:  # a number over Python's 4300-digit limit: not a specifier
            return q, {"ok": False}
    if k == "m":
        if q["env"] is None:
            e = diff.expect_marker(q["s"], {}, "", stats)
            e.pop("r", None)
            return dict(q, env={}), e
        return q, diff.expect_marker(q["s"], q["env"], q["x"], stats)
    if k == "r":
        return q, diff.expect_requirement(q["s"], stats)
    e = expect_utils(q, diff, stats)
    return None if e is None else (q, e)
