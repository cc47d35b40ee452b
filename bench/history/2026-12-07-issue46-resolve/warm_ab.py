#!/usr/bin/env python3
"""Interleaved A/B timing of whole processes (issue 46 item 3): every round runs each variant
once, in a rotated order, so that the machine's load drifts over all of them alike.

    warm_ab.py ROUNDS NAME=ENV::CMD [NAME=ENV::CMD ...] [OUT.json]

ENV is `VAR:value,VAR:value` (or empty); CMD is a shell-quoted command line, or @FILE for a file
holding one. The file after `-o` in a command is removed before each of its runs
(gpulock resolve reads an existing lock's pins). Two untimed rounds first. Prints, per variant,
the median wall time, user + system CPU time and minor page faults (wait4's rusage)."""
import json
import os
import shlex
import statistics
import sys
import time

rounds = int(sys.argv[1])
specs = sys.argv[2:-1] if sys.argv[-1].endswith(".json") else sys.argv[2:]
variants = []
for spec in specs:
    name, rest = spec.split("=", 1)
    envs, cmd = rest.split("::", 1)
    argv = shlex.split(open(cmd[1:]).read() if cmd.startswith("@") else cmd)
    env = dict(os.environ)
    for kv in filter(None, envs.split(",")):
        k, v = kv.split(":", 1)
        env[k] = v
    out = argv[argv.index("-o") + 1] if "-o" in argv else None
    variants.append((name, argv, env, out))
res = {v[0]: {"wall_ms": [], "cpu_ms": [], "minflt": []} for v in variants}
for r in range(rounds + 2):
    k = r % len(variants)
    for name, argv, env, out in variants[k:] + variants[:k]:
        if out and os.path.exists(out):
            os.unlink(out)
        t = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, env,
                             file_actions=[(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0)])
        _, status, ru = os.wait4(pid, 0)
        wall = time.perf_counter() - t
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{name} exited {os.waitstatus_to_exitcode(status)}")
        if r < 2:
            continue
        res[name]["wall_ms"].append(wall * 1000)
        res[name]["cpu_ms"].append((ru.ru_utime + ru.ru_stime) * 1000)
        res[name]["minflt"].append(ru.ru_minflt)
for name, d in res.items():
    w = sorted(d["wall_ms"])
    print(f"{name:28} wall median {statistics.median(w):7.2f} ms (min {w[0]:6.2f}, p90 "
          f"{w[int(len(w) * 0.9)]:6.2f})  cpu {statistics.median(d['cpu_ms']):6.2f} ms  "
          f"minflt {statistics.median(d['minflt']):5.0f}  n={len(w)}")
if sys.argv[-1].endswith(".json"):
    with open(sys.argv[-1], "w") as f:
        json.dump(res, f)
