#!/usr/bin/env python3
"""`gpulock fleet check` at scale (issue 45 item 6): a generated `kubectl get nodes -o json` of
N nodes (default 10,000; about 6 KB a node, as real node objects with GPU Feature Discovery
labels, conditions and images are) against five locks, timed with its peak memory, beside the
loop it replaces: `gpulock check --lock L --machine --driver D --gpu-arch A --format json`
once per (node, lock), timed on 100 nodes and scaled linearly to N (said so in the output).

    bench/fleet_bench.py GPULOCK [--nodes 10000] [--loop-nodes 100] [--work DIR]

Goal: the fleet check under 1 s, peak RSS at most 4 bytes per input byte (measure a release
build: `cmake --preset release && cmake --build build/release --target gpulock`).
Python standard library and /usr/bin/time only.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "gpu"))
from fit_matrix_test import lock_text  # noqa: E402

LOCKS = ["cu118", "cu124", "cu126", "cu128", "cu130"]
PRODUCTS = [("NVIDIA-A100-SXM4-80GB", 8, 0), ("NVIDIA-H100-80GB-HBM3", 9, 0), ("Tesla-T4", 7, 5),
            ("NVIDIA-L4", 8, 9), ("NVIDIA-RTX-A6000", 8, 6)]
DRIVERS = [("470.82.01", "11.4"), ("535.104.05", "12.2"), ("550.54.15", "12.4"),
           ("570.86.15", "12.8"), ("580.65.06", "13.0")]


def node(i: int, rng: random.Random) -> dict:
    product, major, minor = rng.choice(PRODUCTS)
    driver, ceiling = rng.choice(DRIVERS)
    name = f"gpu-node-{i:05d}"
    labels = {f"feature.node.kubernetes.io/cpu-cpuid.{k}": "true"
              for k in ["ADX", "AESNI", "AVX", "AVX2", "AVX512BW", "AVX512F", "FMA3", "SHA"]}
    labels.update({
        "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "kubernetes.io/hostname": name,
        "nvidia.com/gpu.present": "true", "nvidia.com/cuda.driver-version.full": driver,
        "nvidia.com/cuda.driver.major": driver.split(".")[0],
        "nvidia.com/cuda.runtime-version.full": ceiling,
        "nvidia.com/cuda.runtime-version.major": ceiling.split(".")[0],
        "nvidia.com/cuda.runtime-version.minor": ceiling.split(".")[1],
        "nvidia.com/gpu.compute.major": str(major), "nvidia.com/gpu.compute.minor": str(minor),
        "nvidia.com/gpu.product": product, "nvidia.com/gpu.count": "8",
        "nvidia.com/mig.capable": "false", "nvidia.com/gpu.memory": "81920"})
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels, "uid": f"{i:032x}",
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                     "nfd.node.kubernetes.io/feature-labels": ",".join(labels)}},
        "spec": {"taints": [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}]},
        "status": {
            "capacity": {"cpu": "128", "memory": "1056687272Ki", "nvidia.com/gpu": "8"},
            "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux",
                         "kernelVersion": "5.15.0-1057-aws", "kubeletVersion": "v1.31.2"},
            "conditions": [{"type": t, "status": "False", "reason": f"Kubelet{t}",
                            "message": "kubelet has sufficient resources",
                            "lastHeartbeatTime": "2026-12-01T00:00:00Z"}
                           for t in ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]],
            "images": [{"names": [f"registry.example/team/image-{j}@sha256:{j:064x}",
                                  f"registry.example/team/image-{j}:v{j}"],
                        "sizeBytes": 1000000 * (j + 1)} for j in range(12)]}}


def timed(argv: list[str], cwd: Path) -> tuple[float, int, int]:
    """Wall seconds, peak RSS in KiB and the exit status of one run."""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], cwd=cwd, capture_output=True,
                       text=True, env={**os.environ, "NO_COLOR": "1"})
    wall = time.perf_counter() - t0
    rss = int(p.stderr.strip().splitlines()[-1])
    return wall, rss, p.returncode


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("gpulock")
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--loop-nodes", type=int, default=100)
    ap.add_argument("--work", type=Path, default=Path("/tmp/gpulock-fleet-bench"))
    args = ap.parse_args()
    exe = str(Path(args.gpulock).resolve())
    args.work.mkdir(parents=True, exist_ok=True)
    for name in LOCKS:
        (args.work / f"pylock.{name}.toml").write_text(lock_text(name))
    rng = random.Random(45)
    nodes = [node(i, rng) for i in range(args.nodes)]
    inventory = args.work / "nodes.json"
    inventory.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}))
    size = inventory.stat().st_size
    runs = [timed([exe, "fleet", "check", "--inventory", str(inventory), "--json"], args.work)
            for _ in range(3)]
    wall = min(r[0] for r in runs)
    rss = min(r[1] for r in runs)
    print(f"fleet check: {args.nodes} nodes ({size / 1e6:.1f} MB) x {len(LOCKS)} locks: "
          f"{wall:.3f} s (best of 3), peak RSS {rss / 1024:.1f} MiB = "
          f"{rss * 1024 / size:.2f} bytes per input byte")
    loop = 0.0
    for n in nodes[:args.loop_nodes]:
        labels = n["metadata"]["labels"]
        arch = f"sm_{labels['nvidia.com/gpu.compute.major']}{labels['nvidia.com/gpu.compute.minor']}"
        for name in LOCKS:
            loop += timed([exe, "check", "--lock", f"pylock.{name}.toml", "--machine", "--driver",
                           labels["nvidia.com/cuda.driver-version.full"], "--gpu-arch", arch,
                           "--format", "json"], args.work)[0]
    scaled = loop * args.nodes / args.loop_nodes
    print(f"check --machine loop: {args.loop_nodes} nodes x {len(LOCKS)} locks: {loop:.2f} s; "
          f"scaled linearly to {args.nodes} nodes: {scaled:.0f} s (estimate, not run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
