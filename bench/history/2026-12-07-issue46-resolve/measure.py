#!/usr/bin/env python3
"""The benchmark job side by side with pip 26, as bench/run's `compare` section runs it (its Job,
hyperfine and pip environment), on an index bench/run generated and serves (issue 46 item 3).

    measure.py SRV_ENV WORK LABEL GPULOCK RUNS [--pip] [--cold]

SRV_ENV: the env file tests/support/servers.py wrote (bench/run's Servers); WORK: the job's
directory (caches); GPULOCK: the executable. Writes hyperfine JSON to WORK/results/LABEL-*.json:
`gpulock --version` and the warm resolve (2 warm-up runs; the output lock removed before each),
with --pip pip 26 (../shared/reference/pip, `install --dry-run --report`, 10 runs after one
warm-up), with --cold the cold runs (each tool's cache emptied before every run)."""
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
loader = importlib.machinery.SourceFileLoader("benchrun", str(ROOT / "bench/run"))
spec = importlib.util.spec_from_loader("benchrun", loader)
br = importlib.util.module_from_spec(spec)
loader.exec_module(br)

srv_env, work, label, exe, runs = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
srv = dict(line.split("=", 1) for line in Path(srv_env).read_text().splitlines() if "=" in line)
res = work / "results"
res.mkdir(parents=True, exist_ok=True)
env = br.pip_env()
job = br.Job(Path(exe), "python3", srv, work / "job")
c = job.path
pip26 = ["python3", str(br.PIP26)]
out = br.hyperfine([("gpulock --version", [exe, "--version"], None),
                    ("gpulock warm", job.gpulock(c("warm/gl-cache"), c("warm/gl.toml")),
                     ["rm", "-f", c("warm/gl.toml")])], res / f"{label}-warm.json", runs, 2, env)
if "--pip" in sys.argv:
    out += br.hyperfine([("pip26 warm", job.pip(c("warm/pip26-cache"), c("warm/pip26-report.json"), pip26),
                          None)], res / f"{label}-pip-warm.json", 10, 1, env)
if "--cold" in sys.argv:
    out += br.hyperfine([("gpulock cold", job.gpulock(c("cold/gl-cache"), c("cold/gl.toml")),
                          ["rm", "-rf", c("cold/gl-cache"), c("cold/gl.toml")])],
                        res / f"{label}-cold.json", runs, 0, env)
    if "--pip" in sys.argv:
        out += br.hyperfine([("pip26 cold", job.pip(c("cold/pip26-cache"), c("cold/pip26-report.json"), pip26),
                              ["rm", "-rf", c("cold/pip26-cache")])], res / f"{label}-pip-cold.json", 10, 0, env)
for r in out:
    t = sorted(r["times"])
    print(f"{label:8} {r['command']:18} median {r['median'] * 1000:9.2f} ms  min {t[0] * 1000:8.2f}  "
          f"max {t[-1] * 1000:8.2f}  n={len(t)}")
