#!/usr/bin/env python3
"""bench/install_scale/run --quick against this build (issue 46): it completes and its JSON has
the keys the history and bench/run read. Functional only: nothing is asserted about time.

Usage: install_scale_test.py --gpulock PATH --pip PIP_SRC|none --work DIR
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PHASES = ("cold", "warm", "noop", "change")
MEASURES = ("wall_s", "cpu_s", "peak_rss_mib", "written_mb")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpulock", required=True)
    ap.add_argument("--pip", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    results = os.path.join(args.work, "results.json")
    argv = [sys.executable, os.path.join(ROOT, "bench/install_scale/run"), "--quick", "--gpulock", args.gpulock,
            "--pip", args.pip, "--work-dir", args.work, "--results", results]
    print("$", " ".join(argv), flush=True)
    subprocess.run(argv, check=True)
    r = json.load(open(results))
    failures = []

    def need(cond, what):
        if not cond:
            failures.append(what)

    c = r["closure"]
    need(c["wheels"] >= 25 and c["files"] > 100, f"closure too small: {c['wheels']} wheels, {c['files']} files")
    need(1.7 < c["library_ratio"] < 2.3, f"libraries deflate {c['library_ratio']}:1, not about 2:1")
    tools = ["gpulock"] + ([] if args.pip == "none" else ["pip"])
    for tool in tools:
        for phase in PHASES:
            for m in MEASURES:
                need(isinstance(r[tool][phase].get(m), (int, float)), f"{tool}.{phase}.{m} missing")
    need(r["gpulock"]["warm"]["result_mb"] > 0, "gpulock's warm venv is empty")
    for k in ("warm_cp_al", "cold_unzip", "cold_sha256"):
        need("wall_s" in r["floors"][k], f"floors.{k} missing")
    for k in ("warm_vs_floor", "cold_vs_floor", "pip_vs_gpulock_warm", "pip_vs_gpulock_noop"):
        need(k in r["ratios"], f"ratios.{k} missing")
    need(any(cmd.startswith("cp -al") for cmd in r["commands"]), "the cp -al floor's command is not printed")
    need(any("unzip -q -o" in cmd for cmd in r["commands"]), "the unzip floor's command is not printed")
    need("| warm (cache full, new venv) |" in r["summary"], "the summary table has no warm row")
    # bench/install_scale/sweep --plot-only over this one run (issue 46 item 5): its data row and
    # its PNG (gnuplot-nox is in scripts/install-deps).
    sweep = os.path.join(args.work, "sweep")
    os.makedirs(sweep)
    shutil.copy(results, os.path.join(sweep, "scale-0.001.json"))
    argv = [sys.executable, os.path.join(ROOT, "bench/install_scale/sweep"), "--plot-only", "--out", sweep]
    print("$", " ".join(argv), flush=True)
    subprocess.run(argv, check=True)
    rows = [l.split() for l in open(os.path.join(sweep, "install_scale.dat")) if not l.startswith("#")]
    need(len(rows) == 1 and len(rows[0]) == 7, f"the sweep's data is not one row of 7 numbers: {rows}")
    need(rows and abs(float(rows[0][1]) - r["gpulock"]["cold"]["wall_s"]) < 0.001,
         "the sweep's gpulock cold time is not the run's")
    png = os.path.join(sweep, "install_scale.png")
    need(os.path.exists(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n", "the sweep drew no PNG")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        shutil.rmtree(args.work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
