#!/usr/bin/env python3
"""The probe and cuDNN's sub-libraries against the cuDNN file table (issue 41 item 6), through
the real gpulock binary on site-packages directories laid out here with the fake cuDNN libraries
(fixtures/fake_cudnn/, tests/envprobe/CMakeLists.txt):

 (a) a cuDNN 9.21 directory copied by hand (no RECORD lists its files, or only a vendoring
     package's RECORD lists libcudnn.so.9) without libcudnn_engines_tensor_ir.so.9, which 9.21
     ships: a failure, read from the directory itself, whose hint never says "reinstall";
 (b) the nvidia-cudnn-cu13 9.20.0.48 wheel, which has no libcudnn_engines_tensor_ir.so.9 though
     its libcudnn_graph looks for it, and no other copy: not a failure, one info line;
 (c) the same with another release's copy on LD_LIBRARY_PATH, or copied into the wheel's
     directory: one failure naming the copy's path and version, with both ways out (remove it
     from the search path, or a build whose cuDNN pin is >= 9.21) and no "reinstall", printed
     once in the text and once in --json.

    sublibraries_test.py --gpulock EXE --work DIR
    (ENVPROBE_CUDNN920: the 9.20.0.48 wheel's nvidia/cudnn/lib; ENVPROBE_CUDNN921: a 9.21.0 set)
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "security"))
from install_attack import Gpulock, check, run  # noqa: E402

TIR = "libcudnn_engines_tensor_ir.so.9"
EIGHT = ["libcudnn.so.9", "libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9",
         "libcudnn_adv.so.9", "libcudnn_engines_precompiled.so.9",
         "libcudnn_engines_runtime_compiled.so.9", "libcudnn_heuristic.so.9"]


def dist_info(site: Path, name: str, version: str, files: list[str], extra: str = "") -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{extra}")
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in files) + f"{info.name}/METADATA,,\n")


def cudnn_site(work: Path, name: str, source: Path, files: list[str]) -> Path:
    site = work / name / "site-packages"
    lib = site / "nvidia" / "cudnn" / "lib"
    lib.mkdir(parents=True)
    for f in files:
        shutil.copy2(source / f, lib / f)
    return site


def verdict(out: str) -> str:
    return out[out.find("\nVerdict\n"):]


def probe(g: Gpulock, site: Path, llp: Path, json_out: bool = False):
    args = ["probe", "--site-packages", str(site)] + (["--json"] if json_out else [])
    return g.run(*args, env={"LD_LIBRARY_PATH": str(llp)})


def findings(p) -> list[dict]:
    try:
        return json.loads(p.out)["findings"]
    except (ValueError, KeyError):
        return []


def test(g: Gpulock, work: Path) -> None:
    c920 = Path(os.environ["ENVPROBE_CUDNN920"])
    c921 = Path(os.environ["ENVPROBE_CUDNN921"])
    (work / "root").mkdir()
    g.env.update({"GPULOCK_TEST_ROOT": str(work / "root"), "CUDA_VISIBLE_DEVICES": "",
                  "GPULOCK_PROBE_TIMEOUT_MS": "30000"})
    empty = work / "empty-lib"  # LD_LIBRARY_PATH with nothing in it
    empty.mkdir()

    # (a) cuDNN 9.21 copied by hand, without the tensor_ir file 9.21 ships.
    site = cudnn_site(work, "a-by-hand", c921, EIGHT)
    lib = site / "nvidia/cudnn/lib"
    p = probe(g, site, empty)
    v = verdict(p.out)
    check(p.returncode == 1, "(a) a 9.21 directory without RECORD and without tensor_ir: exit 1")
    check(f"fail: {TIR} is missing from {lib} and the loader finds no other copy" in v,
          "(a) the missing tensor_ir is a failure naming the directory")
    check("reinstall" not in v.replace("nothing to reinstall", ""),
          "(a) no wheel installed the directory: the hint does not say reinstall")
    check(f"put {TIR} of cuDNN 9.21.0 (the release of the other files) into {lib}" in v,
          "(a) the hint says which file of which release goes where")
    check(f"info: No RECORD lists the cuDNN files in {lib}" in v and
          "checks it as cuDNN 9.21.0 (from the cudnn_graph_version of libcudnn_graph.so.9)" in v,
          "(a) the probe says it read the directory itself, and the version it read")
    ids = [f["id"] for f in findings(probe(g, site, empty, json_out=True))]
    check(ids.count("sublibrary-missing") == 1 and "cudnn-unrecorded" in ids,
          "(a) --json: sublibrary-missing once, cudnn-unrecorded")

    # (a) vendored: a package's RECORD lists libcudnn.so.9 alone; the rest was copied in.
    site = cudnn_site(work, "a-vendored", c921, EIGHT)
    dist_info(site, "vendored-cudnn", "1.0", ["nvidia/cudnn/lib/libcudnn.so.9"])
    p = probe(g, site, empty)
    v = verdict(p.out)
    check(p.returncode == 1 and
          f"fail: vendored-cudnn 1.0 does not ship {TIR} (cuDNN 9.21.0 loads it)" in v,
          "(a) vendored layout: the tensor_ir 9.21 loads is missing (was: not listed, 'ok')")
    check("reinstalling it adds nothing" in v and "ok: the environment loads" not in v,
          "(a) vendored layout: no 'reinstall' way out, no ok")
    check("in no RECORD (vendored-cudnn 1.0 does not list them)" in v,
          "(a) vendored layout: the files no RECORD lists are named")

    # (b) the 9.20.0.48 wheel as published: no tensor_ir, no other copy.
    record = [f"nvidia/cudnn/lib/{f}" for f in EIGHT]
    site = cudnn_site(work, "b-wheel", c920, EIGHT)
    dist_info(site, "nvidia-cudnn-cu13", "9.20.0.48", record)
    p = probe(g, site, empty)
    v = verdict(p.out)
    check(p.returncode == 0 and "fail:" not in v and "ok: the environment loads" in v,
          "(b) 9.20 without tensor_ir and no other copy: not a failure")
    check(f"info: cuDNN 9.20.0 (nvidia-cudnn-cu13 9.20.0.48) has no {TIR}, which its "
          "libcudnn_graph.so.9 looks for (cuDNN 9.21 and newer ship it)" in v,
          "(b) one info line says 9.20 ships none and none loads in its place")
    check("reinstall" not in v, "(b) no 'reinstall'")
    ids = [f["id"] for f in findings(probe(g, site, empty, json_out=True))]
    check(ids.count("sublibrary-not-shipped") == 1, "(b) --json: sublibrary-not-shipped once")

    # (c) another release's tensor_ir on LD_LIBRARY_PATH (a 9.21.0 file, named by its version),
    # with a torch that pins the 9.20 wheel.
    site = cudnn_site(work, "c-foreign", c920, EIGHT)
    dist_info(site, "nvidia-cudnn-cu13", "9.20.0.48", record)
    dist_info(site, "torch", "2.12.1+cu130", ["torch/version.py"],
              "Requires-Dist: nvidia-cudnn-cu13==9.20.0.48; platform_system == \"Linux\"\n")
    (site / "torch").mkdir()
    (site / "torch/version.py").write_text("__version__ = '2.12.1+cu130'\ncuda = '13.0'\n")
    foreign = work / "other-cudnn"
    foreign.mkdir()
    shutil.copy2(c921 / TIR, foreign / (TIR + ".21.0"))
    os.symlink(TIR + ".21.0", foreign / TIR)
    p = probe(g, site, foreign)
    v = verdict(p.out)
    check(p.returncode == 1, "(c) a foreign tensor_ir reachable: exit 1")
    check(v.count(f"{TIR}.21.0 (9.21.0) through LD_LIBRARY_PATH") == 1 and v.count("fail:") == 1,
          "(c) one finding names the copy, printed once")
    check(f"the loader finds {foreign}/{TIR}.21.0 (9.21.0) through LD_LIBRARY_PATH {foreign}" in v,
          "(c) the finding names the copy's path, version and how the loader reaches it")
    check(f"remove {foreign} from LD_LIBRARY_PATH" in v and
          "use a torch build whose nvidia-cudnn-cu13 pin is 9.21 or newer" in v,
          "(c) both ways out: off the search path, or a build whose cuDNN pin is >= 9.21")
    check("reinstall" not in v, "(c) the wheel ships no such file: no 'reinstall'")
    j = probe(g, site, foreign, json_out=True)
    named = [f for f in findings(j) if str(foreign) in f["message"]]
    check(j.returncode == 1 and len(named) == 1 and named[0]["id"] == "sublibrary-foreign" and
          named[0]["severity"] == "fail",
          "(c) --json: one sublibrary-foreign finding names the copy")

    # (c) the same file copied into the wheel's own directory (its RECORD does not list it).
    site = cudnn_site(work, "c-copied-in", c920, EIGHT)
    dist_info(site, "nvidia-cudnn-cu13", "9.20.0.48", record)
    shutil.copy2(c921 / TIR, site / "nvidia/cudnn/lib" / TIR)
    p = probe(g, site, empty)
    v = verdict(p.out)
    check(p.returncode == 1 and
          f"remove {site}/nvidia/cudnn/lib/{TIR}, which nvidia-cudnn-cu13 9.20.0.48 does not ship"
          in v and "use a build whose cuDNN pin is 9.21 or newer" in v,
          "(c) a copy put into the 9.20 wheel's directory: a failure, remove it or a >= 9.21 build")


if __name__ == "__main__":
    sys.exit(run({"sublibraries": test}))
