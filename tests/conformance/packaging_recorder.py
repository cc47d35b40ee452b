"""The recorder of packaging_tests.py: a pytest plugin that wraps pypa/packaging's public entry
points and records, per test, every input the test hands them as a question for core_oracle
(tests/core/differential/oracle.cpp's JSON protocol):

  Version(text), version comparisons                      {"k":"v"}, {"k":"c"}
  Specifier(text), SpecifierSet(text), their contains()   {"k":"s"}
  Marker(text), Marker.evaluate()                         {"k":"m"}
  Requirement(text)                                       {"k":"r"}
  utils.parse_wheel_filename(name)                        {"k":"w"}
  utils.parse_sdist_filename(name)                        {"k":"sd"}
  utils.canonicalize_name(name, validate=...)             {"k":"n"}
  utils.canonicalize_version(version, strip_trailing_zero=...)  {"k":"cv"}
  tags.parse_tag(text)                                    {"k":"t"}
  tags.Tag(interpreter, abi, platform)                    {"k":"tag"}

The utils and tags entry points are recorded only when a test calls them (not packaging's own
calls, e.g. sys_tags() building thousands of Tags); calls with options gpulock has no
counterpart for (validate_order, limit) are not recorded.
"""
import collections
import sys

# The marker variables gpulock's Environment has; an evaluate() with other keys (a test's
# made-up variables) has no counterpart.
KNOWN_ENV = {"implementation_name", "implementation_version", "os_name", "platform_machine",
             "platform_python_implementation", "platform_release", "platform_system",
             "platform_version", "python_full_version", "python_version", "sys_platform",
             "extra"}


def called_by_test(depth=2):
    """True when the frame `depth` levels up belongs to a test module (tests.test_*)."""
    return sys._getframe(depth).f_globals.get("__name__", "").startswith("tests.")


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
        from packaging import markers, requirements, specifiers, tags, utils, version
        self.wrap_constructors(markers, requirements, specifiers, version)
        self.wrap_comparisons(version)
        self.wrap_contains(specifiers, version)
        self.wrap_evaluate(markers)
        self.wrap_utils(utils, version)
        self.wrap_tags(tags)

    def wrap_constructors(self, markers, requirements, specifiers, version):
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

    def wrap_comparisons(self, version):
        rec = self
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

    def wrap_contains(self, specifiers, version):
        rec = self
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

    def wrap_evaluate(self, markers):
        rec = self
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

    def wrap_function(self, module, name, question):
        """Replaces module.name by a wrapper that records question(*args, **kwargs) (a question,
        or None for a call without a counterpart) when a test makes the call."""
        rec = self
        orig = getattr(module, name)

        def wrapper(*args, **kwargs):
            if not rec.busy and called_by_test():
                q = question(*args, **kwargs)
                if q is not None:
                    rec.add(q)
            return orig(*args, **kwargs)
        wrapper.__wrapped__ = orig
        setattr(module, name, wrapper)

    def wrap_utils(self, utils, version):
        def text(x):
            return x if isinstance(x, str) else (str(x) if isinstance(x, version.Version) else None)

        def wheel(filename, *, validate_order=False):
            return None if validate_order or text(filename) is None else \
                {"k": "w", "s": filename}

        def sdist(filename):
            return {"k": "sd", "s": filename} if isinstance(filename, str) else None

        def name(n, *, validate=False):
            return {"k": "n", "s": n, "val": bool(validate)} if isinstance(n, str) else None

        def canonical(v, *, strip_trailing_zero=True):
            return None if text(v) is None else \
                {"k": "cv", "s": text(v), "strip": bool(strip_trailing_zero)}
        self.wrap_function(utils, "parse_wheel_filename", wheel)
        self.wrap_function(utils, "parse_sdist_filename", sdist)
        self.wrap_function(utils, "canonicalize_name", name)
        self.wrap_function(utils, "canonicalize_version", canonical)

    def wrap_tags(self, tags):
        rec = self

        def parse(tag, *, validate_order=False, limit=None):
            if validate_order or limit is not None or not isinstance(tag, str):
                return None
            return {"k": "t", "s": tag}
        self.wrap_function(tags, "parse_tag", parse)
        orig_init = tags.Tag.__init__

        def init(self, interpreter, abi, platform, *args, **kwargs):
            parts = (interpreter, abi, platform)
            if not rec.busy and not args and not kwargs and called_by_test() and \
                    all(isinstance(p, str) for p in parts):
                rec.add({"k": "tag", "i": interpreter, "a": abi, "p": platform})
            orig_init(self, interpreter, abi, platform, *args, **kwargs)
        tags.Tag.__init__ = init

    # pytest hooks
    def pytest_runtest_setup(self, item):
        self.current = item.nodeid

    def pytest_runtest_teardown(self, item):
        self.current = None

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.outcome[report.nodeid] = report.outcome
