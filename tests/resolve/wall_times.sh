#!/bin/sh
# Wall times of `gpulock resolve` on the fixture index, cold and warm cache (not a test: figures
# for the notes of issues 6 and 7). Use a release build:
#   cmake --preset release -B build/rel && cmake --build build/rel --target gpulock gpulock_fixtures
#   python3 tests/support/servers.py start --root build/rel/fixtures/index --state /tmp/s --env-file /tmp/s.env
#   tests/resolve/wall_times.sh build/rel/cli/gpulock /tmp/s.env [RUNS]
# Prints the median of RUNS (default 5) runs of each case, in milliseconds.
set -eu
exe=$1
envfile=$2
runs=${3:-5}
. "$envfile"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now_ms() { date +%s%3N; }

# case NAME ARGS...: cold (a fresh cache each run) and warm (the same, already filled cache).
case_times() {
  name=$1
  shift
  cold=""
  warm=""
  i=0
  while [ "$i" -lt "$runs" ]; do
    rm -rf "$work/cache" "$work/pylock.toml"  # an existing lock's pins would be preferences
    t0=$(now_ms)
    "$exe" resolve "$@" --cache-dir "$work/cache" -o "$work/pylock.toml" -q >/dev/null 2>"$work/err" ||
      { cat "$work/err"; exit 1; }
    t1=$(now_ms)
    rm -f "$work/pylock.toml"
    "$exe" resolve "$@" --cache-dir "$work/cache" -o "$work/pylock.toml" -q >/dev/null 2>"$work/err" ||
      { cat "$work/err"; exit 1; }
    t2=$(now_ms)
    cold="$cold $((t1 - t0))"
    warm="$warm $((t2 - t1))"
    i=$((i + 1))
  done
  n=$(grep -c '^\[\[packages\]\]' "$work/pylock.toml")
  median() { printf '%s\n' $1 | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  echo "$name ($n packages): cold $(median "$cold") ms, warm $(median "$warm") ms  (cold:$cold; warm:$warm)"
}

common="--python-version 3.11 --platform manylinux_2_28_x86_64 --index-url $PYPI_URL --torch-index-base $TORCH_INDEX_BASE"
# Issue 7: the torch family with --torch-backend auto (every variant index within the ceiling).
case_times "torch+torchvision+torchaudio, --torch-backend auto, driver 550" \
  torch torchvision torchaudio --torch-backend auto --driver 550.54.14 $common
case_times "torch+torchvision+torchaudio, --torch-backend auto, driver 580" \
  torch torchvision torchaudio --torch-backend auto --driver 580.65.06 $common
# Issue 6: about 30 packages from the PyPI-like index.
case_times "PyPI torch 2.13 + ordinary deps, driver 580" \
  torch torchvision torchaudio numpy opt-einsum optree jinja2 pillow fixture-markers --driver 580.65.06 $common
