#!/usr/bin/env python3
"""Issue 43: one fit rule. (machine, lock) pairs of real machines, each verdict and reason
written here by hand from ../shared/data (not computed by gpulock), and checked through the
three commands that answer "does this lock run on this machine":

  gpulock check --lock L --machine --driver D --gpu-arch A --format json   exit 0 / 1, drift code
  gpulock install --lock L --print-target --driver D --gpu-arch A --json   exit 0 / 1, "why"
  gpulock check --all-targets --machine --driver D --gpu-arch A            exit 0 / 1

Facts used (shared/data/pytorch-gpu-wheels.json):
- `cuda_drivers.toolkit_min_driver` (NVIDIA CUDA Toolkit release notes, Table 3): CUDA 11.8
  needs 520.61.05, 12.2 535.54.03, 12.4 550.54.14, 12.6 560.28.03, 12.8 570.26, 12.9
  575.51.03, 13.0 580.65.06 (the lock's `min-driver` is that row, as resolve records it).
- `gpu_arch_lists.entries` (TORCH_CUDA_ARCH_LIST of the release builds):
  torch 2.1-2.5 cu118 "3.7;5.0;6.0;7.0;7.5;8.0;8.6;9.0"; 2.4-2.5 cu124 "5.0;6.0;7.0;7.5;8.0;8.6;9.0";
  2.8-2.13 cu126 "5.0;6.0;7.0;7.5;8.0;8.6;9.0"; 2.8.0 cu128 "7.5;8.0;8.6;9.0;10.0;12.0";
  2.9-2.11 cu128 "7.0;7.5;8.0;8.6;9.0;10.0;12.0"; 2.9+ cu129 "7.0;...;12.0+PTX";
  2.9+ cu130 "7.5;8.0;8.6;9.0;10.0;12.0+PTX"; aarch64 cu130 "8.0;9.0;10.0;11.0;12.0+PTX".
  A build runs on a GPU X.Y with SASS X.Z (Z <= Y) or PTX for an arch <= X.Y (cuda-archs.md).
- shared/data/gpu-stacks.md: cuDNN 9.11 and newer dropped compute capability below 7.5.
- GPUs (gpu-names.md): GTX 1080 6.1, P100 6.0, V100 7.0, T4 7.5, A100 8.0, RTX 3090 8.6,
  RTX 4090 8.9, H100 9.0, B200 10.0, RTX 5090 12.0. Branches: Blackwell from R570, Pascal and
  Volta up to R580 (the last branch for them), so those machines are what the pairs use.

Usage: fit_matrix_test.py GPULOCK WORKDIR
"""
import json
import os
import platform
import shutil
import subprocess
import sys

# name -> (torch version, CUDA, min driver, platform tag, extra packages, compat, recorded archs)
LOCKS = {
    "cu118": ("2.5.1+cu118", "11.8", "520.61.05", "manylinux_2_28_x86_64", [], "strict", ["sm_80"]),
    "cu124": ("2.5.1+cu124", "12.4", "550.54.14", "manylinux_2_28_x86_64", [], "strict", ["sm_90"]),
    "cu126": ("2.9.0+cu126", "12.6", "560.28.03", "manylinux_2_28_x86_64", [], "strict", ["sm_86"]),
    "cu126-cudnn913": ("2.9.0+cu126", "12.6", "560.28.03", "manylinux_2_28_x86_64",
                       [("nvidia-cudnn-cu12", "9.13.0.50")], "strict", ["sm_86"]),
    # torch cu126 with an unpinned cuBLAS of CUDA 12.9 (its version names the CUDA release): the
    # lock needs CUDA 12.9 (575.51.03), its build is CUDA 12.6 (issue 43's Pascal example).
    "cu126-cublas129": ("2.9.0+cu126", "12.9", "575.51.03", "manylinux_2_28_x86_64",
                        [("nvidia-cublas-cu12", "12.9.1.4")], "strict", ["sm_61"]),
    "cu128": ("2.9.0+cu128", "12.8", "570.26", "manylinux_2_28_x86_64", [], "strict", ["sm_89"]),
    "cu128-28": ("2.8.0+cu128", "12.8", "570.26", "manylinux_2_28_x86_64", [], "strict", ["sm_89"]),
    # --cuda-compat minor: CUDA 12.x on the 12 floor (525.60.13, Table 2 of the release notes).
    "cu128-minor": ("2.9.0+cu128", "12.8", "525.60.13", "manylinux_2_28_x86_64", [], "minor",
                    ["sm_80"]),
    "cu129": ("2.9.0+cu129", "12.9", "575.51.03", "manylinux_2_28_x86_64", [], "strict", ["sm_120"]),
    "cu130": ("2.9.0+cu130", "13.0", "580.65.06", "manylinux_2_28_x86_64", [], "strict", ["sm_90"]),
    "cu130-arm": ("2.9.0+cu130", "13.0", "580.65.06", "manylinux_2_28_aarch64", [], "strict",
                  ["sm_90"]),
}

