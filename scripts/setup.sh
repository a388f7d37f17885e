#!/usr/bin/env bash
# Installs what is missing on Debian 12 with the CUDA toolkit, builds (Release), and runs a job:
#   scripts/setup.sh run    prewarm the default deployment's kernels (dsv4-flash-tp8) into the
#                         default cache; on a machine with a GPU, also check them against the
#                         CPU reference
#   scripts/setup.sh test   run every test (GPU tests skip without a GPU), then each fuzz target
#                         for 30 seconds (scripts/fuzz.sh, docs/fuzzing.md)
# Idempotent: a second run installs nothing and rebuilds nothing that is up to date.
set -euo pipefail
cd "$(dirname "$0")/.."
job=${1:-}
if [[ "$job" != run && "$job" != test ]]; then
  echo "usage: scripts/setup.sh run|test" >&2
  exit 2
fi

packages=(cmake ninja-build g++ pkg-config libfmt-dev libxxhash-dev libsqlite3-dev sqlite3
          libgtest-dev libgmock-dev libcli11-dev nlohmann-json3-dev python3 python3-pytest
          python3-numpy python3-venv python3-setuptools python3-wheel clang libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [[ $(id -u) -ne 0 ]] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The CUDA toolkit (NVRTC and cuda.h; the driver is loaded at run time when present).
if [[ -z "${CUDAToolkit_ROOT:-}" ]]; then
  for root in /usr/local/cuda /usr/local/cuda-13.0 /usr/lib/cuda; do
    [[ -x "$root/bin/nvcc" || -e "$root/include/nvrtc.h" ]] && { export CUDAToolkit_ROOT=$root; break; }
  done
fi
[[ -e "${CUDAToolkit_ROOT:-/nonexistent}/include/nvrtc.h" ]] || { echo "no CUDA toolkit found (set CUDAToolkit_ROOT)" >&2; exit 1; }

[[ -f build/build.ninja ]] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCUDAToolkit_ROOT="$CUDAToolkit_ROOT" >/dev/null
cmake --build build

if [[ "$job" == test ]]; then
  ctest --test-dir build --output-on-failure -j "$(nproc)"
  exec scripts/fuzz.sh 30
fi

build/smla info
build/smla selftest
build/smla cache build --preset dsv4-flash-tp8
if build/smla info | grep -q '^GPU'; then
  build/smla check --preset dsv4-flash-tp8
fi
