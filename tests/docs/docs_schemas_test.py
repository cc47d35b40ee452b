#!/usr/bin/env python3
"""Every JSON Schema in docs/schemas/ validates real gpulock output (issue 42 item 4).

    docs_schemas_test.py --gpulock EXE --env servers.env --work DIR [--root REPO]
    docs_schemas_test.py --self-test

For each docs/schemas/NAME.schema.json, the real binary produces that output (against the
fixture index on the loopback servers, ctest fixture `servers`; the machine is described with
--driver and --gpu-arch) and every document is validated with python3-jsonschema (Debian's
package; this script re-runs itself with /usr/bin/python3 when the python3 it was started with
lacks it). A schema file this script has no producer for fails: a schema is validated, never
skipped. The recorded JSON outputs of the other tests (tests/*/golden/*.json) whose "schema" key
names a schema's constant are validated too. Outputs are kept in DIR/outputs/. Exit 0 when every
output validates, else 1 naming the schema, the command and each error's JSON path.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

try:
    import jsonschema
except ImportError:  # Debian's python3-jsonschema is installed for /usr/bin/python3
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3") \
            and not os.environ.get("GPULOCK_DOCS_SCHEMAS_REEXEC"):
        os.environ["GPULOCK_DOCS_SCHEMAS_REEXEC"] = "1"
        os.execv("/usr/bin/python3", ["/usr/bin/python3", *sys.argv])
    print("error: python3-jsonschema is not installed (scripts/install-deps installs it)")
    sys.exit(1)

HERE = Path(__file__).resolve().parent
DEFAULT_ROOT = HERE.parent.parent

Doc = tuple[str, object]  # (the command that printed it, the parsed JSON)


def read_env(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#") and "=" in line:
            k, v = line.split("=", 1)
            out[k] = v
    return out


class Failure(Exception):
    pass


class World:
    """The binary, a hermetic environment and the files several producers share (made once)."""

    def __init__(self, gpulock: str, servers: dict[str, str], work: Path):
        self.gpulock = str(Path(gpulock).absolute())
        self.pypi = servers["PYPI_URL"]
        self.torch = servers["TORCH_INDEX_BASE"]
        self.work = work
        self.python = sys.executable
        home = work / "home"
        home.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GPULOCK_", "UV_", "PIP_")) and k != "VIRTUAL_ENV"}
        env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                   XDG_CACHE_HOME=str(home / ".cache"), GPULOCK_CACHE_DIR=str(work / "cache"),
                   PIP_CONFIG_FILE=os.devnull, NO_COLOR="1")
        self.env = env
        self.outputs = work / "outputs"
        self.outputs.mkdir(parents=True, exist_ok=True)
        self._made: dict[str, object] = {}
        self._n = 0

    def run(self, *args: str, ok: tuple[int, ...] = (0,), cwd: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        p = subprocess.run([self.gpulock, *args], capture_output=True, text=True, timeout=300,
                           cwd=cwd or self.work, env={**self.env, **(env or {})})
        if p.returncode not in ok:
            raise Failure(f"`gpulock {' '.join(args)}` exited {p.returncode} (expected "
                          f"{' or '.join(map(str, ok))}):\n{p.stderr.strip()[-2000:]}")
        return p

    def json_of(self, text: str, what: str) -> object:
        self._n += 1
        (self.outputs / f"{self._n:02d}.json").write_text(text)
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise Failure(f"{what}: not JSON ({e}); kept in {self.outputs}/{self._n:02d}.json")

    def stdout_doc(self, *args: str, ok: tuple[int, ...] = (0,), cwd: Path | None = None,
                   env: dict[str, str] | None = None) -> Doc:
        what = "gpulock " + " ".join(args)
        return what, self.json_of(self.run(*args, ok=ok, cwd=cwd, env=env).stdout, what)

    def once(self, key: str, make: Callable[[], object]) -> object:
        if key not in self._made:
            self._made[key] = make()
        return self._made[key]

    def has_flag(self, words: list[str], flag: str) -> bool:
        return flag in self.run(*words, "--help").stdout.split()

    # ----- shared files -----
    def machine(self) -> list[str]:
        return ["--driver", "550.54.14", "--gpu-arch", "sm_90"]

    def project(self) -> Path:
        """A CUDA lock (torch 2.5.1, cu124) and its --report."""
        def make() -> Path:
            d = self.work / "project"
            d.mkdir(exist_ok=True)
            self.run("resolve", "torch==2.5.1", "torchvision", "torchaudio", "--torch-backend",
                     "auto", "--index-url", self.pypi, "--torch-index-base", self.torch,
                     "--python", self.python, *self.machine(), "-o", str(d / "pylock.toml"),
                     "--report", str(d / "report.json"), "-q")
            return d
        return self.once("project", make)

    def small_lock(self) -> Path:
        """A CPU lock of two small packages (jinja2, markupsafe)."""
        def make() -> Path:
            d = self.work / "small"
            d.mkdir(exist_ok=True)
            self.run("resolve", "jinja2", "--index-url", self.pypi, "--python", self.python,
                     "--driver", "none", "-o", str(d / "pylock.toml"), "-q")
            return d / "pylock.toml"
        return self.once("small", make)

    def venv(self) -> Path:
        """A venv with the CUDA lock installed (its install --json kept)."""
        def make() -> Path:
            v = self.work / "venv"
            subprocess.run([self.python, "-m", "venv", "--without-pip", str(v)], check=True)
            what, doc = self.stdout_doc("install", "--lock", str(self.project() / "pylock.toml"),
                                        "--python", str(v / "bin" / "python"), "--json",
                                        *self.machine(), ok=(0, 1))
            self._made["install-json"] = (what, doc)
            return v
        return self.once("venv", make)

    def targets(self) -> Path:
        """Two declared targets (a CPU one and a CUDA one), locked with --all-targets."""
        def make() -> Path:
            d = self.work / "targets"
            d.mkdir(exist_ok=True)
            (d / "gpulock.toml").write_text(
                f'index-url = "{self.pypi}"\ntorch-index-base = "{self.torch}"\n\n'
                '[targets.cpu]\npython-version = "3.11"\nplatform = "manylinux_2_28_x86_64"\n'
                'driver = "none"\n\n'
                '[targets.cu124]\npython-version = "3.11"\nplatform = "manylinux_2_28_x86_64"\n'
                'driver = "550.54.14"\ngpu-arch = ["sm_90"]\ntorch-backend = "auto"\n')
            self.run("resolve", "jinja2", "--all-targets", "-q", cwd=d)
            return d
        return self.once("targets", make)

    def mirror(self) -> Path:
        def make() -> Path:
            m = self.work / "mirror"
            self._made["mirror-add"] = self.stdout_doc(
                "mirror", "add", str(self.small_lock()), "--to", str(m), "--json")
            return m
        return self.once("mirror", make)

    def wheel_urls(self) -> list[str]:
        def make() -> list[str]:
            show = json.loads(self.run("index", "show", "jinja2", "--index-url", self.pypi,
                                       "--json").stdout)
            return [f["url"] for f in show["files"] if f["kind"] == "wheel"][:2]
        return self.once("wheels", make)


# ----- producers: one per schema file, each returning the documents it printed -----

def p_resolve(w: World) -> list[Doc]:
    d = w.project()
    docs = [("gpulock resolve torch==2.5.1 ... --report FILE",
             w.json_of((d / "report.json").read_text(), "resolve --report"))]
    nosol = w.work / "nosolution.json"
    w.run("resolve", "torch==2.13.0", "--torch-backend", "auto", "--index-url", w.pypi,
          "--torch-index-base", w.torch, "--python", w.python, "--driver", "550.54.14",
          "--gpu-arch", "sm_61", "-o", str(w.work / "nosolution.toml"), "--report", str(nosol),
          "-q", ok=(1,))
    docs.append(("gpulock resolve torch==2.13.0 (no solution) --report FILE",
                 w.json_of(nosol.read_text(), "resolve --report (no solution)")))
    if w.has_flag(["resolve"], "--json"):
        docs.append(w.stdout_doc("resolve", "jinja2", "--index-url", w.pypi, "--python",
                                 w.python, "--driver", "none", "--json", "-o",
                                 str(w.work / "json.toml")))
    return docs


def p_resolve_targets(w: World) -> list[Doc]:
    return [w.stdout_doc("resolve", "jinja2", "--all-targets", "--json", cwd=w.targets())]


def p_probe(w: World) -> list[Doc]:
    v = w.venv()
    site = next((v / "lib").glob("python3*/site-packages"))
    return [w._made["install-json"],
            w.stdout_doc("probe", "--json", "--python", str(v / "bin" / "python"), "--lock",
                         str(w.project() / "pylock.toml"), *w.machine(), ok=(0, 1)),
            w.stdout_doc("probe", "--json", "--site-packages", str(site), "--driver", "none",
                         ok=(0, 1))]


def p_probe_machine(w: World) -> list[Doc]:
    return [w.stdout_doc("probe", "--machine", "--json"),
            w.stdout_doc("probe", "--machine", "--json", *w.machine()),
            w.stdout_doc("probe", "--machine", "--json", "--driver", "none"),
            w.stdout_doc("probe", "--machine", "--json", "--cuda-ceiling", "12.6",
                         "--gpu-arch", "8.6,sm_90")]


def p_install_plan(w: World) -> list[Doc]:
    v = w.venv()
    fresh = w.work / "venv-fresh"
    subprocess.run([w.python, "-m", "venv", "--without-pip", str(fresh)], check=True)
    py = str(v / "bin" / "python")
    return [w.stdout_doc("install", "--dry-run", "--json", "--lock",
                         str(w.project() / "pylock.toml"), "--python", py, *w.machine()),
            w.stdout_doc("install", "--dry-run", "--json", "--lock", str(w.small_lock()),
                         "--python", py),
            w.stdout_doc("install", "--no-probe", "--json", "--lock", str(w.small_lock()),
                         "--python", str(fresh / "bin" / "python"))]


def p_install_print_target(w: World) -> list[Doc]:
    py = str(w.venv() / "bin" / "python")
    lock = str(w.project() / "pylock.toml")
    return [w.stdout_doc("install", "--print-target", "--json", "--lock", lock, "--python", py,
                         *w.machine()),
            w.stdout_doc("install", "--print-target", "--json", "--lock", lock, "--python", py,
                         "--driver", "535.104.05", ok=(1,))]


def p_check(w: World) -> list[Doc]:
    lock = str(w.project() / "pylock.toml")
    return [w.stdout_doc("check", "--json", "--lock", lock, "--driver", "535.104.05", ok=(1,)),
            w.stdout_doc("check", "--json", "--lock", lock, "--env", "--python",
                         str(w.venv() / "bin" / "python"), ok=(0, 1)),
            w.stdout_doc("check", "--format", "json", "--lock", lock, "--index", ok=(0, 1)),
            w.stdout_doc("check", "--all-targets", "--json", ok=(0, 1), cwd=w.targets())]


def p_diff(w: World) -> list[Doc]:
    big, small = str(w.project() / "pylock.toml"), str(w.small_lock())
    return [w.stdout_doc("diff", "--json", big, small, ok=(1,)),
            w.stdout_doc("diff", "--json", small, small)]


def p_config(w: World) -> list[Doc]:
    d = w.work / "config"
    d.mkdir(exist_ok=True)
    (d / "pyproject.toml").write_text(
        '[project]\nname = "demo"\ndependencies = ["torch"]\n\n'
        f'[tool.gpulock]\nindex-url = "{w.pypi}"\nextra-index-url = ["{w.torch}/cpu"]\n')
    return [w.stdout_doc("config", "--json", cwd=d,
                         env={"GPULOCK_TORCH_BACKEND": "cu126", "UV_TORCH_BACKEND": "cu128"}),
            w.stdout_doc("config", "--json", "--index-url", w.pypi, cwd=w.work)]


def p_index_show(w: World) -> list[Doc]:
    return [w.stdout_doc("index", "show", "torch", "--index-url", f"{w.torch}/cu124", "--json"),
            w.stdout_doc("index", "show", "jinja2", "--index-url", w.pypi, "--json")]


def p_index_metadata(w: World) -> list[Doc]:
    urls = w.wheel_urls()
    return [w.stdout_doc("index", "metadata", urls[0], "--json"),
            w.stdout_doc("index", "metadata", *urls, "--json")]


def p_export(w: World) -> list[Doc]:
    return [w.stdout_doc("export", "--lock", str(w.small_lock()), "--json"),
            w.stdout_doc("export", "--lock", str(w.small_lock()), "--json", "-o",
                         str(w.work / "requirements.txt"))]


def p_cache_dir(w: World) -> list[Doc]:
    return [w.stdout_doc("cache", "--cache-dir", str(w.work / "cache"), "dir", "--json")]


def p_cache_prune(w: World) -> list[Doc]:
    w.venv()  # something in the cache
    return [w.stdout_doc("cache", "--cache-dir", str(w.work / "cache"), "prune", "--json")]


def p_mirror_add(w: World) -> list[Doc]:
    w.mirror()
    return [w._made["mirror-add"]]


def p_mirror_verify(w: World) -> list[Doc]:
    return [w.stdout_doc("mirror", "verify", str(w.mirror()), "--json")]


def p_mirror_gc(w: World) -> list[Doc]:
    return [w.stdout_doc("mirror", "gc", str(w.mirror()), "--keep", str(w.small_lock()),
                         "--json")]


def p_fleet_check(w: World) -> list[Doc]:
    """Locks of the fit matrix (tests/gpu) against every inventory sample (fixtures/inventory)."""
    sys.path.insert(0, str(HERE.parent / "gpu"))
    from fit_matrix_test import lock_text  # noqa: E402
    d = w.work / "fleet"
    d.mkdir(exist_ok=True)
    for name in ("cu124", "cu130-arm"):
        (d / f"pylock.{name}.toml").write_text(lock_text(name))
    samples = HERE.parent.parent / "fixtures" / "inventory"
    return [w.stdout_doc("fleet", "check", "--inventory", str(samples), "--json", ok=(0, 1),
                         cwd=d)]


PRODUCERS: dict[str, Callable[[World], list[Doc]]] = {
    "resolve.schema.json": p_resolve,
    "resolve-targets.schema.json": p_resolve_targets,
    "probe.schema.json": p_probe,
    "probe-machine.schema.json": p_probe_machine,
    "install-plan.schema.json": p_install_plan,
    "install-print-target.schema.json": p_install_print_target,
    "check.schema.json": p_check,
    "diff.schema.json": p_diff,
    "config.schema.json": p_config,
    "index-show.schema.json": p_index_show,
    "index-metadata.schema.json": p_index_metadata,
    "export.schema.json": p_export,
    "cache-dir.schema.json": p_cache_dir,
    "cache-prune.schema.json": p_cache_prune,
    "mirror-add.schema.json": p_mirror_add,
    "mirror-verify.schema.json": p_mirror_verify,
    "mirror-gc.schema.json": p_mirror_gc,
    "fleet-check.schema.json": p_fleet_check,
}


# ----- validation -----

def load_schema(path: Path) -> jsonschema.protocols.Validator:
    schema = json.loads(path.read_text())
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema)


def errors_of(validator, doc: object) -> list[str]:
    out = []
    for e in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in e.absolute_path) or "(top)"
        out.append(f"at {where}: {e.message[:300]}")
    return out


def schema_constants(schema: dict) -> set:
    """The values a document's "schema" key has under this schema (its identity)."""
    found = set()
    for obj in [schema, *schema.get("$defs", {}).values()]:
        const = obj.get("properties", {}).get("schema", {}).get("const")
        if const is not None:
            found.add(json.dumps(const))
    return found