FITS = None
# (machine, driver, GPUs, lock, expected): expected is FITS or the reason, as the drift code
# check reports and a phrase install's "why" holds.
DRIVER = ("driver-below-minimum", "supports CUDA <=")
KERNELS = ("gpu-arch-unsupported", "has no kernels for this machine's GPU")
CUDNN = ("gpu-arch-cudnn", "does not support this machine's GPU")
PLATFORM = ("platform-mismatch", "aarch64")
PAIRS = [
    # Pascal: the cu118 build carries 6.0 SASS, which runs on 6.1; cu124 needs driver 550.
    ("GTX 1080 on R535", "535.104.05", ["sm_61"], "cu118", FITS),
    ("GTX 1080 on R535", "535.104.05", ["sm_61"], "cu124", DRIVER),
    ("P100 on R580", "580.65.06", ["sm_60"], "cu126", FITS),
    ("P100 on R580", "580.65.06", ["sm_60"], "cu128", KERNELS),  # 2.9 cu128 starts at 7.0
    ("P100 on R580", "580.65.06", ["sm_60"], "cu130", KERNELS),  # 7.5 and up, PTX 12.0 only
    ("GTX 1080 on R580", "580.95.05", ["sm_61"], "cu126-cudnn913", CUDNN),  # cuDNN 9.13: >= 7.5
    ("GTX 1080 on R580", "580.65.06", ["sm_61"], "cu126-cublas129", FITS),
    ("GTX 1080 on R570", "570.124.06", ["sm_61"], "cu126-cublas129", DRIVER),  # 12.9: 575.51.03
    # Volta: 2.9's cu128 build has 7.0; 2.8's does not; cu130 starts at 7.5.
    ("V100 on R580", "580.95.05", ["sm_70"], "cu128", FITS),
    ("V100 on R580", "580.95.05", ["sm_70"], "cu128-28", KERNELS),
    ("V100 on R580", "580.95.05", ["sm_70"], "cu130", KERNELS),
    ("V100 on R470", "470.82.01", ["sm_70"], "cu118", DRIVER),  # 11.8 needs 520.61.05
    ("T4 on R550", "550.54.15", ["sm_75"], "cu124", FITS),
    ("T4 on R550", "550.54.15", ["sm_75"], "cu126", DRIVER),  # 12.6 needs 560.28.03
    ("A100 on R535", "535.104.05", ["sm_80"], "cu118", FITS),
    # minor-version compatibility: a CUDA 12.8 build on a CUDA 12.2 driver of the 12 family.
    ("A100 on R535", "535.104.05", ["sm_80"], "cu128-minor", FITS),
    ("RTX 3090 on R560", "560.35.03", ["sm_86"], "cu126", FITS),
    # A lock made on an sm_89 machine runs on sm_86 (8.6 SASS): the GPUs it was made for are a
    # record (issue 43's first example).
    ("RTX 3090 on R570", "570.124.06", ["sm_86"], "cu128", FITS),
    ("RTX 4090 on R570", "570.124.06", ["sm_89"], "cu128", FITS),  # 8.9 runs 8.6 SASS
    ("RTX 4090 on R570", "570.124.06", ["sm_89"], "cu130", DRIVER),  # 13.0 needs 580.65.06
    ("H100 on R580", "580.65.06", ["sm_90"], "cu130", FITS),
    ("B200 on R570", "570.26", ["sm_100"], "cu128", FITS),
    ("B200 on R570", "570.26", ["sm_100"], "cu126", KERNELS),  # up to 9.0, no PTX
    ("RTX 5090 on R575", "575.57.08", ["sm_120"], "cu129", FITS),
    ("RTX 5090 on R575", "575.57.08", ["sm_120"], "cu124", KERNELS),  # driver fine, no 12.0
    ("RTX 5090 on R610", "610.43.02", ["sm_120"], "cu130", FITS),
    ("A100 on R610", "610.43.02", ["sm_80"], "cu118", FITS),
    ("T4 + RTX 3090 on R560", "560.35.03", ["sm_75", "sm_86"], "cu126", FITS),
    ("GTX 1080 + RTX 3090 on R580", "580.65.06", ["sm_61", "sm_86"], "cu128", KERNELS),
]
if platform.machine() == "x86_64":
    # This host's CPU is the machine's: an aarch64 lock does not run here.
    PAIRS.append(("H100 on R580", "580.65.06", ["sm_90"], "cu130-arm", PLATFORM))

WHEEL = ('  {{ name = "{file}", url = "https://example.invalid/{file}", size = 1, '
         'hashes = {{ sha256 = "{sha}" }} }},\n')


def package(name, version, tag):
    file = f"{name.replace('-', '_')}-{version}-cp311-cp311-{tag}.whl"
    return (f'[[packages]]\nname = "{name}"\nversion = "{version}"\n'
            f'index = "https://example.invalid/simple/"\nwheels = [\n'
            + WHEEL.format(file=file, sha="0" * 64) + "]\n\n")


