#!/usr/bin/env python3
"""On a machine with an NVIDIA GPU: `gpulock probe --machine` finds the driver, a CUDA ceiling
and every GPU with its architecture, and agrees with nvidia-smi where that is installed.

Usage: gpu_machine_test.py GPULOCK_EXE     (ctest label gpu; exit 0 = pass)
"""
import json
import re
import shutil
import subprocess
import sys


def fail(message, report=None):
    print(f"FAIL: {message}")
    if report is not None:
        print(json.dumps(report, indent=2))
    sys.exit(1)


def main():
    exe = sys.argv[1]
    run = subprocess.run([exe, "probe", "--machine", "--json"], capture_output=True, text=True,
                         timeout=120)
    if run.returncode != 0:
        fail(f"exit status {run.returncode}: {run.stderr}")
    report = json.loads(run.stdout)
    if report["status"] != "gpu":
        fail(f"status {report['status']!r}, expected 'gpu': {report['verdict']}", report)
    driver = report["driver"]
    ceiling = report["cuda_ceiling"]
    if driver is None or not re.fullmatch(r"\d+(\.\d+){1,3}", driver["version"]):
        fail("no driver version", report)
    if ceiling is None or not re.fullmatch(r"\d+\.\d", ceiling["version"]):
        fail("no CUDA ceiling", report)
    if ceiling["method"] not in ("libcuda", "nvml"):
        fail(f"the ceiling came from {ceiling['method']}, expected libcuda or nvml", report)
    if not report["gpus"]:
        fail("no GPU listed", report)
    for gpu in report["gpus"]:
        if not gpu["arch"] or not re.fullmatch(r"sm_\d+", gpu["arch"]):
            fail(f"GPU {gpu['index']} has no architecture", report)
    archs = sorted({g["arch"] for g in report["gpus"]})
    if report["gpu_archs"] is None or sorted(report["gpu_archs"]["archs"]) != archs:
        fail("gpu_archs is not the set of every GPU's arch", report)

    smi = shutil.which("nvidia-smi")
    if smi:
        out = subprocess.run([smi, "--query-gpu=driver_version,compute_cap,uuid",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=60)
        if out.returncode == 0:
            lines = [l.split(", ") for l in out.stdout.strip().splitlines()]
            if lines[0][0] != driver["version"]:
                fail(f"nvidia-smi says driver {lines[0][0]}, gpulock {driver['version']}", report)
            smi_archs = sorted({"sm_" + l[1].replace(".", "") for l in lines})
            if smi_archs != archs:
                fail(f"nvidia-smi says archs {smi_archs}, gpulock {archs}", report)
            if len(lines) != len(report["gpus"]):
                fail(f"nvidia-smi lists {len(lines)} GPUs, gpulock {len(report['gpus'])}", report)

    text = subprocess.run([exe, "probe", "--machine"], capture_output=True, text=True, timeout=120)
    if text.returncode != 0 or "gpu: NVIDIA driver" not in text.stdout:
        fail(f"text report: exit {text.returncode}\n{text.stdout}{text.stderr}")
    print(text.stdout)
    print("ok")


if __name__ == "__main__":
    main()