def golden_documents(root: Path, constants: set) -> list[tuple[Path, object]]:
    out = []
    for path in sorted(root.glob("tests/*/golden/*.json")):
        try:
            doc = json.loads(path.read_text())
        except json.JSONDecodeError:
            continue
        first = doc[0] if isinstance(doc, list) and doc else doc
        if isinstance(first, dict) and json.dumps(first.get("schema")) in constants:
            out.append((path, doc))
    return out


def check_all(schemas_dir: Path, root: Path, world: World | None) -> tuple[list[str], int]:
    problems: list[str] = []
    validated = 0
    files = sorted(schemas_dir.glob("*.schema.json"))
    if not files:
        problems.append(f"{schemas_dir}: no *.schema.json")
    for path in files:
        name = path.name
        try:
            validator = load_schema(path)
        except (json.JSONDecodeError, jsonschema.SchemaError) as e:
            problems.append(f"{name}: not a valid JSON Schema: {str(e).splitlines()[0]}")
            continue
        producer = PRODUCERS.get(name)
        if producer is None:
            problems.append(f"{name}: no producer in tests/docs/docs_schemas_test.py: add one "
                            "that runs the command whose output it describes")
            continue
        if world is not None:
            try:
                docs = producer(world)
            except Failure as e:
                problems.append(f"{name}: {e}")
                docs = []
            for what, doc in docs:
                validated += 1
                for err in errors_of(validator, doc):
                    problems.append(f"{name}: `{what}` {err}")
        for golden, doc in golden_documents(root, schema_constants(validator.schema)):
            validated += 1
            for err in errors_of(validator, doc):
                problems.append(f"{name}: {golden.relative_to(root)} {err}")
    return problems, validated