def lock_text(name):
    torch, cuda, min_driver, tag, extra, compat, archs = LOCKS[name]
    cpu = "aarch64" if tag.endswith("aarch64") else "x86_64"
    body = ('lock-version = "1.0"\ncreated-by = "gpulock 0.1.0"\n'
            f'environments = ["sys_platform == \\"linux\\" and platform_machine == \\"{cpu}\\""]\n'
            'requires-python = "==3.11.*"\n\n')
    for pkg, version in sorted(extra + [("torch", torch)]):
        body += package(pkg, version, tag)
    archs_toml = ", ".join(f'"{a}"' for a in archs)
    body += ('[tool.gpulock]\nschema = 1\n\n'
             f'[tool.gpulock.target]\npython = "3.11"\nplatform = "{tag}"\n\n'
             f'[tool.gpulock.gpu]\ndriver = "{min_driver}"\nmethod = "override"\n'
             f'compat = "{compat}"\narchs = [{archs_toml}]\nvariant = "{torch.split("+")[1]}"\n'
             f'cuda = "{cuda}"\nmin-driver = "{min_driver}"\n')
    return body


def run(argv, cwd):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPULOCK_", "PIP_", "UV_"))}
    env["NO_COLOR"] = "1"
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def main():
    exe, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for name in LOCKS:
        d = os.path.join(work, name)
        os.makedirs(d)
        with open(os.path.join(d, f"pylock.{name}.toml"), "w") as fh:
            fh.write(lock_text(name))
        # One declared target whose lock is this one (check --all-targets reads the declaration).
        with open(os.path.join(d, "gpulock.toml"), "w") as fh:
            _, _, min_driver, tag, _, compat, archs = LOCKS[name]
            archs_toml = ", ".join(f'"{a}"' for a in archs)
            fh.write(f'[targets.{name}]\npython-version = "3.11"\nplatform = "{tag}"\n'
                     f'driver = "{min_driver}"\ngpu-arch = [{archs_toml}]\n'
                     f'cuda-compat = "{compat}"\n')
    failures = []
    for label, driver, archs, lock, expected in PAIRS:
        d = os.path.join(work, lock)
        path = f"pylock.{lock}.toml"
        machine = ["--driver", driver, "--gpu-arch", ",".join(archs)]
        what = f"{label} ({driver}, {','.join(archs)}) x {lock}"
        want = 0 if expected is FITS else 1

        check = run([exe, "check", "--lock", path, "--machine", "--format", "json"] + machine, d)
        codes = []
        try:
            report = json.loads(check.stdout)
            codes = [x.get("kind") for x in report.get("drifts", [])
                     if x.get("severity", "error") == "error"]
        except ValueError:
            failures.append(f"{what}: check printed no JSON\n{check.stdout}{check.stderr}")
        if check.returncode != want:
            failures.append(f"{what}: check exit {check.returncode}, expected {want}\n"
                            f"{check.stdout}{check.stderr}")
        elif expected is not FITS and expected[0] not in codes:
            failures.append(f"{what}: check reported {codes}, expected {expected[0]}")

        install = run([exe, "install", "--lock", path, "--print-target", "--json", "--python",
                       "/usr/bin/python3"] + machine, d)
        why = ""
        try:
            locks = json.loads(install.stdout)["locks"]
            why = locks[0]["why"] if locks else ""
        except (ValueError, KeyError):
            failures.append(f"{what}: install printed no JSON\n{install.stdout}{install.stderr}")
        if install.returncode != want:
            failures.append(f"{what}: install --print-target exit {install.returncode}, "
                            f"expected {want}: {why}\n{install.stderr}")
        elif expected is not FITS and expected[1] not in why:
            failures.append(f"{what}: install says '{why}', expected '{expected[1]}'")

        targets = run([exe, "check", "--all-targets", "--machine"] + machine, d)
        if targets.returncode != want:
            failures.append(f"{what}: check --all-targets --machine exit {targets.returncode}, "
                            f"expected {want}\n{targets.stdout}{targets.stderr}")
    # The CUDA 12.6 build is not called a CUDA 12.9 build: the package that raised it is named.
    d = os.path.join(work, "cu126-cublas129")
    said = run([exe, "install", "--lock", "pylock.cu126-cublas129.toml", "--print-target",
                "--python", "/usr/bin/python3", "--driver", "580.65.06", "--gpu-arch", "sm_61"], d)
    phrase = ("fits: a CUDA 12.6 build whose nvidia-cublas-cu12 12.9.1.4 needs CUDA 12.9, and "
              "driver 580.65.06 supports CUDA <= 13.0")
    if phrase not in said.stdout:
        failures.append(f"install --print-target does not say '{phrase}':\n{said.stdout}")
    check = run([exe, "check", "--lock", "pylock.cu126-cublas129.toml", "--machine", "--driver",
                 "580.65.06", "--gpu-arch", "sm_61"], d)
    if "CUDA 12.9 (for nvidia-cublas-cu12 12.9.1.4), variant cu126" not in check.stdout:
        failures.append(f"check --machine does not name what raised the CUDA:\n{check.stdout}")
    for f in failures:
        print("FAIL", f)
    print(f"{len(PAIRS)} (machine, lock) pairs, 3 commands each: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
