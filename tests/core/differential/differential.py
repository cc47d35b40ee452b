#!/usr/bin/python3
"""Differential test of gpulock::core against pypa/packaging, the reference implementation.

Usage: PYTHONPATH=PIP_SRC /usr/bin/python3 differential.py PATH/TO/core_oracle
                                   [--seed N] [--scale F] [--record FILE] [--check-golden FILE]
       /usr/bin/python3 differential.py PATH/TO/core_oracle --golden FILE

The reference is packaging 26.3 as vendored in pip 26.3 (REFERENCE/pip/src/pip/_vendor; ctest's
core_differential_live puts that directory first on PYTHONPATH, and this script refuses an older
packaging). --record FILE also writes the questions with packaging's answers (and the differences
applied) to FILE; --golden FILE asks the oracle those recorded questions and compares with the
recorded answers, without packaging (ctest's core_differential; tests/recorded/);
--check-golden FILE fails when FILE is not what packaging answers to the questions of today.
Generates random PEP 440 versions (epochs, pre/post/dev in every spelling, local labels such as
cu124, cpu, rocm6.2, whitespace, invalid mutations), version pairs, specifier sets with candidate
versions, PEP 508 markers with environments and requirements, asks packaging and the oracle the
same questions (parse ok?, normalized form, compare, contains with default/True/False
pre-release policy, marker result or error, requirement text), and fails on any disagreement,
printing the first few with their inputs. Prints the number of cases compared.

The mapping between the two APIs and the known, documented differences (see core/src/*.cpp) are
applied to packaging's answers, not skipped silently; each is counted and reported:
  - numbers above 2^64-1: packaging accepts (Python ints), gpulock must report an error;
  - contains() with no policy: gpulock's default admits pre-releases only when the set names
    one (packaging 26 admits a lone pre-release: "no alternatives"), so the expected answer is
    packaging's contains(v, prereleases=bool(SpecifierSet.prereleases));
  - a marker value holding both quote characters: packaging cannot print it (ValueError);
    gpulock prints it with escapes, and only its round trip is compared;
  - a marker value that packaging prints so that it does not read back (a backslash starting an
    escape or escaping the closing quote, a line break, a NUL byte): gpulock escapes it, so only
    its round trip is compared (printed_differently below);
  - a requirement URL that cannot be fetched (`http:///x`, `file:/x`, `https://[bad]/x`,
    `C:\\x.whl`): packaging 26.3 accepts any URL text, gpulock rejects it as packaging 23.0
    did (url_unusable below).
Candidate versions are passed as text, so `===` compares the text as written on both sides.
Inputs never contain the few non-ASCII letters Python's re.IGNORECASE folds onto ASCII (K KELVIN
SIGN and friends) nor `\\N{...}` escapes, which gpulock rejects by design.
"""
import json
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))
import recorded  # noqa: E402

try:
    from pip._vendor import packaging
    from pip._vendor.packaging._parser import Value
    from pip._vendor.packaging.markers import Marker
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.specifiers import InvalidSpecifier, SpecifierSet
    from pip._vendor.packaging.version import InvalidVersion, Version
except ImportError:
    packaging = None  # only --golden runs without it


def need_packaging():
    if packaging is None:
        sys.exit("differential.py: pip 26.3's vendored packaging is not importable; put "
                 "REFERENCE/pip/src on PYTHONPATH (GPULOCK_REFERENCE_DIR in CMake), or pass "
                 "--golden FILE to compare with recorded answers")
    if tuple(int(x) for x in packaging.__version__.split(".")[:2]) < (26, 3):
        sys.exit(f"differential.py: packaging {packaging.__version__} found, 26.3 needed")

U64_MAX = 2**64 - 1


def build_rng(seed):
    return random.Random(seed)


# ------------------------------------------------------------------------------------------
# Generators