# ----- self-test -----

def self_test() -> int:
    failures: list[str] = []
    machine_schema = DEFAULT_ROOT / "docs" / "schemas" / "probe-machine.schema.json"
    v = load_schema(machine_schema)
    good = {"schema": "gpulock.machine/1", "status": "override", "verdict": "v", "hints": [],
            "driver": {"version": "550.54.14", "method": "override", "source": "--driver",
                       "raw": "550.54.14"},
            "cuda_ceiling": None, "kernel_module": None, "gpus": [], "gpu_archs": None,
            "wsl": False, "warnings": [],
            "steps": [{"name": "overrides", "outcome": "ok", "detail": "d"}]}
    if errors_of(v, good):
        failures.append(f"a valid document was refused: {errors_of(v, good)}")
    bad_cases = {
        "an undocumented key": {**good, "extra": 1},
        "a missing key": {k: x for k, x in good.items() if k != "wsl"},
        "a value outside the enumeration": {**good, "status": "sleeping"},
        "a null where none is allowed": {**good, "verdict": None},
        "another schema version": {**good, "schema": "gpulock.machine/2"},
    }
    for what, doc in bad_cases.items():
        if not errors_of(v, doc):
            failures.append(f"{what} was accepted")
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        shutil.copy(machine_schema, d / "probe-machine.schema.json")
        (d / "nobody.schema.json").write_text(json.dumps(
            {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}))
        (d / "broken.schema.json").write_text('{"type": 5}')
        problems, _ = check_all(d, DEFAULT_ROOT, None)
        if not any(p.startswith("nobody.schema.json: no producer") for p in problems):
            failures.append(f"a schema without a producer was not reported: {problems}")
        if not any(p.startswith("broken.schema.json: not a valid JSON Schema") for p in problems):
            failures.append(f"an invalid schema was not reported: {problems}")
        if any(p.startswith("probe-machine") for p in problems):
            failures.append(f"the recorded machine goldens do not validate: {problems}")
    if not golden_documents(DEFAULT_ROOT, {json.dumps("gpulock.machine/1")}):
        failures.append("no recorded gpulock.machine/1 golden was found")
    for f in failures:
        print(f"FAIL: {f}")
    print("self-test: " + ("ok" if not failures else f"{len(failures)} failure(s)"))
    return 1 if failures else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpulock")
    ap.add_argument("--env", type=Path, help="the servers' KEY=VALUE file (servers.env)")
    ap.add_argument("--work", type=Path)
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if not (args.gpulock and args.env and args.work):
        ap.error("--gpulock, --env and --work are required")
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    world = World(args.gpulock, read_env(args.env), args.work.resolve())
    problems, validated = check_all(args.root / "docs" / "schemas", args.root, world)
    for p in problems:
        print(f"FAIL: {p}")
    if problems:
        print(f"{len(problems)} problem(s); outputs in {world.outputs}")
        return 1
    print(f"{validated} outputs validated against the schemas in docs/schemas/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