class Gen:
    def __init__(self, rng):
        self.r = rng

    def choice(self, xs):
        return self.r.choice(xs)

    def chance(self, p):
        return self.r.random() < p

    def num(self, big=False):
        r = self.r.random()
        if big and r < 0.03:
            return str(self.r.choice([U64_MAX, U64_MAX + 1, 10**25, 2**70]))
        if r < 0.15:
            return self.choice(["0", "00", "01", "007"])
        if r < 0.8:
            return str(self.r.randint(0, 12))
        return str(self.r.randint(0, 2024))

    def sep(self):
        return self.choice(["", "", "", ".", "-", "_"])

    def local(self):
        return self.choice([
            "cu124", "cu121", "cu118", "cpu", "rocm6.2", "rocm6.1", "cu92", "cu130", "xpu",
            "ubuntu-1", "Ubuntu_1", "abc.01", "1.2", "007", "CU124", "deadbeef", "git.abc123",
            "a", "0", "cpu.cxx11.abi", "rocm6.2.4", "1-a_b.c",
        ])

    def version(self, valid=True, big=True, allow_local=True):
        g = self
        s = ""
        if g.chance(0.05):
            s += g.choice(["v", "V"])
        if g.chance(0.1):
            s += g.num(big) + "!"
        s += ".".join(g.num(big) for _ in range(g.r.randint(1, 5)))
        if g.chance(0.3):
            s += g.sep() + g.choice(["a", "b", "c", "rc", "alpha", "beta", "pre", "preview",
                                      "RC", "A", "Alpha", "Preview"]) + g.sep() + \
                g.choice(["", g.num(big)])
        if g.chance(0.25):
            if g.chance(0.3):
                s += "-" + g.num(big)
            else:
                s += g.sep() + g.choice(["post", "rev", "r", "POST", "Rev"]) + g.sep() + \
                    g.choice(["", g.num(big)])
        if g.chance(0.25):
            s += g.sep() + g.choice(["dev", "DEV", "Dev"]) + g.sep() + g.choice(["", g.num(big)])
        if allow_local and g.chance(0.3):
            s += "+" + g.local()
        if g.chance(0.05):
            s = g.choice([" ", "\t", "\n", "\u00a0", "\u2003", "  "]) + s + \
                g.choice(["", " ", "\n", "\r\n", "\u3000", "\x1f"])
        if not valid:
            s = self.mutate(s)
        return s

    def mutate(self, s):
        for _ in range(self.r.randint(1, 2)):
            i = self.r.randint(0, len(s))
            ins = self.choice([".", "-", "_", "+", "!", "*", "a", "x", "z", " ", "\t", "é", "",
                               ",", "..", "\x00", "(", ")", ";", "'", '"', "=", "<", "\u00a0",
                               "\udcff"[:0], "post", "dev", "9"])
            s = s[:i] + ins + s[i + self.r.randint(0, 2):]
        return s

    # Specifiers -----------------------------------------------------------------------------
    def spec_clause(self, valid=True):
        g = self
        op = g.choice(["==", "!=", "<=", ">=", "<", ">", "~=", "==="])
        r = g.r.random()
        if op == "===":
            body = g.choice([g.version(big=False), "foobar", "1.0", "1.0.0", "FooBar", "",
                             g.version(big=False)])
            if " " in body.strip() or any(c in body for c in ";)"):
                body = "1.0"
            body = body.strip()
        elif op in ("==", "!=") and r < 0.3:
            body = g.choice(["", "v"]) + (g.num() + "!" if g.chance(0.1) else "") + \
                ".".join(g.num() for _ in range(g.r.randint(1, 4))) + ".*"
        elif op == "~=":
            body = g.version(big=False, allow_local=False)
            if "." not in body.split("+")[0] and g.chance(0.8):
                body = body.replace(body.lstrip("vV").split("!")[-1][:1], body.lstrip("vV").split("!")[-1][:1] + ".0", 1)
        else:
            body = g.version(big=False, allow_local=op in ("==", "!="))
        if not valid and g.chance(0.5):
            # Grammar violations the regex must reject.
            body = g.choice([body + "+local", body + ".*", "1", body + "a1.*", "", body + " x"])
        text = g.choice(["", " ", "  "]) + op + g.choice(["", "", " ", "\t"]) + body.strip() + \
            g.choice(["", "", " "])
        if not valid and g.chance(0.5):
            text = self.mutate(text)
        return text

    def spec_set(self, valid=True):
        n = self.r.randint(0, 3)
        clauses = [self.spec_clause(valid) for _ in range(n)]
        if self.chance(0.05):
            clauses.append("")
        return ",".join(clauses)

    # Markers --------------------------------------------------------------------------------
    VARS = {
        "python_version": ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3", "2.7", "3.*",
                           "3.1*", "3.11.*", " 3.9", "3.9 ", "=3.8", "3.13.0rc1", "", "abc",
                           "3.10.0", "3.8;", "4"],
        "python_full_version": ["3.11.4", "3.13.0rc1", "3.12.0+", "3.12.1", "3.8.10", "3.11.*",
                                "3.11.0", "2.7.18"],
        "os_name": ["posix", "nt", "java", "POSIX", "pos"],
        "sys_platform": ["linux", "win32", "darwin", "linux2", "lin", "cygwin"],
        "platform_machine": ["x86_64", "aarch64", "AMD64", "arm64", "x86", "ppc64le"],
        "platform_release": ["5.15.0-91-generic", "6.1", "23.0.0", "6.8.0", "", "5"],
        "platform_system": ["Linux", "Windows", "Darwin", "linux"],
        "platform_version": ["#1 SMP", "10.0.19041", "1.0", ""],
        "platform_python_implementation": ["CPython", "PyPy", "cpython"],
        "implementation_name": ["cpython", "pypy", "CPython"],
        "implementation_version": ["3.11.4", "3.13.0rc1", "3.12.0", "7.3.12", "3.11.*"],
        "extra": ["gpu", "GPU_Extra", "test", "cu124", "Foo.Bar", "", "foo-bar", "foo_bar",
                  "1.0", "3.11"],
    }
    SPELLINGS = {
        "os_name": ["os_name", "os.name"],
        "sys_platform": ["sys_platform", "sys.platform"],
        "platform_version": ["platform_version", "platform.version"],
        "platform_machine": ["platform_machine", "platform.machine"],
        "platform_python_implementation": ["platform_python_implementation",
                                           "platform.python_implementation",
                                           "python_implementation"],
    }

    def literal(self, var):
        g = self
        value = g.choice(self.VARS[var]) if var else g.choice(
            ["posix", "3.8", "abc", "", "gpu", "python_version", "os_name", "extra"])
        q = g.choice(["'", '"'])
        if q in value:
            q = "'" if q == '"' else '"'
        if g.chance(0.05) and value:
            # A Python escape for the first character.
            c = value[0]
            esc = g.choice(["\\x%02x" % ord(c), "\\u%04x" % ord(c), "\\%o" % ord(c)]) \
                if ord(c) < 128 else c
            value = esc + value[1:]
        if g.chance(0.02):
            value = g.choice(["\\d", "\\\\", "\\'", "\\\"", "a\\\nb", "\\t", "a\\", "\\x4",
                              "\\777", "\\U0001F600"]) + value
        return q + value + q

    def variable(self, var):
        if var in self.SPELLINGS and self.chance(0.3):
            return self.choice(self.SPELLINGS[var])
        return var

    def marker_item(self):
        g = self
        var = g.choice(list(self.VARS))
        op = g.choice(["==", "!=", "<", "<=", ">", ">=", "~=", "===", "in", "not in",
                       "==", ">=", "<"])
        if op == "not in" and g.chance(0.2):
            op = g.choice(["not  in", "not\tin"])
        sp = lambda: g.choice(["", " ", " ", "  ", "\t"])  # noqa: E731
        form = g.r.random()
        if form < 0.75:
            lhs, rhs = g.variable(var), g.literal(var)
        elif form < 0.92:
            lhs, rhs = g.literal(var), g.variable(var)
        elif form < 0.97:
            lhs, rhs = g.variable(var), g.variable(g.choice(list(self.VARS)))
        else:
            lhs, rhs = g.literal(None), g.literal(None)
        if op[0].isalpha():  # word operators need spaces around them (mostly)
            return lhs + g.choice([" ", " ", ""]) + op + g.choice([" ", " ", ""]) + rhs
        return lhs + sp() + op + sp() + rhs

    def marker(self, depth=0, valid=True):
        g = self
        n = g.r.randint(1, 3 if depth < 3 else 1)
        parts = []
        for i in range(n):
            if i:
                parts.append(g.choice([" and ", " or ", " and ", "and ", " or", "and"]))
            if depth < 3 and g.chance(0.25):
                inner = self.marker(depth + 1)
                wrap = "(" + inner + ")"
                if g.chance(0.15):
                    wrap = "(" + wrap + ")"
                parts.append(g.choice(["", " "]) + wrap + g.choice(["", " "]))
            else:
                parts.append(self.marker_item())
        text = "".join(parts)
        if depth == 0:
            text = g.choice(["", "", " ", "\t"]) + text + g.choice(["", "", " ", "\n"])
            if not valid:
                text = self.mutate(text)
                if g.chance(0.2):
                    text += g.choice([" garbage", " )", " and", "(", " extra"])
        return text

    def environment(self):
        g = self
        py = g.choice(["3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "2.7", "3.14"])
        full = py + "." + g.choice(["0", "1", "4", "10", "0rc1", "0b2", "0+"])
        env = {
            "implementation_name": g.choice(["cpython", "pypy"]),
            "implementation_version": full,
            "os_name": g.choice(["posix", "nt"]),
            "platform_machine": g.choice(["x86_64", "aarch64", "AMD64", "arm64"]),
            "platform_python_implementation": g.choice(["CPython", "PyPy"]),
            "platform_release": g.choice(["5.15.0-91-generic", "6.1.0", "", "23.0.0", "6.8"]),
            "platform_system": g.choice(["Linux", "Windows", "Darwin"]),
            "platform_version": g.choice(["#1 SMP PREEMPT_DYNAMIC", "10.0.19041", "", "1.0"]),
            "python_full_version": full,
            "python_version": py,
            "sys_platform": g.choice(["linux", "win32", "darwin"]),
        }
        if g.chance(0.1):
            env["python_version"] = g.choice(["abc", "", "3.x"])
        return env, g.choice(["", "", "gpu", "GPU_Extra", "test", "foo-bar", "Foo.Bar", "1.0"])

    # Requirements ---------------------------------------------------------------------------
    def requirement(self, valid=True):
        g = self
        name = g.choice(["torch", "nvidia-cudnn-cu12", "zope.interface", "A_b", "name_", "pkg",
                         "a", "Foo.Bar-baz", "-bad", "1abc", "x.", "torch-"])
        s = g.choice(["", " "]) + name + g.choice(["", " "])
        if g.chance(0.3):
            extras = [g.choice(["gpu", "cuda", "Test_X", "a.b", "dev", "gpu"])
                      for _ in range(g.r.randint(0, 3))]
            s += "[" + g.choice(["", " "]) + g.choice([",", ", ", " ,"]).join(extras) + \
                g.choice(["", " "]) + "]" + g.choice(["", " "])
        if g.chance(0.15):
            s += "@" + g.choice(["", " "]) + g.choice([
                "https://download.pytorch.org/whl/cu124/torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl",
                "file:///tmp/x.whl", "file:/tmp/x.whl", "FILE:///x", "file:///x?", "file://host/x",
                "git+https://github.com/pytorch/vision@v0.20.0", "http:///x", "C:\\x\\y.whl",
                "https://[::1]/x", "https://[bad]/x", "https://[::1/x", "ssh://git@host:22/x",
                "https://x/a;b"])
            if g.chance(0.5):
                s += g.choice([" ", "  ", ""]) + ";" + g.choice(["", " "]) + self.marker()
        else:
            spec = ",".join(self.spec_clause(True) for _ in range(g.r.randint(0, 2)))
            if g.chance(0.3):
                spec = "(" + spec + ")"
            s += spec
            if g.chance(0.4):
                s += g.choice(["", " "]) + ";" + g.choice(["", " "]) + self.marker()
        if g.chance(0.05):
            s += "\n"
        if not valid:
            s = self.mutate(s)
        return s


# ------------------------------------------------------------------------------------------
# packaging's answers

def version_numbers(v):
    nums = [v.epoch, *v.release]
    for part in (v.pre, ):
        if part:
            nums.append(part[1])
    for part in (v.post, v.dev):
        if part is not None:
            nums.append(part)
    for seg in (v.local or "").split("."):
        if seg.isdigit():
            nums.append(int(seg))
    return nums


def expect_version(s, stats):
    try:
        v = Version(s)
    except (InvalidVersion, ValueError):  # ValueError: over Python's 4300-digit int limit
        return {"ok": False}
    if max(version_numbers(v)) > U64_MAX:
        stats["big numbers (expected error)"] += 1
        return {"ok": False}
    return {"ok": True, "n": str(v), "pre": v.is_prerelease, "post": v.is_postrelease,
            "dev": v.is_devrelease, "pub": v.public, "base": v.base_version,
            "loc": v.local or "", "rt": True}


def expect_spec(s, versions, stats):
    try:
        ss = SpecifierSet(s)
    except InvalidSpecifier:
        return {"ok": False}
    out = {"ok": True, "n": str(ss)}
    default = bool(ss.prereleases)
    out["np"] = default
    flags = []
    for v in versions:
        f = ""
        for p in (default, True, False):
            f += "t" if ss.contains(v, prereleases=p) else "f"
        flags.append(f)
    out["r"] = flags
    return out


def values_of(markers):
    for m in markers:
        if isinstance(m, list):
            yield from values_of(m)
        elif isinstance(m, tuple):
            for x in m:
                if isinstance(x, Value):
                    yield x.value


# Characters after a backslash that make it an escape (core/src/marker_print.cpp starts_escape).
ESCAPE_STARTS = "\0\n\r\\'\"abfnrtvxuUN01234567"


def printed_differently(value):
    """True when packaging's str() writes this marker value so that it does not read back, and
    gpulock (core/src/marker_print.cpp append_operand) writes escapes instead."""
    if any(c in value for c in "\n\r\x00"):
        return True
    return any(c == "\\" and (i + 1 == len(value) or value[i + 1] in ESCAPE_STARTS)
               for i, c in enumerate(value))


def expect_marker(s, env, extra, stats):
    try:
        m = Marker(s)
    except Exception:  # InvalidMarker, and SyntaxError/ValueError from ast.literal_eval
        return {"ok": False}
    out = {"ok": True}
    vals = list(values_of(m._markers))
    try:
        out["n"] = str(m)
    except ValueError:
        stats["marker: a value holds both quotes (packaging cannot print it)"] += 1
    if "n" in out and any(printed_differently(v) for v in vals):
        del out["n"]
        stats["marker: a value packaging prints so that it does not read back"] += 1
    full_env = dict(env)
    full_env["extra"] = extra
    try:
        out["r"] = "t" if m.evaluate(full_env) else "f"
    except Exception:  # UndefinedComparison, UndefinedEnvironmentName
        out["r"] = "e"
    out["rt"] = True
    return out


def url_unusable(url):
    """gpulock's URL check (packaging 23.0's, which 26.3 dropped): a file: URL must survive
    urlunparse(urlparse()) unchanged, any other needs a scheme and a network location, and
    brackets in the netloc must hold an IP literal (urlparse raises otherwise)."""
    import urllib.parse
    try:
        parsed = urllib.parse.urlparse(url)
    except ValueError:
        return True
    if parsed.scheme == "file":
        return urllib.parse.urlunparse(parsed) != url
    return not (parsed.scheme and parsed.netloc)


def expect_requirement(s, stats):
    try:
        r = Requirement(s)
    except Exception:
        return {"ok": False}
    if r.url and url_unusable(r.url):
        stats["requirement: a URL gpulock rejects (packaging 26.3 checks none)"] += 1
        return {"ok": False}
    if r.marker is not None and any(printed_differently(v)
                                    for v in values_of(r.marker._markers)):
        stats["requirement: a marker value packaging prints so that it does not read back"] += 1
        return {"ok": True}
    try:
        return {"ok": True, "n": str(r)}
    except ValueError:
        stats["requirement: a marker value holds both quotes"] += 1
        return {"ok": True}


# ------------------------------------------------------------------------------------------

def compare(question, expected, got, stats):
    """Returns a list of disagreements (strings)."""
    problems = []
    if "badcol" in got:
        problems.append("error column out of range: " + got["badcol"])
    for key, want in expected.items():
        have = got.get(key)
        if key == "np" and want is None:
            continue
        if key == "r" and isinstance(want, list):
            if not isinstance(have, list) or len(have) != len(want):
                problems.append(f"r: expected {want}, got {have}")
                continue
            for i, (w, h) in enumerate(zip(want, have)):
                for j in range(3):
                    if w[j] == "?":
                        continue
                    stats["contains checks"] += 1
                    if w[j] != h[j]:
                        policy = ["None", "True", "False"][j]
                        problems.append(f"contains({question['v'][i]!r}, prereleases={policy}): "
                                        f"packaging {w[j]}, gpulock {h[j]}")
            continue
        if have != want:
            problems.append(f"{key}: packaging {want!r}, gpulock {have!r}")
    return problems


def generate(seed, scale, stats):
    """The seeded questions and packaging's answers to them."""
    need_packaging()
    g = Gen(build_rng(seed))
    questions, expected = [], []

    def ask(q, e):
        questions.append(q)
        expected.append(e)

    n_versions = int(30000 * scale)
    pool = []
    for _ in range(n_versions):
        s = g.version(valid=g.chance(0.75))
        e = expect_version(s, stats)
        ask({"k": "v", "s": s}, e)
        if e["ok"]:
            pool.append(s)
    # Pairs: mostly related versions so that ties and near-ties are common.
    for _ in range(int(30000 * scale)):
        a = g.choice(pool)
        if g.chance(0.5):
            b = g.choice(pool)
        else:
            va = Version(a)
            b = g.choice([va.public, va.base_version, str(va) + ".0", va.base_version + "+cpu",
                          va.base_version + ".post1", va.base_version + "a1", va.public + ".0",
                          str(va).replace("+", ".0+") if "+" in str(va) else str(va) + "+0",
                          g.choice(pool)])
        try:
            va, vb = Version(a), Version(b)
        except InvalidVersion:
            continue
        if max(version_numbers(va) + version_numbers(vb)) > U64_MAX:
            continue
        c = -1 if va < vb else (0 if va == vb else 1)
        ask({"k": "c", "a": a, "b": b}, {"c": str(c), "hash": True, "cons": True})
    # Specifier sets against candidate versions.
    small_pool = [p for p in pool if max(version_numbers(Version(p))) <= U64_MAX]
    for _ in range(int(4000 * scale)):
        s = g.spec_set(valid=g.chance(0.8))
        vs = [g.choice(small_pool) for _ in range(8)]
        # Candidates near the specifier's own versions make the edges likely.
        for clause in s.split(","):
            body = clause.strip().lstrip("=!<>~").strip().rstrip("*").rstrip(".")
            try:
                base = Version(body)
            except InvalidVersion:
                continue
            if max(version_numbers(base)) > U64_MAX:
                continue
            vs += [str(base), base.base_version + "+cu124", base.base_version + ".post1",
                   base.base_version + "rc1", base.base_version + ".dev0", base.base_version + ".1",
                   "1!" + base.base_version]
        ask({"k": "s", "s": s, "v": vs}, expect_spec(s, vs, stats))
    # Markers with environments.
    for _ in range(int(15000 * scale)):
        s = g.marker(valid=g.chance(0.85))
        env, extra = g.environment()
        ask({"k": "m", "s": s, "env": env, "x": extra}, expect_marker(s, env, extra, stats))
    # Requirements.
    for _ in range(int(5000 * scale)):
        s = g.requirement(valid=g.chance(0.85))
        ask({"k": "r", "s": s}, expect_requirement(s, stats))

    return questions, expected


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    oracle = args[0]

    def option(name, default, kind=str):
        return kind(args[args.index(name) + 1]) if name in args else default
    seed = option("--seed", 440508, int)
    scale = option("--scale", 1.0, float)
    started = time.time()
    from collections import Counter
    stats = Counter()
    golden = option("--golden", None)
    if golden:
        header, rows = recorded.read(golden)
        questions = [q for q, _ in rows]
        expected = [e for _, e in rows]
        stats.update(header["stats"])
        seed, reference = header["seed"], f"{header['packaging']} (recorded in {Path(golden).name})"
    else:
        questions, expected = generate(seed, scale, stats)
        reference = packaging.__version__
    record = option("--record", None)
    if record:
        recorded.write(record, {"what": "differential.py's questions and pypa/packaging's answers",
                                "packaging": packaging.__version__, "seed": seed, "scale": scale,
                                "stats": dict(stats)}, zip(questions, expected))
        print(f"recorded {len(questions)} questions in {record}")
    stale = False
    check = option("--check-golden", None)
    if check:  # the live run also proves the recording is packaging's answer to today's questions
        header, rows = recorded.read(check)
        # The recording is made at a smaller scale than the live run (it is kept under 1 MiB):
        # its questions are generated again at its own seed and scale for the comparison.
        rq, re_ = questions, expected
        if (header.get("seed"), header.get("scale")) != (seed, scale):
            rq, re_ = generate(header["seed"], header["scale"], Counter())
        fresh = [json.loads(json.dumps([q, e], sort_keys=True)) for q, e in zip(rq, re_)]
        stale = rows != fresh
        if stale:
            print(f"FAILED: {check} is not what packaging {reference} answers to today's questions "
                  "(re-record it with scripts/record-golden)")

    generated = time.time()
    payload = "".join(json.dumps(q) + "\n" for q in questions).encode("utf-8", "surrogatepass")
    proc = subprocess.run([oracle], input=payload, capture_output=True)
    if proc.returncode != 0:
        print(f"oracle failed with exit code {proc.returncode}: {proc.stderr.decode()[-2000:]}")
        return 1
    answered = time.time()
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    if len(lines) != len(questions):
        print(f"oracle answered {len(lines)} of {len(questions)} questions")
        return 1

    failures = 0
    kinds = Counter()
    for q, e, line in zip(questions, expected, lines):
        got = json.loads(line)
        kinds[q["k"]] += 1
        if e.get("ok"):
            kinds[q["k"] + " ok"] += 1
        if q["k"] == "m" and e.get("ok"):
            kinds["m " + e["r"]] += 1
        problems = compare(q, e, got, stats)
        if problems:
            failures += 1
            if failures <= 15:
                print(f"DISAGREEMENT on {json.dumps(q)}")
                for p in problems:
                    print("    " + p)
    total = len(questions) + stats["contains checks"]
    elapsed = time.time() - started
    names = {"v": "versions", "c": "comparisons", "s": "specifier sets", "m": "markers",
             "r": "requirements"}
    print(f"differential vs packaging {reference} (seed {seed}): {total} cases compared "
          f"in {elapsed:.1f}s: " + ", ".join(f"{kinds[k]} {names[k]}" for k in names) +
          f", {stats['contains checks']} contains checks")
    print(f"  valid inputs: {kinds['v ok']} versions, {kinds['s ok']} specifier sets, "
          f"{kinds['m ok']} markers (true {kinds['m t']}, false {kinds['m f']}, "
          f"error {kinds['m e']}), {kinds['r ok']} requirements")
    for k, v in sorted(stats.items()):
        if k != "contains checks":
            print(f"  known difference applied: {k}: {v}")
    if failures:
        print(f"FAILED: {failures} of {len(questions)} questions disagree")
        return 1
    if stale:
        return 1
    print(f"0 disagreements (packaging {generated - started:.1f}s, oracle {answered - generated:.1f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
